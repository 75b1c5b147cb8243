"""When a VACUUM is worth its cost, and running it.

SQLite never shrinks the file on DELETE: freed pages go to the freelist and are reused. A
VACUUM rewrites the whole file (slow on a large store, and it holds the write lock
throughout), so the automatic clean-up runs it only after a prune that removed rows, not more
often than ``sessions.min_vacuum_interval_days``, only when at least
:data:`MIN_FREE_SHARE` of the file is free pages, and only with room on the disk for the copy
it writes. The full-text indexes are merged first: deleting from an FTS5 index appends
delete markers instead of freeing pages, and only a merge turns them into free pages.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import state

if TYPE_CHECKING:
    from hermes_core.store.protocol import LifecycleQueries

MIN_FREE_SHARE = 0.10
"""VACUUM only when at least this share of the file's pages are free."""


@dataclass(frozen=True, slots=True)
class FreeSpace:
    free_pages: int
    page_count: int
    page_size: int

    @property
    def share(self) -> float:
        return self.free_pages / self.page_count if self.page_count else 0.0

    @property
    def free_bytes(self) -> int:
        return self.free_pages * self.page_size


def free_space(lifecycle: LifecycleQueries) -> FreeSpace:
    return FreeSpace(*lifecycle.free_space())


def skip_reason(
    lifecycle: LifecycleQueries,
    *,
    enabled: bool,
    min_interval_days: int,
    last_vacuum: float | None,
    now: float,
) -> str | None:
    """Why a VACUUM after a prune that removed rows should not run now (None: run it)."""
    if not enabled:
        return "sessions.vacuum_after_prune is off"
    if last_vacuum is not None and now - last_vacuum < min_interval_days * 86_400:
        days = (now - last_vacuum) / 86_400
        return (
            f"last VACUUM {days:.1f} days ago (sessions.min_vacuum_interval_days "
            f"{min_interval_days})"
        )
    space = free_space(lifecycle)
    if space.share < MIN_FREE_SHARE:
        return (
            f"only {space.share:.0%} of the file is free pages (VACUUM needs {MIN_FREE_SHARE:.0%})"
        )
    spare = lifecycle.spare_bytes()
    if spare is not None and spare < lifecycle.size_bytes():
        return "not enough free disk space for VACUUM's copy of the store"
    return None


def vacuum(lifecycle: LifecycleQueries) -> tuple[int, int]:
    """Merge the full-text indexes, VACUUM, and record the time; returns the sizes on disk
    before and after."""
    before, after = lifecycle.optimize()
    record_vacuum(lifecycle)
    return before, after


def record_vacuum(lifecycle: LifecycleQueries, when: float | None = None) -> None:
    with lifecycle.transaction() as db:
        state.write(db, {state.LAST_VACUUM: time.time() if when is None else when})
