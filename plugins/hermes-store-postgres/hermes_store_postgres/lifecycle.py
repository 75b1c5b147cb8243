"""Prune, archive, the lifecycle lock and the store-wide services in PostgreSQL.

:meth:`PostgresLifecycle.transaction` is one transaction that first takes a
transaction-level advisory lock (:data:`LIFECYCLE_LOCK`): every lifecycle transaction of
every process runs one at a time, so the lifecycle lock's check-and-take (the holder record
in ``state_meta`` the core reads and writes) is atomic, as SQLite's ``BEGIN IMMEDIATE`` makes
it there, while ordinary appends and reads go on beside it. The advisory lock goes with the
transaction, so a killed process never leaves it behind.

Maintenance: ``optimize`` is ``VACUUM ANALYZE`` of the store's tables; sizes come from
``pg_total_relation_size`` / ``pg_database_size``; "free pages" are estimated from the dead
tuples PostgreSQL counts (``pg_stat_user_tables``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from hermes_core.store.errors import StoreUnavailable
from hermes_core.store.lifecycle_queries import LifecycleRows, LifecycleRowsTransaction
from hermes_core.store.maintenance import SizeSplit, StoreStats

from .schema import PAIR_INDEX
from .selection_sql import build_where
from .statements import PostgresSql

if TYPE_CHECKING:
    import psycopg

    from hermes_core.selection.filters import SessionFilter

    Db = psycopg.Connection[tuple[Any, ...]]

LIFECYCLE_LOCK = 0x4865726D6C63
"""The advisory lock key every lifecycle transaction holds."""
TABLES = ("sessions", "messages", "system_prompts", "gateway_routing", "state_meta",
          "import_files", "hermes_schema_version")  # fmt: skip


_FULLTEXT_INDEXES = ("idx_messages_words", PAIR_INDEX, "idx_messages_cjk")


class PostgresLifecycle(LifecycleRows):
    """Lifecycle reads and writes of one PostgreSQL store (the plans, archive and unarchive:
    :class:`~hermes_core.store.lifecycle_queries.LifecycleRows`)."""

    def __init__(self, db: Db) -> None:
        self._db = db
        self._sql = PostgresSql(db)

    @contextmanager
    def transaction(
        self, *, retry_seconds: float | None = None
    ) -> Iterator[LifecycleRowsTransaction]:
        """One transaction holding :data:`LIFECYCLE_LOCK`, committed when the block ends
        (waiting for another process's lifecycle transaction at most ``retry_seconds``)."""
        import psycopg.errors

        with self._db.transaction():
            if retry_seconds is not None:
                self._db.execute(f"SET LOCAL lock_timeout = '{int(retry_seconds * 1000)}ms'")
            try:
                self._db.execute("SELECT pg_advisory_xact_lock(%s)", (LIFECYCLE_LOCK,))
            except psycopg.errors.LockNotAvailable as error:  # as SQLite says it, one line
                raise StoreUnavailable(f"the session store stayed busy: {error}") from None
            yield LifecycleRowsTransaction(self._sql, None)

    def _where(self, selection: SessionFilter) -> tuple[str, list[object]]:
        return build_where(selection)

    def _write(self) -> AbstractContextManager[object]:
        """Nothing: the connection commits each statement by itself."""
        return nullcontext()

    # ------------------------------------------------------------------ maintenance

    def _block_size(self) -> int:
        row = self._db.execute("SELECT current_setting('block_size')::int").fetchone()
        return int(row[0]) if row else 8192

    def free_space(self) -> tuple[int, int, int]:
        """(reclaimable pages, pages, page size): the store's tables in pages, and the share
        of their rows PostgreSQL counts as dead, in pages."""
        block = self._block_size()
        row = self._db.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0), "
            "coalesce(sum(pg_total_relation_size(c.oid) * CASE WHEN t.n_live_tup + t.n_dead_tup > 0 "
            "  THEN t.n_dead_tup::float8 / (t.n_live_tup + t.n_dead_tup) ELSE 0 END), 0) "
            "FROM pg_class c LEFT JOIN pg_stat_user_tables t ON t.relid = c.oid "
            "WHERE c.oid = ANY(%s::regclass[])",
            (list(TABLES),),
        ).fetchone()
        total, dead = (int(row[0]), float(row[1])) if row else (0, 0.0)
        pages = max(1, total // block)
        return min(pages, int(dead) // block), pages, block

    def size_bytes(self) -> int:
        """The store's size: every table with its indexes and TOAST (``pg_total_relation_size``)."""
        row = self._db.execute(
            "SELECT coalesce(sum(pg_total_relation_size(t::regclass)), 0) FROM unnest(%s::text[]) t",
            (list(TABLES),),
        ).fetchone()
        return int(row[0]) if row else 0

    def spare_bytes(self) -> int | None:
        """The server's free disk space cannot be read over a connection: None."""
        return None

    def optimize(self) -> tuple[int, int]:
        """``VACUUM ANALYZE`` every table of the store; sizes before and after."""
        before = self.size_bytes()
        for table in TABLES:
            self._db.execute(f"VACUUM (ANALYZE) {table}")
        return before, self.size_bytes()

    def size_split(self) -> SizeSplit:
        """Messages (heap, TOAST, key indexes), the full-text indexes (words, phrase pairs,
        CJK), everything else. An index a bulk load has dropped until its end counts 0."""
        indexes = " + ".join(
            f"coalesce(pg_relation_size(to_regclass('{index}')), 0)" for index in _FULLTEXT_INDEXES
        )
        row = self._db.execute(
            f"SELECT pg_total_relation_size('messages') - ({indexes}), {indexes}"
        ).fetchone()
        messages, fulltext = (int(row[0]), int(row[1])) if row else (0, 0)
        total = self.size_bytes()
        return SizeSplit(
            messages,
            fulltext,
            max(0, total - messages - fulltext),
            True,
            "counted with pg_total_relation_size",
        )

    def stats(self) -> StoreStats:
        """Counts and size for ``hermes sessions stats``."""
        totals = self._db.execute(
            "SELECT count(*), coalesce(sum(message_count), 0), count(*) FILTER "
            "(WHERE ended_at IS NULL), coalesce(sum(pinned), 0), coalesce(sum(archived), 0) "
            "FROM sessions"
        ).fetchone()
        by_source = self._db.execute(
            "SELECT source, count(*) FROM sessions GROUP BY source "
            'ORDER BY count(*) DESC, source COLLATE "C"'
        ).fetchall()
        assert totals is not None
        from .fulltext import INDEXED_CHARS

        long_messages = self._db.execute(  # the constant written out: the partial index's own
            f"SELECT count(*) FROM messages WHERE length(content) > {INDEXED_CHARS}"
        ).fetchone()
        return StoreStats(
            total_sessions=int(totals[0]),
            total_messages=int(totals[1]),
            sessions_by_source=[(str(r[0]), int(r[1])) for r in by_source],
            database_bytes=self.size_bytes(),
            active_sessions=int(totals[2]),
            pinned_sessions=int(totals[3]),
            archived_sessions=int(totals[4]),
            indexed_in_part=int(long_messages[0]) if long_messages else 0,
        )
