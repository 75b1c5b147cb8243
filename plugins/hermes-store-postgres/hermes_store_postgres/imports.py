"""The import engine's door into a PostgreSQL store (see ``hermes_core/store/imports.py`` and
``import_bookkeeping.py`` for the behaviour): bookkeeping rows, imported sessions in batches,
and the plugin events an import fires (``session_started`` on creation, ``session_ended`` when
finishing ends a session created or still open)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import Message, ParentKind, Session, StoreEvents

from hermes_core.store import session_writes
from hermes_core.store.database_imports import REFRESHABLE_FIELDS, ImportedEntry
from hermes_core.store.errors import SessionNotFound
from hermes_core.store.imports import ImportedTotals, ImportFileRecord
from hermes_core.store.rows import SESSION_COLUMNS, session_from_row

from . import writes
from .statements import PostgresSql

if TYPE_CHECKING:
    import psycopg

_RECORD_COLUMNS = (
    "path, importer, size, mtime_ns, cursor, foreign_id, session_id, state, imported_at"
)
_APPEND_KEY = "import_append:"
ANALYZE_AFTER_MESSAGES = 20_000
"""A bulk load (import, restore, migration) refreshes the planner's statistics after this many
messages, and after every half again of what the table held at the last refresh."""


def _database_errors() -> tuple[type[Exception], ...]:
    import psycopg

    return (psycopg.Error,)


class PostgresImportBookkeeping:
    """Import writes and bookkeeping of one PostgreSQL store."""

    def __init__(self, db: psycopg.Connection[tuple[Any, ...]], events: StoreEvents | None) -> None:
        self._db = db
        self._events = events
        self._created: set[str] = set()
        self._loaded_since_analyze = 0
        self._analyze_at = ANALYZE_AFTER_MESSAGES
        self.database_errors = _database_errors()

    def load_files(self) -> dict[str, ImportFileRecord]:
        """Every bookkeeping row by path, in one query."""
        rows = self._db.execute(f"SELECT {_RECORD_COLUMNS} FROM import_files").fetchall()
        return {str(row[0]): ImportFileRecord(*row) for row in rows}

    def _save_file(self, record: ImportFileRecord) -> None:
        self._db.execute(
            f"INSERT INTO import_files ({_RECORD_COLUMNS}) VALUES "
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (path) DO UPDATE SET "
            "importer = excluded.importer, size = excluded.size, mtime_ns = excluded.mtime_ns, "
            "cursor = excluded.cursor, foreign_id = excluded.foreign_id, "
            "session_id = excluded.session_id, state = excluded.state, "
            "imported_at = excluded.imported_at",
            dataclasses.astuple(record),
        )

    def update_file(self, record: ImportFileRecord) -> None:
        """Save the bookkeeping row of ``record.path``; an append in progress on it is over."""
        with self._db.transaction():
            self._save_file(record)
            writes.delete_state(self._db, [_APPEND_KEY + record.path])

    def mark_append(self, path: str, session_id: str, last_kept_id: int) -> None:
        """Note where the session ended before a grown file's new turns are appended."""
        value = json.dumps({"session_id": session_id, "last_id": last_kept_id})
        with self._db.transaction():
            writes.write_state(self._db, {_APPEND_KEY + path: value})

    def pending_appends(self) -> dict[str, tuple[str, int]]:
        """Appends that never finished: path → (session id, last message id kept)."""
        rows = self._db.execute(
            "SELECT key, value FROM state_meta WHERE left(key, %s) = %s",
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
        with self._db.transaction():
            writes.delete_state(self._db, [_APPEND_KEY + path])
        return removed

    # ------------------------------------------------- whole-database imports (Hermes Agent)

    def imported_sessions(self, importer: str) -> dict[str, ImportedEntry]:
        """Foreign session id → the session it became, for every session ``importer`` made."""
        rows = self._db.execute(
            "SELECT id, metadata::jsonb #>> '{imported_from,foreign_id}', "
            "metadata::jsonb #>> '{imported_from,seen}' FROM sessions "
            "WHERE metadata IS NOT NULL AND metadata::jsonb #>> '{imported_from,tool}' = %s",
            (importer,),
        ).fetchall()
        return {
            str(foreign): ImportedEntry(str(session_id), None if seen is None else str(seen))
            for session_id, foreign, seen in rows
            if foreign is not None
        }

    def message_texts(self, session_id: str) -> list[tuple[str, str]]:
        """(role, content) of every message of a session, in order."""
        rows = self._db.execute(
            "SELECT role, content FROM messages WHERE session_id = %s ORDER BY id",
            (session_id,),
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
        """Bring an imported session's totals and end up to date (only the refreshable
        columns) and remember the fingerprint ``seen``, in one transaction."""
        unknown = set(fields) - REFRESHABLE_FIELDS
        if unknown:
            raise TypeError(f"not refreshable: {', '.join(sorted(unknown))}")
        with self._db.transaction():
            row = self._db.execute(
                "SELECT metadata FROM sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if row is None:
                return
            metadata = json.loads(row[0]) if row[0] else {}
            provenance = dict(metadata.get("imported_from") or {})
            provenance["seen"] = seen
            metadata["imported_from"] = provenance
            assignments = [f"{name} = %s" for name in fields]
            values: list[Any] = list(fields.values())
            assignments.append(
                "last_active_at = greatest(last_active_at, coalesce(%s, last_active_at))"
            )
            values.append(last_active_at)
            assignments.append("metadata = %s")
            values.append(json.dumps(metadata))
            self._db.execute(
                f"UPDATE sessions SET {', '.join(assignments)} WHERE id = %s",
                [*values, session_id],
            )

    def link_parent(self, session_id: str, parent_id: str, kind: ParentKind) -> None:
        """Attach ``session_id`` to ``parent_id`` (a parent imported after its child)."""
        with self._db.transaction():
            self._db.execute(
                "UPDATE sessions SET parent_session_id = %s, parent_kind = %s WHERE id = %s",
                (parent_id, kind, session_id),
            )

    def clear_append_marks(self, path: str) -> None:
        """The appends of the last database import of ``path`` are kept: drop their marks."""
        prefix = _APPEND_KEY + path + "#"
        with self._db.transaction():
            self._db.execute(
                "DELETE FROM state_meta WHERE left(key, %s) = %s", (len(prefix), prefix)
            )

    def forget_file(self, path: str) -> None:
        """Drop the bookkeeping row of ``path`` (a first import that was undone)."""
        with self._db.transaction():
            self._db.execute("DELETE FROM import_files WHERE path = %s", (path,))

    def discard_run(self, path: str, importer: str, run_started: float) -> int:
        """Undo what a database import of ``path`` that died half-way wrote: the sessions it
        created (stamped with its start time) and its unfinished appends."""
        for mark_key, (session_id, last_id) in self.pending_appends().items():
            if mark_key.startswith(path + "#"):
                self.undo_pending_append(mark_key, session_id, last_id)
        with self._db.transaction():
            doomed = [
                str(row[0])
                for row in self._db.execute(
                    "SELECT id FROM sessions WHERE metadata IS NOT NULL "
                    "AND metadata::jsonb #>> '{imported_from,tool}' = %s "
                    "AND metadata::jsonb #>> '{imported_from,path}' = %s "
                    "AND (metadata::jsonb #> '{imported_from,imported_at}')::float8 = %s",
                    (importer, path, run_started),
                ).fetchall()
            ]
            return writes.delete_sessions(self._db, doomed) if doomed else 0

    def session_of_foreign_id(self, importer: str, foreign_id: str) -> str | None:
        found = self.import_of_foreign_id(importer, foreign_id)
        return None if found is None else found[0]

    def import_of_foreign_id(self, importer: str, foreign_id: str) -> tuple[str, str] | None:
        row = self._db.execute(
            "SELECT session_id, path FROM import_files WHERE importer = %s AND foreign_id = %s "
            "AND session_id IS NOT NULL AND state = 'done' ORDER BY imported_at LIMIT 1",
            (importer, foreign_id),
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def delegate_of_foreign_id(self, parent_id: str, foreign_id: str) -> str | None:
        row = self._db.execute(
            "SELECT id FROM sessions WHERE parent_session_id = %s AND parent_kind = 'delegate' "
            "AND metadata IS NOT NULL "
            "AND (metadata::jsonb -> 'imported_from' ->> 'foreign_id') = %s LIMIT 1",
            (parent_id, foreign_id),
        ).fetchone()
        return None if row is None else str(row[0])

    def session_exists(self, session_id: str) -> bool:
        return session_writes.session_exists(PostgresSql(self._db), session_id)

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
        """Create an imported (or restored) session row with its bookkeeping row in state
        ``importing``; fires ``session_started``."""
        with self._db.transaction():
            created = session_writes.insert_session(
                PostgresSql(self._db),
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
        """Append one batch with its own timestamps (one transaction, counters included)."""
        if not messages:
            return 0
        with self._db.transaction():
            inserted = writes.insert_messages(self._db, session_id, messages, default_timestamp)
            writes.add_to_counters(self._db, session_id, inserted)
        self._loaded_since_analyze += len(messages)
        if self._loaded_since_analyze >= self._analyze_at:
            self._analyze()
        return len(messages)

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

    def finish_session(
        self, session_id: str, totals: ImportedTotals, *, title_source: str = "import"
    ) -> str | None:
        """Title (made unique; an existing one is kept), end, totals and workspace of an
        imported session, in one transaction; fires ``session_ended`` as the module says."""
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
        with self._db.transaction():
            row = self._db.execute(
                "SELECT title, metadata FROM sessions WHERE id = %s FOR UPDATE", (session_id,)
            ).fetchone()
            if row is None:
                return None
            title: str | None = row[0]
            proposal = totals.title_proposal
            if title is None and proposal:
                sql = PostgresSql(self._db)
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
            self._db.execute(
                "UPDATE sessions SET "
                "started_at = least(started_at, coalesce(%(started)s::float8, started_at)), "
                "ended_at = CASE WHEN %(ended)s::float8 IS NULL THEN ended_at "
                "  ELSE greatest(coalesce(ended_at, %(ended)s), %(ended)s) END, "
                "end_reason = coalesce(%(reason)s, end_reason), "
                "last_active_at = greatest(last_active_at, "
                "  coalesce(%(ended)s::float8, last_active_at)), "
                "input_tokens = input_tokens + %(input)s, "
                "output_tokens = output_tokens + %(output)s, "
                "cache_read_tokens = cache_read_tokens + %(cache_read)s, "
                "cache_write_tokens = cache_write_tokens + %(cache_write)s, "
                "cwd = coalesce(cwd, %(cwd)s), git_branch = coalesce(%(branch)s, git_branch), "
                "model = coalesce(%(model)s, model), metadata = %(metadata)s WHERE id = %(id)s",
                {
                    "started": totals.started_at,
                    "ended": totals.ended_at,
                    "reason": totals.end_reason,
                    "input": totals.input_tokens,
                    "output": totals.output_tokens,
                    "cache_read": totals.cache_read_tokens,
                    "cache_write": totals.cache_write_tokens,
                    "cwd": totals.cwd,
                    "branch": totals.git_branch,
                    "model": totals.model,
                    "metadata": json.dumps(metadata) if metadata else None,
                    "id": session_id,
                },
            )
        return title

    def discard_partial(self, record: ImportFileRecord) -> int:
        """Delete what an interrupted import of ``record.path`` left and forget the file."""
        with self._db.transaction():
            deleted = 0
            if record.session_id is not None and session_writes.session_exists(
                PostgresSql(self._db), record.session_id
            ):
                doomed = writes.with_delegates(self._db, [record.session_id])
                deleted = writes.delete_sessions(self._db, doomed)
            self._db.execute("DELETE FROM import_files WHERE path = %s", (record.path,))
        return deleted

    def last_message_id(self, session_id: str, back: int = 0) -> int:
        """The id of the session's newest message, or of the one ``back`` places before it
        (0 when there is none)."""
        if back == 0:
            row = self._db.execute(
                "SELECT coalesce(max(id), 0) FROM messages WHERE session_id = %s", (session_id,)
            ).fetchone()
        else:
            row = self._db.execute(
                "SELECT id FROM messages WHERE session_id = %s ORDER BY id DESC LIMIT 1 OFFSET %s",
                (session_id, back),
            ).fetchone()
        return int(row[0]) if row else 0

    def discard_messages_after(
        self, session_id: str, last_id: int, up_to_id: int | None = None
    ) -> int:
        """Delete the session's messages newer than ``last_id`` (up to ``up_to_id`` when
        given) and recount its counters."""
        where = "session_id = %s AND id > %s"
        params: list[object] = [session_id, last_id]
        if up_to_id is not None:
            where += " AND id <= %s"
            params.append(up_to_id)
        with self._db.transaction():
            removed = self._db.execute(f"DELETE FROM messages WHERE {where}", params).rowcount
            self._db.execute(
                "UPDATE sessions SET "
                "message_count = (SELECT count(*) FROM messages WHERE session_id = sessions.id), "
                "tool_call_count = (SELECT coalesce(sum(json_array_length(tool_calls::json)), 0) "
                "  FROM messages WHERE session_id = sessions.id AND tool_calls IS NOT NULL) "
                "WHERE id = %s",
                (session_id,),
            )
        return int(removed)

    def _is_open(self, session_id: str) -> bool:
        row = self._db.execute(
            "SELECT ended_at IS NULL FROM sessions WHERE id = %s", (session_id,)
        ).fetchone()
        return bool(row[0]) if row else False

    def _session(self, session_id: str) -> Session:
        row = self._db.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = %s", (session_id,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return session_from_row(row)
