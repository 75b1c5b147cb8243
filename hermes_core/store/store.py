"""``SessionStore``: the one public way to read and write sessions.

The command line, the gateway and any agent runtime record sessions through this facade;
nothing else writes SQL against ``state.db``. One instance holds one connection and is meant
for one thread (the automatic-title worker opens its own).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hermes_hookspecs import Message, ParentKind, Session

from . import fulltext
from .connection import open_connection, write_transaction
from .errors import InvalidTitle, SessionNotFound, StoreUnavailable, TitleInUse
from .ids import new_session_id
from .lookup import resolve_reference
from .rows import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    SESSION_COLUMNS_QUALIFIED,
    message_from_row,
    session_from_row,
    tool_calls_to_json,
)
from .schema import migrate
from .titles import MAX_TITLE_LENGTH, cut_title, lineage_title, sanitize_title, split_lineage_title

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter

    from .maintenance import StoreStats

STATE_DB_NAME = "state.db"
AUTO_TITLE_WINDOW = 20
"""Automatic titles are only considered while a session has at most this many messages."""


class SessionEvents(Protocol):
    """What the store tells the outside world (the plugin host implements it)."""

    def session_started(self, session: Session) -> None: ...
    def session_ended(self, session: Session, reason: str) -> None: ...
    def generate_title(self, session: Session, messages: Sequence[Message]) -> str | None: ...


class SessionStore:
    """Sessions and their messages in ``$HERMES_HOME/state.db``."""

    def __init__(self, path: Path | str, *, events: SessionEvents | None = None) -> None:
        self.path = Path(path)
        self._events = events
        self._connection = open_connection(self.path)
        try:
            migrate(self._connection)
            self._connection.execute("SELECT count(*) FROM sessions LIMIT 1").fetchone()
        except sqlite3.DatabaseError as error:
            self._connection.close()
            raise StoreUnavailable(f"{self.path}: {error}") from error
        except BaseException:
            self._connection.close()
            raise
        self._title_threads: list[threading.Thread] = []

    @classmethod
    def open(cls, home: Path | str, *, events: SessionEvents | None = None) -> SessionStore:
        """Open (creating if needed) the store of the Hermes home directory ``home``."""
        return cls(Path(home) / STATE_DB_NAME, events=events)

    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying connection, for the store's own service modules."""
        return self._connection

    def close(self) -> None:
        """Wait briefly for automatic titles in flight, then close the connection."""
        self.wait_for_titles(timeout=5.0)
        self._connection.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ sessions

    def create_session(
        self,
        source: str = "cli",
        *,
        session_id: str | None = None,
        title: str | None = None,
        started_at: float | None = None,
        gateway: bool = False,
        system_prompt: str | None = None,
        model_config: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        parent_session_id: str | None = None,
        parent_kind: ParentKind | None = None,
        **fields: Any,
    ) -> Session:
        """Create a session row and return it.

        ``fields`` are further ``Session`` attributes (``user_id``, ``model``, ``cwd``,
        ``git_branch``, ``git_repo_root``, ``chat_id``, ``chat_type``, ``thread_id``,
        ``session_key``, ``billing_provider``, ``input_tokens``…). A title queued with
        :meth:`queue_title` before the row existed is applied now (SPEC S4).
        """
        unknown = set(fields) - _CREATABLE_FIELDS
        if unknown:
            raise TypeError(f"unknown session fields: {', '.join(sorted(unknown))}")
        if (parent_session_id is None) != (parent_kind is None):
            raise ValueError("parent_session_id and parent_kind go together")
        started = time.time() if started_at is None else started_at
        generated = session_id is None
        session_id = session_id or new_session_id(gateway=gateway, now=started)
        with write_transaction(self._connection) as db:
            # 6 hex digits collide easily among sessions started in the same second (bulk
            # imports): draw again rather than refuse an id the caller never chose.
            taken = "SELECT 1 FROM sessions WHERE id = ?"
            while generated and db.execute(taken, (session_id,)).fetchone():
                session_id = new_session_id(gateway=gateway, now=started)
            queued = self._take_queued_title(db, session_id)
            clean_title, title_source = None, None
            if title is not None:
                clean_title, title_source = self._checked_manual_title(db, title), "user"
            elif queued is not None:
                # Checked when queued, but another session may have taken it since: record
                # the session untitled rather than refuse to record it at all.
                taken = db.execute("SELECT 1 FROM sessions WHERE title = ?", (queued,)).fetchone()
                if not taken:
                    clean_title, title_source = queued, "user"
            prompt_hash = self._store_system_prompt(db, system_prompt)
            columns = {
                "id": session_id,
                "source": source,
                "title": clean_title,
                "title_source": title_source,
                "started_at": started,
                "last_active_at": started,
                "system_prompt_hash": prompt_hash,
                "model_config": json.dumps(model_config) if model_config is not None else None,
                "metadata": json.dumps(metadata) if metadata else None,
                "parent_session_id": parent_session_id,
                "parent_kind": parent_kind,
                **fields,
            }
            names = ", ".join(columns)
            marks = ", ".join("?" for _ in columns)
            try:
                db.execute(
                    f"INSERT INTO sessions ({names}) VALUES ({marks})", list(columns.values())
                )
            except sqlite3.IntegrityError as error:
                if "sessions.id" in str(error):
                    raise ValueError(f"a session with id {session_id} already exists") from error
                if "FOREIGN KEY" in str(error):
                    raise SessionNotFound(f"no session {parent_session_id}") from error
                raise
        session = self.get_session(session_id)
        if self._events is not None:
            self._events.session_started(session)
        return session

    def queue_title(self, session_id: str, title: str) -> None:
        """Set a title now if the session exists, else keep it for when it is created (S4)."""
        with write_transaction(self._connection) as db:
            exists = db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            clean = self._checked_manual_title(db, title, exclude_id=session_id)
            if exists:
                self._write_title(db, session_id, clean, "user")
            else:
                db.execute(
                    "INSERT OR REPLACE INTO state_meta(key, value) VALUES (?, ?)",
                    (f"queued_title:{session_id}", clean),
                )

    def get_session(self, session_id: str) -> Session:
        """The session with exactly this id."""
        row = self._connection.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        prompt = None
        if row[7] is not None:
            found = self._connection.execute(
                "SELECT prompt FROM system_prompts WHERE hash = ?", (row[7],)
            ).fetchone()
            prompt = found[0] if found else None
        return session_from_row(row, prompt)

    def resolve(self, reference: str) -> str:
        """The id a person means by ``reference``: an id, a unique id prefix, or a title (the
        newest session of that title's compression lineage)."""
        return resolve_reference(self._connection, reference)

    def end_session(
        self, session_id: str, reason: str, *, ended_at: float | None = None
    ) -> Session:
        """Mark a session ended with ``reason`` (see ``END_REASONS``). Ending twice keeps the first."""
        ended = time.time() if ended_at is None else ended_at
        with write_transaction(self._connection) as db:
            changed = db.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
                (ended, reason, session_id),
            ).rowcount
            if (
                not changed
                and not db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
            ):
                raise SessionNotFound(f"no session {session_id}")
        session = self.get_session(session_id)
        if changed and self._events is not None:
            self._events.session_ended(session, reason)
        return session

    def reopen_session(self, session_id: str) -> None:
        """Clear the end marks of a session that is being resumed."""
        with write_transaction(self._connection) as db:
            db.execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", (session_id,)
            )

    def set_title(self, session_id: str, title: str) -> Session:
        """Set a title by hand: sanitised, at most 100 characters, unique (SPEC S4)."""
        with write_transaction(self._connection) as db:
            if not db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise SessionNotFound(f"no session {session_id}")
            clean = self._checked_manual_title(db, title, exclude_id=session_id)
            self._write_title(db, session_id, clean, "user")
        return self.get_session(session_id)

    def continue_after_compression(self, session_id: str, **fields: Any) -> Session:
        """End ``session_id`` with reason ``compression`` and create its continuation (S6).

        The parent keeps its messages. A titled parent gives the child the next numbered title
        of the lineage: ``my project`` → ``my project #2`` → ``my project #3``.
        """
        parent = self.get_session(session_id)
        if parent.ended_at is None:
            self.end_session(session_id, "compression")
        inherited = {
            name: getattr(parent, name)
            for name in (
                "user_id",
                "model",
                "cwd",
                "git_branch",
                "git_repo_root",
                "chat_id",
                "chat_type",
                "thread_id",
                "session_key",
                "billing_provider",
            )
        }
        inherited.update(fields)
        child = self.create_session(
            parent.source,
            gateway=len(parent.id.rsplit("_", 1)[-1]) == 8,
            system_prompt=parent.system_prompt,
            model_config=parent.model_config,
            parent_session_id=parent.id,
            parent_kind="compression",
            **inherited,
        )
        if parent.title:
            with write_transaction(self._connection) as db:
                base, _number = split_lineage_title(parent.title)
                title = self._next_lineage_title(db, base)
                self._write_title(db, child.id, title, "lineage")
            child = self.get_session(child.id)
        return child

    def _next_lineage_title(self, db: sqlite3.Connection, base: str) -> str:
        highest = 1
        rows = db.execute(
            "SELECT title FROM sessions WHERE title = ? OR substr(title, 1, ?) = ?",
            (base, len(base) + 2, base + " #"),
        )
        for (title,) in rows:
            found_base, number = split_lineage_title(title)
            if found_base == base:
                highest = max(highest, number)
        # A base cut to make room for the suffix is another lineage to the query above, so
        # its numbers can already be taken: skip to the first free one.
        number = highest + 1
        while True:
            suffix = f" #{number}"
            stem = base
            if len(stem) + len(suffix) > MAX_TITLE_LENGTH:
                stem = stem[: MAX_TITLE_LENGTH - len(suffix)].rstrip()
            title = lineage_title(stem, number)
            if not db.execute("SELECT 1 FROM sessions WHERE title = ?", (title,)).fetchone():
                return title
            number += 1

    def delete_session(self, session_id: str) -> list[str]:
        """Delete a session with its messages; its delegate/subagent children go with it,
        other children are kept and lose their parent link. Returns the deleted ids."""
        with write_transaction(self._connection) as db:
            if not db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                raise SessionNotFound(f"no session {session_id}")
            doomed = self._with_delegates(db, [session_id])
            self._delete_rows(db, doomed)
        return doomed

    def delete_sessions(self, session_ids: Sequence[str], *, batch_size: int = 500) -> int:
        """Delete many sessions (and their delegates) in batches, each batch one transaction.
        Returns how many sessions were deleted."""
        deleted = 0
        for start in range(0, len(session_ids), batch_size):
            with write_transaction(self._connection) as db:
                batch = [i for i in session_ids[start : start + batch_size]]
                doomed = self._with_delegates(db, batch)
                deleted += self._delete_rows(db, doomed)
        return deleted

    @staticmethod
    def _with_delegates(db: sqlite3.Connection, session_ids: Sequence[str]) -> list[str]:
        found = list(dict.fromkeys(session_ids))
        frontier = list(found)
        while frontier:
            marks = ",".join("?" for _ in frontier)
            children = [
                row[0]
                for row in db.execute(
                    f"SELECT id FROM sessions WHERE parent_kind = 'delegate' "
                    f"AND parent_session_id IN ({marks})",
                    frontier,
                )
            ]
            frontier = [c for c in children if c not in found]
            found.extend(frontier)
        return found

    @staticmethod
    def _delete_rows(db: sqlite3.Connection, session_ids: Sequence[str]) -> int:
        total = 0
        for start in range(0, len(session_ids), 500):
            chunk = list(session_ids[start : start + 500])
            marks = ",".join("?" for _ in chunk)
            fulltext.unindex_messages(db, f"session_id IN ({marks})", chunk)
            db.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", chunk)
            total += db.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk).rowcount
        db.execute(
            "DELETE FROM system_prompts WHERE hash NOT IN "
            "(SELECT system_prompt_hash FROM sessions WHERE system_prompt_hash IS NOT NULL)"
        )
        return total

    def set_pinned(self, session_ids: Iterable[str], pinned: bool) -> int:
        """Pin or unpin sessions; returns how many changed."""
        return self._set_flag("pinned", session_ids, pinned)

    def set_archived(self, session_ids: Iterable[str], archived: bool) -> int:
        """Archive (hide from listings, keep everything) or unarchive sessions."""
        return self._set_flag("archived", session_ids, archived)

    def _set_flag(self, column: str, session_ids: Iterable[str], value: bool) -> int:
        ids = list(session_ids)
        changed = 0
        with write_transaction(self._connection) as db:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" for _ in chunk)
                changed += db.execute(
                    f"UPDATE sessions SET {column} = ? WHERE id IN ({marks}) AND {column} != ?",
                    [int(value), *chunk, int(value)],
                ).rowcount
        return changed

    def record_usage(
        self,
        session_id: str,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cost_actual_usd: float | None = None,
        cost_estimated_usd: float | None = None,
        billing_provider: str | None = None,
    ) -> None:
        """Add token counts and cost of one model call to a session's totals."""
        with write_transaction(self._connection) as db:
            changed = db.execute(
                "UPDATE sessions SET input_tokens = input_tokens + ?, "
                "output_tokens = output_tokens + ?, "
                "cost_actual_usd = CASE WHEN ? IS NULL THEN cost_actual_usd "
                "  ELSE coalesce(cost_actual_usd, 0) + ? END, "
                "cost_estimated_usd = CASE WHEN ? IS NULL THEN cost_estimated_usd "
                "  ELSE coalesce(cost_estimated_usd, 0) + ? END, "
                "billing_provider = coalesce(?, billing_provider) WHERE id = ?",
                (
                    input_tokens,
                    output_tokens,
                    cost_actual_usd,
                    cost_actual_usd,
                    cost_estimated_usd,
                    cost_estimated_usd,
                    billing_provider,
                    session_id,
                ),
            ).rowcount
            if not changed:
                raise SessionNotFound(f"no session {session_id}")

    def select_sessions(
        self,
        selection: SessionFilter | None = None,
        *,
        newest_first: bool = True,
        limit: int | None = None,
        pinned_first: bool = False,
    ) -> list[Session]:
        """Sessions matching ``selection`` (SPEC F1), by last activity."""
        return list(
            self.iter_selected(
                selection, newest_first=newest_first, limit=limit, pinned_first=pinned_first
            )
        )

    def iter_selected(
        self,
        selection: SessionFilter | None = None,
        *,
        newest_first: bool = True,
        limit: int | None = None,
        pinned_first: bool = False,
    ) -> Iterator[Session]:
        """Stream the sessions matching ``selection`` without holding them all."""
        from hermes_core.selection.filters import SessionFilter, build_where

        where, params = build_where(selection or SessionFilter())
        return self._query_sessions(
            where, params, newest_first=newest_first, limit=limit, pinned_first=pinned_first
        )

    def list_sessions(
        self, selection: SessionFilter | None = None, *, limit: int = 20
    ) -> list[Session]:
        """What ``hermes sessions list`` shows: every pinned match (pinned sessions always
        show), then the ``limit`` most recently active other matches."""
        from hermes_core.selection.filters import SessionFilter, build_where

        where, params = build_where(selection or SessionFilter())
        pinned = self._query_sessions(f"({where}) AND s.pinned = 1", params)
        others = self._query_sessions(f"({where}) AND s.pinned = 0", params, limit=limit)
        return [*pinned, *others]

    def count_sessions(self, selection: SessionFilter | None = None) -> int:
        """How many sessions match ``selection``."""
        from hermes_core.selection.filters import SessionFilter, build_where

        where, params = build_where(selection or SessionFilter())
        count: int = self._connection.execute(
            f"SELECT count(*) FROM sessions s WHERE {where}", params
        ).fetchone()[0]
        return count

    def _query_sessions(
        self,
        where: str,
        params: Sequence[object],
        *,
        newest_first: bool = True,
        limit: int | None = None,
        pinned_first: bool = False,
    ) -> Iterator[Session]:
        direction = "DESC" if newest_first else "ASC"
        order = f"s.last_active_at {direction}, s.id {direction}"
        if pinned_first:
            order = "s.pinned DESC, " + order
        sql = f"SELECT {SESSION_COLUMNS_QUALIFIED} FROM sessions s WHERE {where} ORDER BY {order}"
        arguments = list(params)
        if limit is not None:
            sql += " LIMIT ?"
            arguments.append(limit)
        cursor = self._connection.execute(sql, arguments)
        while rows := cursor.fetchmany(200):
            for row in rows:
                yield session_from_row(row)

    def previews(self, session_ids: Sequence[str], *, length: int = 200) -> dict[str, str]:
        """The start of each session's first user message (what listings show)."""
        found: dict[str, str] = {}
        for session_id in session_ids:
            row = self._connection.execute(
                "SELECT substr(content, 1, ?) FROM messages WHERE session_id = ? AND role = 'user' "
                "ORDER BY id LIMIT 1",
                (length, session_id),
            ).fetchone()
            found[session_id] = " ".join(row[0].split()) if row else ""
        return found

    def stats(self) -> StoreStats:
        """Counts and size for ``hermes sessions stats``."""
        from .maintenance import collect_stats

        return collect_stats(self._connection, self.path)

    # ------------------------------------------------------------------ messages

    def append_message(self, session_id: str, message: Message) -> int:
        """Append one message; returns its id."""
        ids = self.append_messages(session_id, [message])
        return ids[0]

    def append_messages(self, session_id: str, messages: Iterable[Message]) -> range:
        """Append messages in one transaction (the fast path for bulk loads); returns their ids.

        Message rows and their index rows are written together: a crash leaves either the
        whole batch or none of it.
        """
        now = time.time()
        rows = []
        cjk_texts: list[str | None] = []
        tool_calls = 0
        has_assistant = False
        last_timestamp = None
        for message in messages:
            timestamp = now if message.timestamp is None else message.timestamp
            last_timestamp = timestamp if last_timestamp is None else max(last_timestamp, timestamp)
            rows.append(
                (
                    session_id,
                    message.role,
                    message.content,
                    tool_calls_to_json(message.tool_calls),
                    message.tool_call_id,
                    message.tool_name,
                    message.reasoning,
                    timestamp,
                    message.token_count,
                    message.platform_message_id,
                )
            )
            cjk_texts.append(
                fulltext.cjk_runs(fulltext.indexed_text(message.role, message.content))
            )
            tool_calls += len(message.tool_calls)
            has_assistant = has_assistant or message.role == "assistant"
        if not rows:
            return range(0)
        with write_transaction(self._connection) as db:
            state = db.execute(
                "UPDATE sessions SET message_count = message_count + ?, "
                "tool_call_count = tool_call_count + ?, "
                "last_active_at = max(last_active_at, ?) WHERE id = ? "
                "RETURNING title IS NULL, message_count",
                (len(rows), tool_calls, last_timestamp, session_id),
            ).fetchone()
            if state is None:
                raise SessionNotFound(f"no session {session_id}")
            untitled, count = state
            first_exchange = (
                untitled
                and has_assistant
                and count <= AUTO_TITLE_WINDOW
                and db.execute(
                    "SELECT 1 FROM messages WHERE session_id = ? AND role = 'assistant' LIMIT 1",
                    (session_id,),
                ).fetchone()
                is None
            )
            db.executemany(
                "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, "
                "tool_name, reasoning, timestamp, token_count, platform_message_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            # One writer holds the lock, so the new ids are the consecutive ones ending here.
            last_id: int = db.execute("SELECT last_insert_rowid()").fetchone()[0]
            first_id = last_id - len(rows) + 1
            cjk_rows = [(first_id + i, text) for i, text in enumerate(cjk_texts) if text]
            fulltext.index_new_messages(db, first_id, last_id, cjk_rows)
        if first_exchange and self._events is not None:
            self._start_auto_title(session_id)
        return range(first_id, last_id + 1)

    def update_message_content(self, message_id: int, content: str) -> None:
        """Replace a message's text, keeping the indexes in step."""
        with write_transaction(self._connection) as db:
            row = db.execute("SELECT role FROM messages WHERE id = ?", (message_id,)).fetchone()
            if row is None:
                raise KeyError(f"no message {message_id}")
            fulltext.unindex_messages(db, "id = ?", [message_id])
            db.execute("UPDATE messages SET content = ? WHERE id = ?", (content, message_id))
            runs = fulltext.cjk_runs(fulltext.indexed_text(row[0], content))
            fulltext.index_new_messages(
                db, message_id, message_id, [(message_id, runs)] if runs else []
            )

    def messages(self, session_id: str) -> list[Message]:
        """All messages of a session, oldest first."""
        return list(self.iter_messages(session_id))

    def iter_messages(self, session_id: str, *, batch: int = 500) -> Iterator[Message]:
        """Stream a session's messages, oldest first, without holding them all."""
        cursor = self._connection.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id",
            (session_id,),
        )
        while rows := cursor.fetchmany(batch):
            for row in rows:
                yield message_from_row(row)

    # ------------------------------------------------------------------ titles

    def _checked_manual_title(
        self, db: sqlite3.Connection, title: str | None, *, exclude_id: str | None = None
    ) -> str:
        clean = sanitize_title(title or "")
        if clean is None:
            raise InvalidTitle("a title cannot be empty")
        if len(clean) > MAX_TITLE_LENGTH:
            raise InvalidTitle(
                f"title too long ({len(clean)} characters, at most {MAX_TITLE_LENGTH})"
            )
        owner = db.execute("SELECT id FROM sessions WHERE title = ?", (clean,)).fetchone()
        if owner is not None and owner[0] != exclude_id:
            raise TitleInUse(f"title '{clean}' is already used by session {owner[0]}")
        return clean

    @staticmethod
    def _write_title(db: sqlite3.Connection, session_id: str, title: str, source: str) -> None:
        db.execute(
            "UPDATE sessions SET title = ?, title_source = ? WHERE id = ?",
            (title, source, session_id),
        )

    @staticmethod
    def _take_queued_title(db: sqlite3.Connection, session_id: str) -> str | None:
        key = f"queued_title:{session_id}"
        row = db.execute("SELECT value FROM state_meta WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        db.execute("DELETE FROM state_meta WHERE key = ?", (key,))
        return str(row[0])

    @staticmethod
    def _store_system_prompt(db: sqlite3.Connection, prompt: str | None) -> str | None:
        if prompt is None:
            return None
        digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()
        db.execute(
            "INSERT OR IGNORE INTO system_prompts(hash, prompt) VALUES (?, ?)", (digest, prompt)
        )
        return digest

    def apply_automatic_title(self, session_id: str, proposal: str) -> str | None:
        """Store an automatic title unless a title exists by now; cut to 100 characters and
        made unique with a `` (2)``-style suffix. Returns the title stored, if any."""
        clean = sanitize_title(proposal)
        if clean is None:
            return None
        with write_transaction(self._connection) as db:
            candidate = cut_title(clean)
            number = 1
            while db.execute(
                "SELECT 1 FROM sessions WHERE title = ? AND id != ?", (candidate, session_id)
            ).fetchone():
                number += 1
                suffix = f" ({number})"
                candidate = cut_title(clean, MAX_TITLE_LENGTH - len(suffix)) + suffix
            changed = db.execute(
                "UPDATE sessions SET title = ?, title_source = 'auto' WHERE id = ? AND title IS NULL",
                (candidate, session_id),
            ).rowcount
        return candidate if changed else None

    def _start_auto_title(self, session_id: str) -> None:
        from .autotitle import generate_title_in_background

        if self._events is None:
            return
        thread = generate_title_in_background(self.path, session_id, self._events)
        self._title_threads = [t for t in self._title_threads if t.is_alive()] + [thread]

    def wait_for_titles(self, timeout: float | None = None) -> None:
        """Wait for automatic titles being generated in the background (tests, shutdown)."""
        for thread in list(self._title_threads):
            thread.join(timeout)


_CREATABLE_FIELDS = {
    "user_id",
    "model",
    "cwd",
    "git_branch",
    "git_repo_root",
    "chat_id",
    "chat_type",
    "thread_id",
    "session_key",
    "billing_provider",
    "cost_actual_usd",
    "cost_estimated_usd",
    "input_tokens",
    "output_tokens",
    "pinned",
    "archived",
    "ended_at",
    "end_reason",
    "last_active_at",
    "title_source",
}
