"""Pruning (SPEC L1): deleting ended sessions for good, in batches.

:func:`plan_prune` picks the sessions; :func:`run_prune` deletes them. The plan never holds
active sessions (``ended_only``), pinned ones, or anything the store's ``PROTECTED_CTE``
protects (:mod:`hermes_core.store.lifecycle_queries`); a
session's delegate/subagent sessions go with it. Each batch is one write transaction that
deletes the sessions, their messages and their rows in both full-text indexes (through the
store's own delete path), so a crash at any moment leaves whole sessions or none.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_core.selection.filters import SessionFilter

from .lock import LifecycleLock

if TYPE_CHECKING:
    from hermes_core.store.protocol import LifecycleQueries

DEFAULT_IDLE_DAYS = 90
"""A bare ``hermes sessions prune`` deletes ended sessions idle at least this long."""
BATCH_SESSIONS = 200
"""At most this many matched sessions per transaction…"""
BATCH_MESSAGES = 20_000
"""…and at most about this many messages (a transaction holds the write lock)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A session the plan would delete (delegates not included)."""

    id: str
    title: str | None
    last_active_at: float
    message_count: int


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """What a prune would delete, and what it leaves alone."""

    candidates: list[Candidate]
    """Oldest activity first."""
    delegate_count: int
    """Delegate/subagent sessions that go with the candidates."""
    protected_count: int
    """Matching ended sessions kept because they are pinned or protected."""
    active_count: int
    """Matching sessions still running (never pruned)."""

    @property
    def oldest(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    @property
    def newest(self) -> Candidate | None:
        return self.candidates[-1] if self.candidates else None

    @property
    def message_count(self) -> int:
        return sum(c.message_count for c in self.candidates)


def prune_selection(
    selection: SessionFilter, *, include_archived: bool, now: float | None = None
) -> SessionFilter:
    """The selection a prune uses: ended sessions only, archived ones only when asked, and —
    when no filter was given at all — idle for :data:`DEFAULT_IDLE_DAYS` days or more."""
    scoped = dataclasses.replace(selection, ended_only=True, include_archived=include_archived)
    if not selection.has_attribute_filters:
        moment = time.time() if now is None else now
        scoped = dataclasses.replace(scoped, older_than=moment - DEFAULT_IDLE_DAYS * 86_400)
    return scoped


def plan_prune(lifecycle: LifecycleQueries, selection: SessionFilter) -> PrunePlan:
    """The sessions ``selection`` (already scoped, see :func:`prune_selection`) would delete
    (``lifecycle``: ``store.lifecycle``)."""
    rows = lifecycle.prune_rows(selection)
    candidates = [Candidate(r[0], r[1], r[2], r[3]) for r in rows if not r[4]]
    protected = sum(1 for r in rows if r[4])
    active = lifecycle.count_active(dataclasses.replace(selection, ended_only=False))
    chosen = [c.id for c in candidates]
    delegates = len(lifecycle.with_delegates(chosen)) - len(chosen) if chosen else 0
    return PrunePlan(candidates, delegates, protected, active)


def batches(candidates: Sequence[Candidate]) -> Iterator[list[str]]:
    """Candidate ids in batches bounded by session and message counts."""
    batch: list[str] = []
    messages = 0
    for candidate in candidates:
        if batch and (
            len(batch) >= BATCH_SESSIONS or messages + candidate.message_count > BATCH_MESSAGES
        ):
            yield batch
            batch, messages = [], 0
        batch.append(candidate.id)
        messages += candidate.message_count
    if batch:
        yield batch


@dataclass(frozen=True, slots=True)
class PruneProgress:
    """Reported after each committed batch."""

    batch: int
    deleted: int
    """Sessions deleted so far (delegates included)."""
    done_candidates: int
    total_candidates: int


def run_prune(
    lifecycle: LifecycleQueries,
    plan: PrunePlan,
    lock: LifecycleLock,
    *,
    on_batch: Callable[[PruneProgress], None] | None = None,
) -> int:
    """Delete the plan's sessions (and their delegates) batch by batch; returns how many
    sessions were deleted. Each batch re-checks its sessions under the write lock, so one
    pinned or resumed since the plan is kept."""
    deleted = 0
    done = 0
    for number, batch in enumerate(batches(plan.candidates), start=1):
        with lifecycle.transaction() as db:
            lock.renew(db)
            doomed = db.with_delegates(db.still_eligible(batch))
            if doomed:
                deleted += db.delete_sessions(doomed)
        done += len(batch)
        if on_batch is not None:
            on_batch(PruneProgress(number, deleted, done, len(plan.candidates)))
    return deleted
