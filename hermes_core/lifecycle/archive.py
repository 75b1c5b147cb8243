"""Archiving (SPEC L2, L2b): hiding sessions from listings without deleting anything.

An archived session keeps its messages and stays searchable; ``list`` (and the pickers built
on it) leave it out until it is unarchived. Archiving takes ended sessions only and never a
pinned one, nor any member of a compression lineage holding a pinned session.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_core.selection.filters import SessionFilter

if TYPE_CHECKING:
    from hermes_core.store.protocol import LifecycleQueries


@dataclass(frozen=True, slots=True)
class ArchiveMatch:
    id: str
    title: str | None
    last_active_at: float
    message_count: int


@dataclass(frozen=True, slots=True)
class ArchivePlan:
    matches: list[ArchiveMatch]
    """Oldest activity first."""
    pinned_count: int
    """Matching sessions left alone because they are pinned (or in a pinned lineage)."""


def archive_selection(selection: SessionFilter) -> SessionFilter:
    """Ended sessions not archived yet."""
    return dataclasses.replace(selection, ended_only=True, include_archived=False)


def plan_archive(lifecycle: LifecycleQueries, selection: SessionFilter) -> ArchivePlan:
    """The sessions ``selection`` (scoped with :func:`archive_selection`) would archive."""
    rows = lifecycle.archive_rows(selection)
    matches = [ArchiveMatch(r[0], r[1], r[2], r[3]) for r in rows if r[4]]
    return ArchivePlan(matches, sum(1 for r in rows if not r[4]))


def archive(lifecycle: LifecycleQueries, session_ids: list[str]) -> int:
    """Archive these sessions in one transaction, re-checking each (ended, not pinned, not
    archived yet); returns how many were archived."""
    if not session_ids:
        return 0
    return lifecycle.archive(session_ids)


def archived_matching(lifecycle: LifecycleQueries, selection: SessionFilter) -> list[str]:
    """Ids of archived sessions matching ``selection`` (for ``unarchive`` with filters)."""
    return lifecycle.archived_ids(dataclasses.replace(selection, include_archived=True))


def unarchive(lifecycle: LifecycleQueries, session_ids: list[str]) -> int:
    """Bring sessions back into listings; returns how many changed."""
    if not session_ids:
        return 0
    return lifecycle.unarchive(session_ids)


def archive_stale(
    lifecycle: LifecycleQueries, idle_days: int, *, now: float | None = None
) -> int:
    """The auto-archive sweep: archive ended sessions idle for ``idle_days`` days or more;
    pinned sessions are exempt. Returns how many were archived."""
    moment = time.time() if now is None else now
    selection = archive_selection(SessionFilter(older_than=moment - idle_days * 86_400))
    plan = plan_archive(lifecycle, selection)
    return archive(lifecycle, [m.id for m in plan.matches])
