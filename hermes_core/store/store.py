"""``SessionStore``: the one public way to read and write sessions.

The command line, the gateway and any agent runtime record sessions through this facade;
nothing else writes SQL against ``state.db``. One instance holds one connection and is meant
for one thread (the automatic-title worker opens its own). It is the built-in SQLite backend
of :class:`~hermes_core.store.protocol.Store`; the engines' many small reads go through its
facets ``search_index``, ``lifecycle``, ``imports``, ``routing`` and ``handoffs``.

Every write that starts or ends a session fires the plugin events, whatever its origin:
``create_session``, ``end_session``, ``continue_after_compression``, imports and restores
(through ``imports``), and deleting a session that was still open (``session_ended`` with
reason ``deleted``). Prune and archive touch ended sessions only and fire nothing.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hermes_hookspecs import Message, ParentKind, Session

from . import fulltext, lineage_queries, rowwrites
from .connection import (
    BackgroundMaintenance,
    open_connection,
    open_reader,
    write_transaction,
)
from .errors import SessionNotFound, StoreError, StoreFull, StoreReadOnly
from .failures import store_error, write_refusal
from .lookup import resolve_reference
from .rows import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    SESSION_COLUMNS_QUALIFIED,
    message_from_row,
    session_from_row,
)
from .schema import check_readable_schema, migrate
from .state_meta import list_state as _list_state
from .state_meta import read_state as _read_state
from .state_meta import write_state as _write_state
from .validation import check_usage

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter

    from .autotitle import TitleJob
    from .backups import BackupSettings, RollingBackups
    from .handoffs import HandoffRegistry
    from .import_bookkeeping import SqliteImportBookkeeping
    from .insight_rows import InsightRows
    from .lifecycle_queries import SqliteLifecycle
    from .maintenance import StoreStats
    from .routed_sessions import RoutingStore
    from .search_queries import SqliteSearchIndex

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

    def __init__(
        self,
        path: Path | str,
        *,
        events: SessionEvents | None = None,
        write_lock: threading.Lock | None = None,
    ) -> None:
        """Open the store at ``path``. Threads of one process that each open their own store
        on the same file may share a ``write_lock`` so their writes queue without SQLite's
        sleeping busy handler."""
        self.path = Path(path)
        self._events = events
        self._connection = _open_and_migrate(self.path, write_lock)
        self._title_threads: list[TitleJob] = []
        self._backups: RollingBackups | None = None
        self._maintenance: BackgroundMaintenance | None = None
        if not self.read_only:
            # Checkpoints and index merges run off the writer's thread (see
            # BackgroundMaintenance), which shares the writer's lock of this process.
            self._connection.execute("PRAGMA wal_autocheckpoint = 0")
            lock = getattr(self._connection, "write_lock", None)
            if lock is None:
                lock = threading.Lock()
                self._connection.write_lock = lock  # type: ignore[attr-defined]
            self._maintenance = BackgroundMaintenance(self.path, lock)

    # The facets are made on first use: a chat start needs none of their modules.

    @cached_property
    def search_index(self) -> SqliteSearchIndex:
        """The reads of ``session_search`` and the browse picker."""
        from .search_queries import SqliteSearchIndex

        return SqliteSearchIndex(self._connection)

    @cached_property
    def lifecycle(self) -> SqliteLifecycle:
        """What prune, archive and the automatic clean-up read and write."""
        from .lifecycle_queries import SqliteLifecycle

        return SqliteLifecycle(self._connection, self.path)

    @cached_property
    def imports(self) -> SqliteImportBookkeeping:
        """Import writes and bookkeeping (their sessions fire the plugin events)."""
        from .import_bookkeeping import SqliteImportBookkeeping

        return SqliteImportBookkeeping(self._connection, self._events)

    @cached_property
    def routing(self) -> RoutingStore:
        """The routing table: the gateway's routed sessions, recovery reads, home channels
        and repair, and the raw rows migrate and imports copy."""
        from .routed_sessions import RoutingStore

        return RoutingStore(self)

    @cached_property
    def handoffs(self) -> HandoffRegistry:
        """The ``/handoff`` registry and what ``/sethome`` knew of the home channel."""
        from .handoffs import HandoffRegistry

        return HandoffRegistry(self._connection)

    @classmethod
    def open(cls, home: Path | str, *, events: SessionEvents | None = None) -> SessionStore:
        """Open (creating if needed) the store of the Hermes home directory ``home``."""
        return cls(Path(home) / STATE_DB_NAME, events=events)

    @property
    def events(self) -> SessionEvents | None:
        """Who hears about sessions starting and ending (the plugin host), if anyone."""
        return self._events

    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying connection, for the store's own modules and SQLite-level tests
        (engines use the typed methods and facets: another backend has no connection)."""
        return self._connection

    @property
    def url(self) -> str:
        """Where this store lives, as a ``store.url``."""
        return f"sqlite:///{self.path}"

    @property
    def read_only(self) -> bool:
        """True when the store was opened for reading only: its file, folder or disk cannot
        be written (a read-only mount, an immutable file, a full disk). Every write then
        raises :class:`~.errors.StoreReadOnly` (or :class:`~.errors.StoreFull`)."""
        return getattr(self._connection, "write_refusal", None) is not None

    def require_writable(self) -> None:
        """Raise what a write would raise when the store is read-only (commands that would
        write much, such as the gateway, refuse at start rather than at their first write)."""
        refusal = getattr(self._connection, "write_refusal", None)
        if refusal is not None:
            raise type(refusal)(str(refusal))

    def start_backups(self, settings: BackupSettings) -> None:
        """Take rolling backups of the store while it is open (see :mod:`.backups`): now if
        one is due, then whenever the interval has passed, each copy made by a process of its
        own that nobody waits for. Nothing for a read-only store or when ``settings`` turn
        them off."""
        if self.read_only or not settings.enabled or self._backups is not None:
            return
        from .backups import RollingBackups

        self._backups = RollingBackups(self.path, settings)

    def close(self) -> None:
        """Wait briefly for automatic titles in flight, then close the connection."""
        self.wait_for_titles(timeout=5.0)
        if self._backups is not None:
            self._backups.stop()
            self._backups = None
        if self._maintenance is not None:
            self._maintenance.stop()
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
        started = time.time() if started_at is None else started_at
        with write_transaction(self._connection) as db:
            session_id = rowwrites.insert_session(
                db,
                source=source,
                session_id=session_id,
                gateway=gateway,
                started=started,
                title=title,
                system_prompt=system_prompt,
                model_config=model_config,
                metadata=metadata,
                parent_session_id=parent_session_id,
                parent_kind=parent_kind,
                fields=fields,
            )
        session = self.get_session(session_id)
        if self._events is not None:
            self._events.session_started(session)
        return session

    def queue_title(self, session_id: str, title: str) -> None:
        """Set a title now if the session exists, else keep it for when it is created (S4)."""
        with write_transaction(self._connection) as db:
            clean = rowwrites.checked_manual_title(db, title, exclude_id=session_id)
            if rowwrites.session_exists(db, session_id):
                rowwrites.write_title(db, session_id, clean, "user")
            else:
                rowwrites.queue_title(db, session_id, clean)

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
            clean = rowwrites.checked_manual_title(db, title, exclude_id=session_id)
            rowwrites.write_title(db, session_id, clean, "user")
        return self.get_session(session_id)

    def continue_after_compression(self, session_id: str, **fields: Any) -> Session:
        """End ``session_id`` with reason ``compression`` and create its continuation (S6),
        in one transaction.

        The parent keeps its messages. A titled parent gives the child the next numbered title
        of the lineage: ``my project`` → ``my project #2`` → ``my project #3``.
        """
        parent = self.get_session(session_id)
        inherited: dict[str, Any] = {name: getattr(parent, name) for name in _INHERITED_FIELDS}
        inherited.update(fields)
        now = time.time()
        with write_transaction(self._connection) as db:
            ended = db.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = 'compression' "
                "WHERE id = ? AND ended_at IS NULL",
                (now, parent.id),
            ).rowcount
            child_id = rowwrites.insert_session(
                db,
                source=parent.source,
                session_id=None,
                gateway=len(parent.id.rsplit("_", 1)[-1]) == 8,
                started=now,
                title=None,
                system_prompt=parent.system_prompt,
                model_config=parent.model_config,
                metadata=None,
                parent_session_id=parent.id,
                parent_kind="compression",
                fields=inherited,
            )
            if parent.title:
                title = rowwrites.next_lineage_title(db, parent.title)
                rowwrites.write_title(db, child_id, title, "lineage")
        if ended and self._events is not None:
            self._events.session_ended(self.get_session(parent.id), "compression")
        child = self.get_session(child_id)
        if self._events is not None:
            self._events.session_started(child)
        return child

    def delete_session(self, session_id: str) -> list[str]:
        """Delete a session with its messages; its delegate/subagent children go with it,
        other children are kept and lose their parent link. Returns the deleted ids.
        Sessions still open fire ``session_ended`` with reason ``deleted``."""
        with write_transaction(self._connection) as db:
            if not rowwrites.session_exists(db, session_id):
                raise SessionNotFound(f"no session {session_id}")
            doomed = rowwrites.with_delegates(db, [session_id])
            still_open = self._open_sessions(db, doomed)
            rowwrites.delete_sessions(db, doomed)
        self._announce_deleted(still_open)
        return doomed

    def delete_sessions(self, session_ids: Sequence[str], *, batch_size: int = 500) -> int:
        """Delete many sessions (and their delegates) in batches, each batch one transaction.
        Returns how many sessions were deleted."""
        deleted = 0
        for start in range(0, len(session_ids), batch_size):
            with write_transaction(self._connection) as db:
                batch = list(session_ids[start : start + batch_size])
                doomed = rowwrites.with_delegates(db, batch)
                still_open = self._open_sessions(db, doomed)
                deleted += rowwrites.delete_sessions(db, doomed)
            self._announce_deleted(still_open)
        return deleted

    def _open_sessions(self, db: sqlite3.Connection, session_ids: Sequence[str]) -> list[Session]:
        """The sessions of ``session_ids`` not ended yet (read only when a plugin listens)."""
        if self._events is None or not session_ids:
            return []
        found: list[Session] = []
        for start in range(0, len(session_ids), 500):
            chunk = list(session_ids[start : start + 500])
            marks = ",".join("?" for _ in chunk)
            rows = db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id IN ({marks}) "
                "AND ended_at IS NULL",
                chunk,
            )
            found.extend(session_from_row(row) for row in rows)
        return found

    def _announce_deleted(self, sessions: Sequence[Session]) -> None:
        if self._events is None:
            return
        for session in sessions:
            self._events.session_ended(session, "deleted")

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
        from hermes_core.selection.filters import SessionFilter

        from .selection_sql import build_where

        where, params = build_where(selection or SessionFilter())
        return self._query_sessions(
            where, params, newest_first=newest_first, limit=limit, pinned_first=pinned_first
        )

    def list_sessions(
        self, selection: SessionFilter | None = None, *, limit: int = 20
    ) -> list[Session]:
        """What ``hermes sessions list`` shows: every pinned match (pinned sessions always
        show), then the ``limit`` most recently active other matches."""
        from hermes_core.selection.filters import SessionFilter

        from .selection_sql import build_where

        where, params = build_where(selection or SessionFilter())
        pinned = self._query_sessions(f"({where}) AND s.pinned = 1", params)
        others = self._query_sessions(f"({where}) AND s.pinned = 0", params, limit=limit)
        return [*pinned, *others]

    def count_sessions(self, selection: SessionFilter | None = None) -> int:
        """How many sessions match ``selection``."""
        from hermes_core.selection.filters import SessionFilter

        from .selection_sql import build_where

        where, params = build_where(selection or SessionFilter())
        count: int = self._connection.execute(
            f"SELECT count(*) FROM sessions s WHERE {where}", params
        ).fetchone()[0]
        return count

    def insight_rows(self, selection: SessionFilter | None = None) -> InsightRows:
        """The aggregates ``hermes insights`` reports over the sessions matching ``selection``:
        usage per (source, model), session starts per 15 minutes, tool results per tool, the
        largest sessions."""
        from hermes_core.selection.filters import SessionFilter

        from .insights import insight_rows
        from .selection_sql import build_where

        where, params = build_where(selection or SessionFilter())
        return insight_rows(self._connection, where, params)

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
        from .search_queries import PREVIEW_BYTES_SQL, preview_text

        found: dict[str, str] = {}
        for session_id in session_ids:
            row = self._connection.execute(
                f"SELECT {PREVIEW_BYTES_SQL} FROM messages WHERE session_id = ? AND role = 'user' "
                "ORDER BY id LIMIT 1",
                (length, session_id),
            ).fetchone()
            text = preview_text(row[0], length) if row else None
            found[session_id] = " ".join(text.split()) if text else ""
        return found

    def message_count(self, session_id: str) -> int:
        """How many messages a session holds (0 for an unknown session)."""
        count: int = self._connection.execute(
            "SELECT count(*) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
        return count

    # ------------------------------------------------------------------ lineage and delegates

    def compression_root(self, session_id: str) -> str:
        """The first session of ``session_id``'s compression lineage (itself when none)."""
        return lineage_queries.compression_root(self._connection, session_id)

    def compression_lineage(self, session_id: str) -> list[str]:
        """Every session of ``session_id``'s compression lineage, oldest first."""
        return lineage_queries.compression_lineage(self._connection, session_id)

    def delegate_children(self, session_id: str) -> tuple[str, ...]:
        """The delegate/subagent sessions working directly for ``session_id``, oldest first."""
        return lineage_queries.delegate_children(self._connection, session_id)

    def delegate_tree(self, session_id: str) -> list[str]:
        """``session_id`` and every delegate working for it, recursively."""
        return lineage_queries.delegate_tree(self._connection, session_id)

    def iter_parents_first(self, selection: SessionFilter) -> Iterator[str]:
        """The ids of ``selection``, every parent before its children (backups restore in
        one pass), then by start time."""
        return lineage_queries.iter_parents_first(self._connection, selection)

    def delete_exactly(self, session_id: str, expected_messages: Mapping[str, int]) -> list[str]:
        """Delete ``session_id`` and its delegates in one transaction if they are exactly the
        sessions of ``expected_messages`` with those message counts (else raise
        ``SessionsChanged``, deleting nothing). Open sessions fire ``session_ended``."""
        with write_transaction(self._connection) as db:
            still_open = self._open_sessions(db, list(expected_messages))
            deleted = lineage_queries.delete_exactly(db, session_id, expected_messages)
        self._announce_deleted(still_open)
        return deleted

    # ------------------------------------------------------------------ state_meta

    def read_state(self, keys: Iterable[str]) -> dict[str, str]:
        """The ``state_meta`` values of ``keys`` that are set."""
        return _read_state(self._connection, keys)

    def write_state(self, values: Mapping[str, str]) -> None:
        """Set ``state_meta`` keys in one transaction."""
        with write_transaction(self._connection) as db:
            _write_state(db, values)

    def list_state(self, prefix: str = "") -> dict[str, str]:
        """Every ``state_meta`` key that is set and starts with ``prefix`` (all keys when it
        is empty), with its value, in key order."""
        return _list_state(self._connection, prefix)

    def backup(self) -> Path:
        """Copy the store beside itself through SQLite's backup API, named with the time;
        returns the copy's path (made before a repair changes anything)."""
        from .maintenance import backup_files

        return backup_files(self._connection, self.path)

    def stats(self) -> StoreStats:
        """Counts and size for ``hermes sessions stats``."""
        from .maintenance import collect_stats

        return collect_stats(self._connection, self.path)

    # ------------------------------------------------------------------ messages

    def append_message(
        self, session_id: str, message: Message, *, input_tokens: int = 0, output_tokens: int = 0
    ) -> int:
        """Append one message; returns its id. Token counts given are added to the session's
        totals in the same transaction (a model's answer and its usage, stored at once)."""
        ids = self.append_messages(
            session_id, [message], input_tokens=input_tokens, output_tokens=output_tokens
        )
        return ids[0]

    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Message],
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> range:
        """Append messages in one transaction (the fast path for bulk loads); returns their ids.

        Message rows and their index rows are written together: a crash leaves either the
        whole batch or none of it. ``input_tokens``/``output_tokens`` are added to the
        session's totals in the same transaction.
        """
        check_usage(input_tokens, output_tokens)
        batch = list(messages)
        if not batch:
            return range(0)
        with write_transaction(self._connection) as db:
            state = db.execute(
                "SELECT title IS NULL, message_count FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if state is None:
                raise SessionNotFound(f"no session {session_id}")
            untitled, count_before = state
            first_exchange = (
                untitled
                and count_before + len(batch) <= AUTO_TITLE_WINDOW
                and any(message.role == "assistant" for message in batch)
                and db.execute(
                    "SELECT 1 FROM messages WHERE session_id = ? AND role = 'assistant' LIMIT 1",
                    (session_id,),
                ).fetchone()
                is None
            )
            inserted = rowwrites.insert_messages(db, session_id, batch, time.time())
            db.execute(
                "UPDATE sessions SET message_count = message_count + ?, "
                "tool_call_count = tool_call_count + ?, "
                "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
                "last_active_at = max(last_active_at, ?) WHERE id = ?",
                (
                    len(batch),
                    inserted.tool_calls,
                    input_tokens,
                    output_tokens,
                    inserted.last_timestamp,
                    session_id,
                ),
            )
        if first_exchange and self._events is not None:
            self._start_auto_title(session_id)
        return inserted.ids

    def update_message_content(self, message_id: int, content: str) -> None:
        """Replace a message's text, keeping the indexes in step."""
        with write_transaction(self._connection) as db:
            row = db.execute("SELECT role FROM messages WHERE id = ?", (message_id,)).fetchone()
            if row is None:
                raise KeyError(f"no message {message_id}")
            fulltext.unindex_messages(db, "id = ?", [message_id])
            db.execute("UPDATE messages SET content = ? WHERE id = ?", (content, message_id))
            runs = fulltext.cjk_runs(content)
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

    def iter_messages_newest_first(
        self, session_id: str, *, roles: Sequence[str] | None = None, batch: int = 100
    ) -> Iterator[Message]:
        """Stream a session's messages newest first (only those of ``roles`` when given), so
        a caller that needs the end of a long session (the resume recap) stops early."""
        sql = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?"
        params: list[object] = [session_id]
        if roles is not None:
            sql += f" AND role IN ({','.join('?' for _ in roles)})"
            params.extend(roles)
        cursor = self._connection.execute(sql + " ORDER BY id DESC", params)
        while rows := cursor.fetchmany(batch):
            for row in rows:
                yield message_from_row(row)

    def count_messages(self, session_id: str, *, roles: Sequence[str] | None = None) -> int:
        """How many messages a session has (of ``roles`` when given)."""
        sql = "SELECT count(*) FROM messages WHERE session_id = ?"
        params: list[object] = [session_id]
        if roles is not None:
            sql += f" AND role IN ({','.join('?' for _ in roles)})"
            params.extend(roles)
        found: int = self._connection.execute(sql, params).fetchone()[0]
        return found

    # ------------------------------------------------------------------ titles

    def apply_automatic_title(self, session_id: str, proposal: str) -> str | None:
        """Store an automatic title unless a title exists by now; cut to 100 characters and
        made unique with a `` (2)``-style suffix. Returns the title stored, if any."""
        with write_transaction(self._connection) as db:
            return rowwrites.automatic_title(db, session_id, proposal)

    def _start_auto_title(self, session_id: str) -> None:
        from .autotitle import generate_title_in_background

        if self._events is None:
            return
        thread = generate_title_in_background(self.path, session_id, self._events)
        self._title_threads = [t for t in self._title_threads if t.is_alive()] + [thread]

    def wait_for_titles(self, timeout: float | None = None) -> None:
        """Wait for automatic titles being generated in the background (tests, shutdown),
        ``timeout`` seconds at most in all."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for job in list(self._title_threads):
            job.join(None if deadline is None else max(0.0, deadline - time.monotonic()))


def _open_and_migrate(path: Path, write_lock: threading.Lock | None) -> sqlite3.Connection:
    """The store's connection, its schema brought up to date. A store that cannot be written
    here (see :func:`~.failures.write_refusal`; or a disk too full to open it for writing) is
    opened for reading: reading commands still work, writes are refused in one line."""
    refusal: StoreError | None = write_refusal(path)
    if refusal is None:
        try:
            connection = open_connection(path, write_lock=write_lock)
        except (StoreFull, StoreReadOnly) as refused:
            refusal = refused
        else:
            try:
                migrate(connection)
                connection.execute("SELECT count(*) FROM sessions LIMIT 1").fetchone()
            except (StoreFull, StoreReadOnly) as refused:
                connection.close()
                refusal = refused
            except sqlite3.Error as error:
                connection.close()
                raise store_error(error, path) from error
            except BaseException:
                connection.close()
                raise
            else:
                return connection
    connection = open_reader(path, refusal)
    try:
        check_readable_schema(connection, refusal)
        connection.execute("SELECT count(*) FROM sessions LIMIT 1").fetchone()
    except sqlite3.Error as error:
        connection.close()
        raise store_error(error, path) from error
    except BaseException:
        connection.close()
        raise
    return connection


_INHERITED_FIELDS = (
    "user_id", "model", "cwd", "git_branch", "git_repo_root", "chat_id", "chat_type",
    "thread_id", "session_key", "billing_provider",
)  # fmt: skip
"""What a compression continuation takes over from its parent."""
