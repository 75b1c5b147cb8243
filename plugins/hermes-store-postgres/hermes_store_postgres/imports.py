"""The import engine's door into a PostgreSQL store. The bookkeeping and the import writes are
written once for every backend (:class:`hermes_core.store.import_rows.ImportRows`); this gives
them PostgreSQL's primitives: its transactions, message batches (``COPY`` for bulk loads, see
:mod:`.writes`), ``jsonb`` paths, and a row lock where several writers run at once — plus a
refresh of the planner's statistics as a bulk load grows the tables, and, for a bulk load
into a store of few messages, the full-text indexes built once at the end (see
:meth:`PostgresImportBookkeeping.bulk_load`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import Message, StoreEvents

from hermes_core.store.import_rows import ImportRows

from . import schema, writes
from .statements import PostgresSql

if TYPE_CHECKING:
    import psycopg

ANALYZE_AFTER_MESSAGES = 20_000
"""A bulk load (import, restore, migration) refreshes the planner's statistics after this many
messages, and after every half again of what the table held at the last refresh."""
DEFER_INDEXES_BELOW = 20_000
"""A bulk load into a store holding fewer messages than this drops the full-text indexes and
builds them at the end (over at most this many messages more than it loaded): building a
GIN index over a table costs a fraction of keeping it up row by row."""


def _database_errors() -> tuple[type[Exception], ...]:
    import psycopg

    return (psycopg.Error,)


class PostgresImportBookkeeping(ImportRows):
    """Import writes and bookkeeping of one PostgreSQL store."""

    _greatest = "greatest"
    _least = "least"
    _float_mark = "CAST(? AS double precision)"
    _row_lock = " FOR UPDATE"
    _tool_calls_json = "tool_calls::json"

    def __init__(
        self,
        db: psycopg.Connection[tuple[Any, ...]],
        events: StoreEvents | None,
        spare: Callable[[], AbstractContextManager[psycopg.Connection[Any]]] | None = None,
    ) -> None:
        self._db = db
        self._spare = spare
        """A second connection to borrow at the end of a bulk load, to build two of the
        deferred indexes at once (:func:`.schema.build_fulltext_indexes`)."""
        self._sql = PostgresSql(db)
        self._events = events
        self._created: set[str] = set()
        self._loaded_since_analyze = 0
        self._analyze_at = ANALYZE_AFTER_MESSAGES
        self._bulk = False
        """Inside :meth:`bulk_load`; its first batch decides whether the indexes wait."""
        self._deferred = False
        """The full-text indexes were dropped for this bulk load and wait for its end."""
        self.database_errors = _database_errors()

    def _transaction(self) -> AbstractContextManager[object]:
        return self._db.transaction()

    def _json_text(self, *path: str) -> str:
        return f"metadata::jsonb #>> '{{{','.join(path)}}}'"

    def _json_number(self, *path: str) -> str:
        return f"(metadata::jsonb #> '{{{','.join(path)}}}')::float8"

    def _insert_messages(
        self, session_id: str, messages: Sequence[Message], default_timestamp: float
    ) -> None:
        if self._bulk:
            self._bulk = False  # decided once per load
            self._deferred = self._few_messages() and schema.defer_fulltext_indexes(self._db)
        inserted = writes.insert_messages(self._db, session_id, messages, default_timestamp)
        writes.add_to_counters(self._db, session_id, inserted)

    def _unindex_messages(self, where: str, params: Sequence[object]) -> None:
        """Nothing: a message's search columns go with its row."""

    @contextlib.contextmanager
    def bulk_load(self) -> Iterator[None]:
        """A bulk load: when its first batch finds fewer than :data:`DEFER_INDEXES_BELOW`
        messages in the store, the full-text indexes are dropped
        (:func:`.schema.defer_fulltext_indexes`) and built over everything when the block
        ends, however it ends (two at once when a spare connection is given); a process
        killed before leaves them to the next open. The
        planner's statistics are refreshed at the end too, so searches right after the load
        are planned on what it loaded."""
        self._bulk = True
        try:
            yield
        except BaseException:
            self._bulk = False
            with contextlib.suppress(Exception):  # the load's own failure is the one to tell
                self._end_bulk_load()
            raise
        self._bulk = False
        self._end_bulk_load()

    def _few_messages(self) -> bool:
        row = self._db.execute(
            "SELECT count(*) FROM (SELECT FROM messages LIMIT %s) few", (DEFER_INDEXES_BELOW,)
        ).fetchone()
        return row is not None and int(row[0]) < DEFER_INDEXES_BELOW

    def _end_bulk_load(self) -> None:
        if self._deferred:
            self._deferred = False
            schema.build_fulltext_indexes(self._db, self._spare)
            self._analyze(vacuum=True)
        elif self._loaded_since_analyze:
            self._analyze()

    def _loaded(self, messages: int) -> None:
        self._loaded_since_analyze += messages
        if self._loaded_since_analyze >= self._analyze_at and not self._deferred:
            self._analyze()  # (while the indexes wait, the end of the load analyses once)

    def _analyze(self, *, vacuum: bool = False) -> None:
        """``ANALYZE`` the tables a bulk load grows, so searches right after it are planned
        on what the tables hold now (autovacuum would get there, minutes later, on a busy
        server). Its sample is bounded (300 × the statistics target rows), so it costs about
        the same at any size; the next refresh comes after half as many messages again.

        ``vacuum``: at the end of a load into a (nearly) empty store, ``VACUUM (ANALYZE)``
        the messages instead, when no transaction is open: the load's rows are then marked
        visible to all once (the first reads after a load would otherwise do it, page by page,
        and autovacuum would read the whole table again right after, beside the searches)."""
        import psycopg

        idle = self._db.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        if vacuum and idle:
            self._db.execute("VACUUM (ANALYZE) messages")
            self._db.execute("ANALYZE sessions")
        else:
            self._db.execute("ANALYZE messages, sessions")
        row = self._db.execute(
            "SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass"
        ).fetchone()
        held = max(0, int(row[0])) if row else 0
        self._loaded_since_analyze = 0
        self._analyze_at = max(ANALYZE_AFTER_MESSAGES, held // 2)
