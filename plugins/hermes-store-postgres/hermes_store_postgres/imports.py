"""The import engine's door into a PostgreSQL store. The bookkeeping and the import writes are
written once for every backend (:class:`hermes_core.store.import_rows.ImportRows`); this gives
them PostgreSQL's primitives: its transactions, message batches (``COPY`` for bulk loads, see
:mod:`.writes`), ``jsonb`` paths, and a row lock where several writers run at once — plus a
refresh of the planner's statistics as a bulk load grows the tables."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import Message, StoreEvents

from hermes_core.store.import_rows import ImportRows

from . import writes
from .statements import PostgresSql

if TYPE_CHECKING:
    import psycopg

ANALYZE_AFTER_MESSAGES = 20_000
"""A bulk load (import, restore, migration) refreshes the planner's statistics after this many
messages, and after every half again of what the table held at the last refresh."""


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

    def __init__(self, db: psycopg.Connection[tuple[Any, ...]], events: StoreEvents | None) -> None:
        self._db = db
        self._sql = PostgresSql(db)
        self._events = events
        self._created: set[str] = set()
        self._loaded_since_analyze = 0
        self._analyze_at = ANALYZE_AFTER_MESSAGES
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
        inserted = writes.insert_messages(self._db, session_id, messages, default_timestamp)
        writes.add_to_counters(self._db, session_id, inserted)

    def _unindex_messages(self, where: str, params: Sequence[object]) -> None:
        """Nothing: a message's search columns go with its row."""

    def _loaded(self, messages: int) -> None:
        self._loaded_since_analyze += messages
        if self._loaded_since_analyze >= self._analyze_at:
            self._analyze()

    def _analyze(self) -> None:
        """``ANALYZE`` the tables a bulk load grows, so searches right after it are planned
        on what the tables hold now (autovacuum would get there, minutes later, on a busy
        server). Its sample is bounded (300 × the statistics target rows), so it costs about
        the same at any size; the next refresh comes after half as many messages again."""
        self._db.execute("ANALYZE messages, sessions")
        row = self._db.execute(
            "SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass"
        ).fetchone()
        held = max(0, int(row[0])) if row else 0
        self._loaded_since_analyze = 0
        self._analyze_at = max(ANALYZE_AFTER_MESSAGES, held // 2)
