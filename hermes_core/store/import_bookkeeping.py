"""The import engine's door into the store: :class:`SqliteImportBookkeeping`.

It implements :class:`~hermes_core.store.protocol.ImportBookkeeping` over the functions of
:mod:`.imports` (which hold the SQL), and tells the plugins what happened, as every other
write of the facade does: a session created by an import or a backup restore fires
``session_started``; finishing one that is ended by then (an imported log always is, a
restored session when its backup says so) fires ``session_ended`` with its end reason. New
turns appended to an earlier import fire nothing: that session started and ended before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import Message, ParentKind

from . import database_imports, imports, session_writes
from .errors import SessionNotFound
from .rows import SESSION_COLUMNS, session_from_row
from .statements import SqliteSql

if TYPE_CHECKING:
    from hermes_hookspecs import Session

    from .store import SessionEvents


class SqliteImportBookkeeping:
    """Import writes and bookkeeping of one SQLite store."""

    database_errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, connection: sqlite3.Connection, events: SessionEvents | None) -> None:
        self._connection = connection
        self._events = events
        self._created: set[str] = set()

    def load_files(self) -> dict[str, imports.ImportFileRecord]:
        """Every bookkeeping row by path, in one query."""
        return imports.load_import_files(self._connection)

    def update_file(self, record: imports.ImportFileRecord) -> None:
        imports.update_import_file(self._connection, record)

    def mark_append(self, path: str, session_id: str, last_kept_id: int) -> None:
        imports.mark_append(self._connection, path, session_id, last_kept_id)

    def pending_appends(self) -> dict[str, tuple[str, int]]:
        return imports.pending_appends(self._connection)

    def undo_pending_append(self, path: str, session_id: str, last_id: int) -> int:
        return imports.undo_pending_append(self._connection, path, session_id, last_id)

    def session_of_foreign_id(self, importer: str, foreign_id: str) -> str | None:
        return imports.session_of_foreign_id(self._connection, importer, foreign_id)

    def import_of_foreign_id(self, importer: str, foreign_id: str) -> tuple[str, str] | None:
        return imports.import_of_foreign_id(self._connection, importer, foreign_id)

    def delegate_of_foreign_id(self, parent_id: str, foreign_id: str) -> str | None:
        return imports.delegate_of_foreign_id(self._connection, parent_id, foreign_id)

    def session_exists(self, session_id: str) -> bool:
        return session_writes.session_exists(SqliteSql(self._connection), session_id)

    def create_session(
        self,
        *,
        source: str,
        started_at: float,
        session_id: str | None = None,
        parent_session_id: str | None = None,
        parent_kind: ParentKind | None = None,
        metadata: Mapping[str, Any] | None = None,
        model_config: Mapping[str, Any] | None = None,
        system_prompt: str | None = None,
        fields: Mapping[str, object] | None = None,
        bookkeeping: imports.ImportFileRecord | None = None,
    ) -> str:
        """Create an imported (or restored) session row; fires ``session_started``."""
        created = imports.create_imported_session(
            self._connection,
            source=source,
            started_at=started_at,
            session_id=session_id,
            parent_session_id=parent_session_id,
            parent_kind=parent_kind,
            metadata=metadata,
            model_config=model_config,
            system_prompt=system_prompt,
            fields=fields,
            bookkeeping=bookkeeping,
        )
        self._created.add(created)
        if self._events is not None:
            self._events.session_started(self._session(created))
        return created

    def append_messages(
        self, session_id: str, messages: Sequence[Message], *, default_timestamp: float
    ) -> int:
        return imports.append_imported_messages(
            self._connection, session_id, messages, default_timestamp=default_timestamp
        )

    def finish_session(
        self, session_id: str, totals: imports.ImportedTotals, *, title_source: str = "import"
    ) -> str | None:
        """Title, end and totals of an imported session; fires ``session_ended`` when a
        session created here is ended, or an open one becomes ended."""
        was_open = self._is_open(session_id)
        title = imports.finish_imported_session(
            self._connection, session_id, totals, title_source=title_source
        )
        created = session_id in self._created
        self._created.discard(session_id)
        if self._events is not None and (created or was_open):
            try:
                session = self._session(session_id)
            except SessionNotFound:
                return title
            if session.ended_at is not None:
                self._events.session_ended(session, session.end_reason or "imported")
        return title

    def discard_partial(self, record: imports.ImportFileRecord) -> int:
        return imports.discard_partial_import(self._connection, record)

    def last_message_id(self, session_id: str, back: int = 0) -> int:
        return imports.last_message_id(self._connection, session_id, back)

    def discard_messages_after(
        self, session_id: str, last_id: int, up_to_id: int | None = None
    ) -> int:
        return imports.discard_messages_after(self._connection, session_id, last_id, up_to_id)

    def imported_sessions(self, importer: str) -> dict[str, database_imports.ImportedEntry]:
        return database_imports.imported_sessions(self._connection, importer)

    def message_texts(self, session_id: str) -> list[tuple[str, str]]:
        return database_imports.message_texts(self._connection, session_id)

    def refresh_session(
        self,
        session_id: str,
        fields: Mapping[str, Any],
        *,
        seen: str,
        last_active_at: float | None = None,
    ) -> None:
        database_imports.refresh_imported_session(
            self._connection, session_id, fields, seen=seen, last_active_at=last_active_at
        )

    def link_parent(self, session_id: str, parent_id: str, kind: ParentKind) -> None:
        database_imports.link_parent(self._connection, session_id, parent_id, kind)

    def clear_append_marks(self, path: str) -> None:
        database_imports.clear_append_marks(self._connection, path)

    def forget_file(self, path: str) -> None:
        database_imports.forget_import_file(self._connection, path)

    def discard_run(self, path: str, importer: str, run_started: float) -> int:
        return database_imports.discard_interrupted_run(
            self._connection, path, importer, run_started
        )

    def _is_open(self, session_id: str) -> bool:
        row = self._connection.execute(
            "SELECT ended_at IS NULL FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return bool(row[0]) if row else False

    def _session(self, session_id: str) -> Session:
        row = self._connection.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return session_from_row(row)
