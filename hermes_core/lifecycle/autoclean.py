"""The automatic clean-up (SPEC L2b, L3), run at the start of ``hermes sessions`` commands
and of long-lived commands (chat, gateway) through :func:`run_auto_clean`.

* Settings: ``sessions.auto_prune`` (off), ``sessions.retention_days`` (90),
  ``sessions.vacuum_after_prune`` (on), ``sessions.min_vacuum_interval_days`` (30),
  ``sessions.min_interval_hours`` (24), ``sessions.auto_archive`` (off),
  ``sessions.auto_archive_idle_days`` (30).
* With both switches off nothing is read. Otherwise the interval check is one read of
  ``state_meta``; when something is due, the last-run times are re-read, stamped and the
  lifecycle lock taken in one ``BEGIN IMMEDIATE`` transaction, so of several processes starting
  together exactly one runs and the others see a fresh stamp. The stamp is the start time: a
  run that fails is not retried before the interval is over.
* The prune deletes ended sessions idle ``retention_days`` or more, archived ones included
  (archiving hides, retention deletes); pinned sessions and their lineages are kept. The sweep
  archives ended sessions idle ``auto_archive_idle_days`` or more, pinned ones exempt.
* A VACUUM follows only a prune that removed rows, under the conditions of :mod:`.vacuum`.
* It never raises: a failure is logged, recorded in ``state_meta`` and shown by ``stats``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import state

if TYPE_CHECKING:
    from hermes_core.store.protocol import Store

log = logging.getLogger("hermes.lifecycle")


@dataclass(frozen=True, slots=True)
class AutoCleanSettings:
    auto_prune: bool
    retention_days: int
    vacuum_after_prune: bool
    min_vacuum_interval_days: int
    min_interval_hours: int
    auto_archive: bool
    auto_archive_idle_days: int

    @classmethod
    def from_config(cls, config: Any) -> AutoCleanSettings:
        """From a :class:`~hermes_core.config.Config` (or any ``key → value`` lookup)."""
        return cls(
            auto_prune=bool(config["sessions.auto_prune"]),
            retention_days=int(config["sessions.retention_days"]),
            vacuum_after_prune=bool(config["sessions.vacuum_after_prune"]),
            min_vacuum_interval_days=int(config["sessions.min_vacuum_interval_days"]),
            min_interval_hours=int(config["sessions.min_interval_hours"]),
            auto_archive=bool(config["sessions.auto_archive"]),
            auto_archive_idle_days=int(config["sessions.auto_archive_idle_days"]),
        )

    @property
    def enabled(self) -> bool:
        return self.auto_prune or self.auto_archive

    def due(self, last_runs: Mapping[str, str], now: float) -> tuple[bool, bool]:
        """(prune due, archive due) given the stored last-run times."""
        interval = self.min_interval_hours * 3600

        def is_due(key: str) -> bool:
            last = state.as_time(last_runs.get(key))
            # A stamp a little after ``now`` is another process that started just after us;
            # one far in the future means the clock was set back, and must not stop the clean-up
            # for good.
            return last is None or now - last >= interval or last - now > max(interval, 3600)

        return (
            self.auto_prune and is_due(state.LAST_AUTO_PRUNE),
            self.auto_archive and is_due(state.LAST_AUTO_ARCHIVE),
        )


@dataclass
class AutoCleanResult:
    """What one call did. ``skipped`` says why nothing ran; ``error`` is set on failure."""

    skipped: str | None = None
    pruned: int = 0
    archived: int = 0
    vacuumed: bool = False
    vacuum_skipped: str | None = None
    reclaimed_bytes: int = 0
    error: str | None = None

    @property
    def ran(self) -> bool:
        return self.skipped is None and self.error is None


class _NotDue(Exception):
    pass


def run_auto_clean(
    store: Store, config: Any, *, now: float | None = None
) -> AutoCleanResult:
    """Prune, archive and VACUUM as configured, if due. Never raises."""
    result = AutoCleanResult()
    moment = time.time() if now is None else now
    try:
        settings = AutoCleanSettings.from_config(config)
        if not settings.enabled:
            result.skipped = "disabled"
            return result
        keys = (state.LAST_AUTO_PRUNE, state.LAST_AUTO_ARCHIVE)
        prune_due, archive_due = settings.due(state.read(store.lifecycle, keys), moment)
        if not (prune_due or archive_due):
            result.skipped = "not due"
            return result
        _run_due(store, settings, result, moment)
    except Exception as error:  # the caller's command must go on
        result.error = f"{type(error).__name__}: {error}"
        log.warning("hermes: automatic clean-up failed: %s", result.error)
        _record_failure(store, result.error, moment)
    return result


def _run_due(
    store: Store, settings: AutoCleanSettings, result: AutoCleanResult, moment: float
) -> None:
    from hermes_core.selection.filters import SessionFilter

    from .archive import archive_stale
    from .lock import LockHeld, take
    from .prune import plan_prune, run_prune
    from .vacuum import skip_reason, vacuum

    lifecycle = store.lifecycle
    keys = (state.LAST_AUTO_PRUNE, state.LAST_AUTO_ARCHIVE, state.LAST_VACUUM)
    try:
        with lifecycle.transaction() as db:
            last_runs = state.read(db, keys)
            prune_due, archive_due = settings.due(last_runs, moment)
            if not (prune_due or archive_due):
                raise _NotDue
            lock = take(db, "automatic clean-up", now=moment).bind(lifecycle)
            stamps: dict[str, object] = {}
            if prune_due:
                stamps[state.LAST_AUTO_PRUNE] = moment
            if archive_due:
                stamps[state.LAST_AUTO_ARCHIVE] = moment
            state.write(db, stamps)
    except _NotDue:
        result.skipped = "not due"
        return
    except LockHeld as held:
        result.skipped = str(held)
        return
    try:
        records: dict[str, object] = {}
        if prune_due:
            selection = SessionFilter(
                older_than=moment - settings.retention_days * 86_400,
                ended_only=True,
                include_archived=True,
            )
            result.pruned = run_prune(lifecycle, plan_prune(lifecycle, selection), lock)
            records[state.LAST_AUTO_PRUNE_REMOVED] = result.pruned
        if archive_due:
            result.archived = archive_stale(lifecycle, settings.auto_archive_idle_days, now=moment)
            records[state.LAST_AUTO_ARCHIVE_ARCHIVED] = result.archived
        if result.pruned:
            result.vacuum_skipped = skip_reason(
                lifecycle,
                enabled=settings.vacuum_after_prune,
                min_interval_days=settings.min_vacuum_interval_days,
                last_vacuum=state.as_time(last_runs.get(state.LAST_VACUUM)),
                now=moment,
            )
            if result.vacuum_skipped is None:
                with lifecycle.transaction() as db:
                    lock.renew(db, lease=6 * 3600)  # a VACUUM of a large store takes a while
                before, after = vacuum(lifecycle)
                result.vacuumed = True
                result.reclaimed_bytes = before - after
        with lifecycle.transaction() as db:
            state.write(db, records)
            state.delete(db, state.LAST_FAILURE)
    finally:
        lock.release()


def _record_failure(store: Store, error: str, moment: float) -> None:
    try:
        with store.lifecycle.transaction(retry_seconds=5.0) as db:
            state.write(db, {state.LAST_FAILURE: {"at": moment, "error": error}})
    except Exception as again:  # a broken store cannot record its failure
        log.warning("hermes: could not record the clean-up failure: %s", again)
