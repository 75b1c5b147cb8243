"""The import engine's door into a store, written once for every backend: :class:`ImportRows`
implements :class:`~hermes_core.store.protocol.ImportBookkeeping` over a backend's primitives,
in the SQL both stores take (see :mod:`.statements`), as :class:`~.facade.StoreFacade` does
for the session facade.

An import streams: the session row is created first (with its file's bookkeeping row in
state ``importing``), messages follow in batches (one transaction each, counters included),
and the last step sets the title, the end and the totals. A crash mid-import leaves the
``importing`` mark, and the next import of the file deletes the partial session first
(:meth:`ImportRows.discard_partial`). Appending a grown file's new turns is marked in
``state_meta`` first (:meth:`ImportRows.mark_append`), so a crash mid-append is undone.

It tells the plugins what happened, as every other write of the facade does: a session
created by an import or a backup restore fires ``session_started``; finishing one that is
ended by then (an imported log always is, a restored session when its backup says so) fires
``session_ended`` with its end reason. New turns appended to an earlier import fire nothing:
that session started and ended before.

A backend gives what differs: its connection and transactions, how a batch of messages is
inserted (and indexed), the search entries it keeps apart from the rows (dropped before a
deletion: :mod:`.deletion` deletes the rows), and a few fragments of its dialect — reading ``metadata`` JSON, the larger/smaller of two
values, a float parameter that may be NULL, locking a row it is about to change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar

from hermes_hookspecs import Message, ParentKind, Session, StoreEvents

from . import deletion, session_writes
from .database_imports import REFRESHABLE_FIELDS, ImportedEntry
from .errors import SessionNotFound
from .imports import APPEND_MARK_PREFIX, ImportedTotals, ImportFileRecord
from .rows import SESSION_COLUMNS, session_from_row
from .state_meta import write_state
from .statements import Sql

_RECORD_COLUMNS = (
    "path, importer, size, mtime_ns, cursor, foreign_id, session_id, state, imported_at"
)
_APPEND_KEY = APPEND_MARK_PREFIX


def load_import_files(sql: Sql) -> dict[str, ImportFileRecord]:
    """Every bookkeeping row by path, in one query (a re-scan of thousands of files stats them
    and looks them up here, never opening an unchanged one)."""
    rows = sql.execute(f"SELECT {_RECORD_COLUMNS} FROM import_files").fetchall()
    return {str(row[0]): ImportFileRecord(*row) for row in rows}


class ImportRows(ABC):
    """Import writes and bookkeeping of one store over its backend's primitives (see the
    module's text). A subclass sets ``_sql``, ``_events`` and ``_created`` (an empty set) and
    ``database_errors``, and implements the abstract methods."""

    database_errors: tuple[type[Exception], ...]
    """What the backend's driver raises (the import engine reports them per file)."""
    _sql: Sql
    _events: StoreEvents | None
    _created: set[str]
    """Sessions created here and not finished yet."""

    _greatest: ClassVar[str] = "max"
    """The larger of two values (SQLite's two-argument ``max``)."""
    _least: ClassVar[str] = "min"
    """The smaller of two values."""
    _float_mark: ClassVar[str] = "?"
    """A float parameter that may be NULL (a backend that must know a parameter's type casts
    it here)."""
    _row_lock: ClassVar[str] = ""
    """After a read of a session row about to be changed: locks it to the transaction's end
    (``FOR UPDATE``), for a backend whose write transactions do not keep other writers out."""
    _tool_calls_json: ClassVar[str] = "tool_calls"
    """``messages.tool_calls`` as the backend's ``json_array_length`` takes it."""

    # ------------------------------------------------------------------ primitives

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[object]:
        """One write transaction: committed at the end, rolled back on an error."""

    @abstractmethod
    def _json_text(self, *path: str) -> str:
        """The value at ``path`` in ``sessions.metadata`` (as the backend reads JSON)."""

    @abstractmethod
    def _json_number(self, *path: str) -> str:
        """The number at ``path`` in ``sessions.metadata``."""

    @abstractmethod
    def _insert_messages(
        self, session_id: str, messages: Sequence[Message], default_timestamp: float
    ) -> None:
        """Inside a transaction: insert the messages (checked first: a bad one writes
        nothing) and add them, their tool calls and latest timestamp to the counters."""

    @abstractmethod
    def _unindex_messages(self, where: str, params: Sequence[object]) -> None:
        """Inside a transaction, before the messages matching ``where`` are deleted: drop
        their search entries, where the backend keeps them apart from the rows."""

    @abstractmethod
    def _loaded(self, messages: int) -> None:
        """After a batch of ``messages`` was appended (a backend may refresh its planner's
        statistics as a bulk load grows the tables)."""

    def _with_delegates(self, session_ids: Sequence[str]) -> list[str]:
        """``session_ids`` followed by their delegate sessions at any depth."""
        return deletion.with_delegates(self._sql, session_ids)

    def _delete_sessions(self, session_ids: Sequence[str]) -> int:
        """Inside a transaction: delete sessions with their messages and search entries; how
        many went."""
        return deletion.delete_sessions(self._sql, session_ids, self._unindex_messages)

    # ------------------------------------------------------------------ bookkeeping rows

    def load_files(self) -> dict[str, ImportFileRecord]:
        """Every bookkeeping row by path, in one query."""
        return load_import_files(self._sql)

    def _save_file(self, record: ImportFileRecord) -> None:
        """Insert or replace the bookkeeping row of ``record.path`` (inside a transaction)."""
        self._sql.execute(
            f"INSERT INTO import_files ({_RECORD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (path) DO UPDATE SET "
            "importer = excluded.importer, size = excluded.size, mtime_ns = excluded.mtime_ns, "
            "cursor = excluded.cursor, foreign_id = excluded.foreign_id, "
            "session_id = excluded.session_id, state = excluded.state, "
            "imported_at = excluded.imported_at",
            dataclasses.astuple(record),
        )

    def update_file(self, record: ImportFileRecord) -> None:
        """Save the bookkeeping row of ``record.path``; an append in progress on it is over."""
        with self._transaction():
            self._save_file(record)
            self._sql.execute("DELETE FROM state_meta WHERE key = ?", (_APPEND_KEY + record.path,))

    def mark_append(self, path: str, session_id: str, last_kept_id: int) -> None:
        """Note, before appending a grown file's new turns, where the session ended: if the
        process dies before the file's bookkeeping moves on, the next import undoes the
        partial append (:meth:`pending_appends`, :meth:`discard_messages_after`)."""
        value = json.dumps({"session_id": session_id, "last_id": last_kept_id})
        with self._transaction():
            write_state(self._sql, {_APPEND_KEY + path: value})

    def pending_appends(self) -> dict[str, tuple[str, int]]:
        """Appends that never finished: path → (session id, last message id kept)."""
        rows = self._sql.execute(
            "SELECT key, value FROM state_meta WHERE substr(key, 1, ?) = ?",
            (len(_APPEND_KEY), _APPEND_KEY),
        ).fetchall()
        found: dict[str, tuple[str, int]] = {}
        for key, value in rows:
            try:
                mark = json.loads(value)
                found[str(key)[len(_APPEND_KEY) :]] = (
                    str(mark["session_id"]),
                    int(mark["last_id"]),
                )
            except (ValueError, KeyError, TypeError):
                continue
        return found

    def undo_pending_append(self, path: str, session_id: str, last_id: int) -> int:
        """Remove what an unfinished append left; returns how many messages went."""
        removed = self.discard_messages_after(session_id, last_id)
        with self._transaction():
            self._sql.execute("DELETE FROM state_meta WHERE key = ?", (_APPEND_KEY + path,))
        return removed

    def session_of_foreign_id(self, importer: str, foreign_id: str) -> str | None:
        """The session a foreign session became when some file imported it, else None."""
        found = self.import_of_foreign_id(importer, foreign_id)
        return None if found is None else found[0]

    def import_of_foreign_id(self, importer: str, foreign_id: str) -> tuple[str, str] | None:
        """(session id, path) of the first file that imported the foreign session, if its
        session still exists (deleting a session sets ``import_files.session_id`` to NULL)."""
        row = self._sql.execute(
            "SELECT session_id, path FROM import_files WHERE importer = ? AND foreign_id = ? "
            "AND session_id IS NOT NULL AND state = 'done' ORDER BY imported_at LIMIT 1",
            (importer, foreign_id),
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def delegate_of_foreign_id(self, parent_id: str, foreign_id: str) -> str | None:
        """The delegate child of ``parent_id`` imported from ``foreign_id``, if any."""
        row = self._sql.execute(
            "SELECT id FROM sessions WHERE parent_session_id = ? AND parent_kind = 'delegate' "
            f"AND metadata IS NOT NULL AND {self._json_text('imported_from', 'foreign_id')} = ? "
            "LIMIT 1",
            (parent_id, foreign_id),
        ).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------ imported sessions

    def session_exists(self, session_id: str) -> bool:
        """Whether a session ``session_id`` exists."""
        return session_writes.session_exists(self._sql, session_id)

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
        bookkeeping: ImportFileRecord | None = None,
    ) -> str:
        """Create the (still untitled) row of an imported (or restored) session and, with it,
        the file's bookkeeping row in state ``importing``; fires ``session_started``.
        ``session_id`` keeps a given id (backup restores); otherwise one is drawn from
        ``started_at``."""
        with self._transaction():
            created = session_writes.insert_session(
                self._sql,
                source=source,
                session_id=session_id,
                gateway=False,
                started=started_at,
                title=None,
                system_prompt=system_prompt,
                model_config=model_config,
                metadata=metadata,
                parent_session_id=parent_session_id,
                parent_kind=parent_kind,
                fields=dict(fields or {}),
            )
            if bookkeeping is not None:
                self._save_file(
                    dataclasses.replace(bookkeeping, session_id=created, state="importing")
                )
        self._created.add(created)
        if self._events is not None:
            self._events.session_started(self._session(created))
        return created

    def append_messages(
        self, session_id: str, messages: Sequence[Message], *, default_timestamp: float
    ) -> int:
        """Append one batch with its own timestamps (one transaction, counters included);
        returns how many were written."""
        if not messages:
            return 0
        with self._transaction():
            self._insert_messages(session_id, messages, default_timestamp)
        self._loaded(len(messages))
        return len(messages)

    def finish_session(
        self, session_id: str, totals: ImportedTotals, *, title_source: str = "import"
    ) -> str | None:
        """Title (made unique; an existing one is kept), end, totals and workspace of an
        imported session, in one transaction; fires ``session_ended`` when a session created
        here is ended, or an open one becomes ended. Returns the session's title."""
        was_open = self._is_open(session_id)
        title = self._finish(session_id, totals, title_source)
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

    def _finish(self, session_id: str, totals: ImportedTotals, title_source: str) -> str | None:
        sql, greatest, number = self._sql, self._greatest, self._float_mark
        with self._transaction():
            row = sql.execute(
                f"SELECT title, metadata FROM sessions WHERE id = ?{self._row_lock}", (session_id,)
            ).fetchone()
            if row is None:
                return None
            title: str | None = row[0]
            proposal = totals.title_proposal
            if title is None and proposal:
                title = session_writes.store_unique_title(
                    sql,
                    session_id,
                    lambda: session_writes.unique_title(sql, proposal, session_id),
                    title_source,
                    if_untitled=True,
                )
            metadata = json.loads(row[1]) if row[1] else {}
            if totals.metadata_updates:
                provenance = dict(metadata.get("imported_from") or {})
                provenance.update(totals.metadata_updates)
                metadata["imported_from"] = provenance
            sql.execute(
                f"UPDATE sessions SET started_at = {self._least}(started_at, "
                f"coalesce({number}, started_at)), "
                f"ended_at = CASE WHEN {number} IS NULL THEN ended_at "
                f"  ELSE {greatest}(coalesce(ended_at, ?), ?) END, "
                "end_reason = coalesce(?, end_reason), "
                f"last_active_at = {greatest}(last_active_at, coalesce({number}, last_active_at)), "
                "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
                "cache_read_tokens = cache_read_tokens + ?, "
                "cache_write_tokens = cache_write_tokens + ?, "
                "cwd = coalesce(cwd, ?), git_branch = coalesce(?, git_branch), "
                "model = coalesce(?, model), metadata = ? WHERE id = ?",
                (
                    totals.started_at,
                    totals.ended_at,
                    totals.ended_at,
                    totals.ended_at,
                    totals.end_reason,
                    totals.ended_at,
                    totals.input_tokens,
                    totals.output_tokens,
                    totals.cache_read_tokens,
                    totals.cache_write_tokens,
                    totals.cwd,
                    totals.git_branch,
                    totals.model,
                    json.dumps(metadata) if metadata else None,
                    session_id,
                ),
            )
        return title

    def discard_partial(self, record: ImportFileRecord) -> int:
        """Delete what an interrupted import of ``record.path`` left behind (its session and
        that session's delegates) and forget the file; returns how many sessions went."""
        with self._transaction():
            deleted = 0
            if record.session_id is not None and self.session_exists(record.session_id):
                deleted = self._delete_sessions(self._with_delegates([record.session_id]))
            self._sql.execute("DELETE FROM import_files WHERE path = ?", (record.path,))
        return deleted

    def last_message_id(self, session_id: str, back: int = 0) -> int:
        """The id of the session's newest message, or of the one ``back`` places before it
        (0 when there is none)."""
        if back == 0:
            row = self._sql.execute(
                "SELECT coalesce(max(id), 0) FROM messages WHERE session_id = ?", (session_id,)
            ).fetchone()
        else:
            row = self._sql.execute(
                "SELECT id FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
                (session_id, back),
            ).fetchone()
        return int(row[0]) if row else 0

    def discard_messages_after(
        self, session_id: str, last_id: int, up_to_id: int | None = None
    ) -> int:
        """Delete the session's messages newer than ``last_id`` (up to ``up_to_id`` when
        given) and recount its counters: an append that failed half-way undone, or messages
        read again replaced. Returns how many messages went."""
        where = "session_id = ? AND id > ?"
        params: list[object] = [session_id, last_id]
        if up_to_id is not None:
            where += " AND id <= ?"
            params.append(up_to_id)
        with self._transaction():
            self._unindex_messages(where, params)
            removed = self._sql.execute(f"DELETE FROM messages WHERE {where}", params).rowcount
            self._sql.execute(
                "UPDATE sessions SET "
                "message_count = (SELECT count(*) FROM messages WHERE session_id = sessions.id), "
                "tool_call_count = (SELECT coalesce(sum("
                f"json_array_length({self._tool_calls_json})), 0) "
                "  FROM messages WHERE session_id = sessions.id AND tool_calls IS NOT NULL) "
                "WHERE id = ?",
                (session_id,),
            )
        return int(removed)

    # ------------------------------------------------- whole-database imports (Hermes Agent)

    def imported_sessions(self, importer: str) -> dict[str, ImportedEntry]:
        """Foreign session id → the session it became, for every session ``importer`` made
        (one scan: a re-import of a store with thousands of sessions looks them up here)."""
        rows = self._sql.execute(
            f"SELECT id, {self._json_text('imported_from', 'foreign_id')}, "
            f"{self._json_text('imported_from', 'seen')} FROM sessions "
            f"WHERE metadata IS NOT NULL AND {self._json_text('imported_from', 'tool')} = ?",
            (importer,),
        ).fetchall()
        return {
            str(foreign): ImportedEntry(str(session_id), None if seen is None else str(seen))
            for session_id, foreign, seen in rows
            if foreign is not None
        }

    def message_texts(self, session_id: str) -> list[tuple[str, str]]:
        """(role, content) of every message of a session, in order: what an import compares
        with a foreign session carrying the same id."""
        rows = self._sql.execute(
            "SELECT role, content FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
        ).fetchall()
        return [(str(role), str(content or "")) for role, content in rows]

    def refresh_session(
        self,
        session_id: str,
        fields: Mapping[str, Any],
        *,
        seen: str,
        last_active_at: float | None = None,
    ) -> None:
        """Bring an imported session's totals and end up to date with the foreign row (only
        :data:`~.database_imports.REFRESHABLE_FIELDS`) and remember the fingerprint ``seen``,
        in one transaction."""
        unknown = set(fields) - REFRESHABLE_FIELDS
        if unknown:
            raise TypeError(f"not refreshable: {', '.join(sorted(unknown))}")
        with self._transaction():
            row = self._sql.execute(
                f"SELECT metadata FROM sessions WHERE id = ?{self._row_lock}", (session_id,)
            ).fetchone()
            if row is None:
                return
            metadata = json.loads(row[0]) if row[0] else {}
            provenance = dict(metadata.get("imported_from") or {})
            provenance["seen"] = seen
            metadata["imported_from"] = provenance
            assignments = [f"{name} = ?" for name in fields]
            values: list[Any] = list(fields.values())
            assignments.append(
                f"last_active_at = {self._greatest}(last_active_at, coalesce(?, last_active_at))"
            )
            values.append(last_active_at)
            assignments.append("metadata = ?")
            values.append(json.dumps(metadata))
            self._sql.execute(
                f"UPDATE sessions SET {', '.join(assignments)} WHERE id = ?",
                [*values, session_id],
            )

    def link_parent(self, session_id: str, parent_id: str, kind: ParentKind) -> None:
        """Attach ``session_id`` to ``parent_id`` (a parent imported after its child)."""
        with self._transaction():
            self._sql.execute(
                "UPDATE sessions SET parent_session_id = ?, parent_kind = ? WHERE id = ?",
                (parent_id, kind, session_id),
            )

    def clear_append_marks(self, path: str) -> None:
        """The appends of the last database import of ``path`` are kept: drop their marks."""
        prefix = _APPEND_KEY + path + "#"
        with self._transaction():
            self._sql.execute(
                "DELETE FROM state_meta WHERE substr(key, 1, ?) = ?", (len(prefix), prefix)
            )

    def forget_file(self, path: str) -> None:
        """Drop the bookkeeping row of ``path`` (a first import that was undone)."""
        with self._transaction():
            self._sql.execute("DELETE FROM import_files WHERE path = ?", (path,))

    def discard_run(self, path: str, importer: str, run_started: float) -> int:
        """Undo what a database import of ``path`` that died half-way wrote: the sessions it
        created (stamped with its start time) and its unfinished appends. Returns how many
        sessions were deleted; the next run reads the same part of the database again."""
        for mark_key, (session_id, last_id) in self.pending_appends().items():
            if mark_key.startswith(path + "#"):
                self.undo_pending_append(mark_key, session_id, last_id)
        with self._transaction():
            doomed = [
                str(row[0])
                for row in self._sql.execute(
                    "SELECT id FROM sessions WHERE metadata IS NOT NULL "
                    f"AND {self._json_text('imported_from', 'tool')} = ? "
                    f"AND {self._json_text('imported_from', 'path')} = ? "
                    f"AND {self._json_number('imported_from', 'imported_at')} = ?",
                    (importer, path, run_started),
                ).fetchall()
            ]
            return self._delete_sessions(doomed) if doomed else 0

    # ------------------------------------------------------------------ reads

    def _is_open(self, session_id: str) -> bool:
        row = self._sql.execute(
            "SELECT ended_at IS NULL FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return bool(row[0]) if row else False

    def _session(self, session_id: str) -> Session:
        row = self._sql.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return session_from_row(row)

    # ------------------------------------------------------------------ bulk loads

    def bulk_load(self) -> AbstractContextManager[None]:
        """A ``with`` block around a bulk load (a restore, an import of many logs, a
        migration): a backend may keep its indexes up once at the end instead of row by row.
        Nothing here (SQLite's full-text index takes rows as fast as it is built)."""
        return contextlib.nullcontext()
