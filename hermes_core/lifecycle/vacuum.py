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

import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_core.store.connection import write_transaction
from hermes_core.store.maintenance import file_bytes, optimize

from . import state

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


def free_space(connection: sqlite3.Connection) -> FreeSpace:
    free = connection.execute("PRAGMA freelist_count").fetchone()[0]
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    size = connection.execute("PRAGMA page_size").fetchone()[0]
    return FreeSpace(int(free), int(pages), int(size))


def skip_reason(
    connection: sqlite3.Connection,
    path: Path,
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
    space = free_space(connection)
    if space.share < MIN_FREE_SHARE:
        return (
            f"only {space.share:.0%} of the file is free pages (VACUUM needs {MIN_FREE_SHARE:.0%})"
        )
    try:
        spare = shutil.disk_usage(path.parent).free
    except OSError:
        spare = None
    if spare is not None and spare < file_bytes(path):
        return "not enough free disk space for VACUUM's copy of the store"
    return None


def vacuum(connection: sqlite3.Connection, path: Path) -> tuple[int, int]:
    """Merge the full-text indexes, VACUUM, and record the time; returns the sizes on disk
    before and after."""
    before, after = optimize(connection, path)
    record_vacuum(connection)
    return before, after


def record_vacuum(connection: sqlite3.Connection, when: float | None = None) -> None:
    with write_transaction(connection) as db:
        state.write(db, {state.LAST_VACUUM: time.time() if when is None else when})
