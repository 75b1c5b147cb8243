"""The import engine's door into the SQLite store: :class:`SqliteImportBookkeeping`.

The bookkeeping and the import writes are written once for every backend
(:class:`~.import_rows.ImportRows`); this gives them SQLite's primitives: its write
transactions, message inserts with their full-text rows (:mod:`.rowwrites`), and the JSON
functions of its dialect.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from hermes_hookspecs import Message

from . import fulltext, rowwrites
from .connection import write_transaction
from .import_rows import ImportRows
from .statements import SqliteSql

if TYPE_CHECKING:
    from .store import SessionEvents


class SqliteImportBookkeeping(ImportRows):
    """Import writes and bookkeeping of one SQLite store."""

    database_errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, connection: sqlite3.Connection, events: SessionEvents | None) -> None:
        self._connection = connection
        self._sql = SqliteSql(connection)
        self._events = events
        self._created: set[str] = set()

    def _transaction(self) -> AbstractContextManager[object]:
        return write_transaction(self._connection)

    def _json_text(self, *path: str) -> str:
        return f"json_extract(metadata, '$.{'.'.join(path)}')"

    def _json_number(self, *path: str) -> str:
        return self._json_text(*path)

    def _insert_messages(
        self, session_id: str, messages: Sequence[Message], default_timestamp: float
    ) -> None:
        inserted = rowwrites.insert_messages(
            self._connection, session_id, messages, default_timestamp
        )
        self._connection.execute(
            "UPDATE sessions SET message_count = message_count + ?, "
            "tool_call_count = tool_call_count + ?, "
            "last_active_at = max(last_active_at, ?) WHERE id = ?",
            (len(messages), inserted.tool_calls, inserted.last_timestamp, session_id),
        )

    def _unindex_messages(self, where: str, params: Sequence[object]) -> None:
        """The FTS tables hold the messages' words apart from their rows."""
        fulltext.unindex_messages(self._connection, where, params)

    def _loaded(self, messages: int) -> None:
        """Nothing: SQLite's planner needs no refresh as a load grows the tables."""
