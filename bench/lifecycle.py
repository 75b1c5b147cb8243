"""Figure (e): a store that stays small — prune half of the sessions, then ``optimize``.

Runs on a **copy** of a cached bench store (never the cache itself): the older half of the
sessions by last activity is pruned through the same library calls as ``hermes sessions
prune`` (plan, lock, batches), then the store is optimized as ``hermes sessions optimize``
does (FTS5 ``optimize`` merge, VACUUM). For context it first shows what archiving the same half
and optimizing reclaims (a peer's users saw almost nothing: archiving does not delete).
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from hermes_core.lifecycle.archive import archive, archive_selection, plan_archive, unarchive
from hermes_core.lifecycle.lock import acquire
from hermes_core.lifecycle.prune import plan_prune, run_prune
from hermes_core.selection.filters import SessionFilter
from hermes_core.store.connection import open_connection
from hermes_core.store.lifecycle_queries import SqliteLifecycle
from hermes_core.store.maintenance import file_bytes, optimize, size_split


@dataclass(frozen=True, slots=True)
class LifecycleFigures:
    sessions_before: int
    sessions_pruned: int
    bytes_before: int
    bytes_after_archive_optimize: int
    bytes_after_prune: int
    bytes_after_optimize: int
    fulltext_share_before: float
    fulltext_share_after: float
    prune_seconds: float
    optimize_seconds: float

    @property
    def shrink(self) -> float:
        return 1 - self.bytes_after_optimize / self.bytes_before

    @property
    def archive_reclaimed(self) -> float:
        return 1 - self.bytes_after_archive_optimize / self.bytes_before


def _fulltext_share(connection: sqlite3.Connection) -> float:
    split = size_split(connection)
    total = split.messages_bytes + split.fulltext_bytes + split.other_bytes
    return split.fulltext_bytes / total if total else 0.0


def run_lifecycle(source_db: Path, scratch: Path, *, with_archive: bool = True) -> LifecycleFigures:
    """Copy ``source_db`` into ``scratch`` and measure there; the copy is deleted afterwards."""
    scratch.mkdir(parents=True, exist_ok=True)
    db_path = scratch / "state.db"
    checkpointed = sqlite3.connect(f"file:{source_db}?mode=ro", uri=True)
    try:
        # A consistent copy even if the cached store has a write-ahead log beside it.
        target = sqlite3.connect(db_path)
        checkpointed.backup(target)
        target.close()
    finally:
        checkpointed.close()
    connection = open_connection(db_path)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        bytes_before = file_bytes(db_path)
        share_before = _fulltext_share(connection)
        sessions = connection.execute("SELECT count(*) FROM sessions").fetchone()[0]
        median = connection.execute(
            "SELECT last_active_at FROM sessions ORDER BY last_active_at LIMIT 1 OFFSET ?",
            (sessions // 2,),
        ).fetchone()[0]
        older_half = SessionFilter(older_than=median)
        lifecycle = SqliteLifecycle(connection, db_path)
        after_archive = bytes_before
        if with_archive:
            plan = plan_archive(lifecycle, archive_selection(older_half))
            ids = [m.id for m in plan.matches]
            archive(lifecycle, ids)
            _before, after_archive = optimize(connection, db_path)
            unarchive(lifecycle, ids)
        plan_p = plan_prune(
            lifecycle, SessionFilter(older_than=median, ended_only=True, include_archived=True)
        )
        started = time.perf_counter()
        lock = acquire(lifecycle, "bench prune")
        try:
            pruned = run_prune(lifecycle, plan_p, lock)
        finally:
            lock.release()
        prune_seconds = time.perf_counter() - started
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after_prune = file_bytes(db_path)
        started = time.perf_counter()
        _before, after_optimize = optimize(connection, db_path)
        optimize_seconds = time.perf_counter() - started
        share_after = _fulltext_share(connection)
    finally:
        connection.close()
        shutil.rmtree(scratch, ignore_errors=True)
    return LifecycleFigures(
        sessions_before=sessions,
        sessions_pruned=pruned,
        bytes_before=bytes_before,
        bytes_after_archive_optimize=after_archive,
        bytes_after_prune=after_prune,
        bytes_after_optimize=after_optimize,
        fulltext_share_before=share_before,
        fulltext_share_after=share_after,
        prune_seconds=prune_seconds,
        optimize_seconds=optimize_seconds,
    )
