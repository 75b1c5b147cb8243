"""The session facade — the store protocol's own methods (:class:`~.protocol.Store`) — written
once for every backend, over the backend's primitives.

What a session store does is the same whatever the database: create a session and fire
``session_started``; end one once and fire ``session_ended``; continue a session after
compression in one transaction with the lineage's next title; delete a session with its
delegates and announce the ones still open; select, list and count by a filter; append
messages with their usage and start an automatic title after the first exchange; follow
lineages; read and write ``state_meta``. :class:`StoreFacade` holds all of it, in the SQL
both stores take (see :mod:`.statements`), as :class:`~.routed_sessions.RoutingRows` and
:class:`~.handoffs.HandoffRows` do for their facets.

A backend gives what differs: its connection (``_sql``) and transactions, its message
inserts and the search entries it keeps apart from the rows (session rows and titles are
written once, in :mod:`.session_writes`; deletions in :mod:`.deletion`),
its selection dialect, its full-text upkeep (``update_message_content``),
previews and statistics, and how the title worker gets a connection of its own. The built-in
SQLite store (:class:`~hermes_core.store.SessionStore`) and the PostgreSQL plugin's store are
two such backends; ``tests/store_conformance/`` checks any of them.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Self

from hermes_hookspecs import Message, ParentKind, Session, StoreEvents

from . import deletion, lineage_queries, session_writes, state_meta
from .errors import SessionNotFound
from .lookup import resolve_reference
from .rows import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS_QUALIFIED,
    message_from_row,
    session_from_row,
)
from .statements import Sql, marks
from .validation import check_usage

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter

    from .autotitle import TitleJob
    from .insight_rows import InsightRows
    from .maintenance import StoreStats

AUTO_TITLE_WINDOW = 20
"""Automatic titles are only considered while a session has at most this many messages."""
INHERITED_FIELDS = (
    "user_id", "model", "cwd", "git_branch", "git_repo_root", "chat_id", "chat_type",
    "thread_id", "session_key", "billing_provider",
)  # fmt: skip
"""What a compression continuation takes over from its parent."""
_CHUNK = 500
"""Ids per ``IN (…)`` list (SQLite takes at most 32,766 parameters in one statement)."""
_SESSION_WITH_PROMPT = (
    f"SELECT {SESSION_COLUMNS_QUALIFIED}, p.prompt FROM sessions s "
    "LEFT JOIN system_prompts p ON p.hash = s.system_prompt_hash WHERE s.id = ?"
)


class AppendedRows(NamedTuple):
    """What one append wrote (:meth:`StoreFacade._append_rows`)."""

    ids: range
    """The new messages' ids, consecutive."""
    untitled: bool
    """The session had no title when they were added."""
    count_before: int
    """How many messages the session held before them."""


class StoreFacade(ABC):
    """The session store's own methods over a backend's primitives (see the module's text).

    A subclass sets ``_sql``, ``_events`` and ``_title_threads`` (an empty list) when it
    opens, and implements the abstract methods: the private ones are the primitives, the
    public ones what each backend says its own way."""

    _sql: Sql
    """The store's connection (statements both stores take)."""
    _events: StoreEvents | None
    """Who hears about sessions starting and ending (the plugin host), if anyone."""
    _title_threads: list[TitleJob]
    """Automatic titles queued or being generated in the background."""

    _row_lock: ClassVar[str] = ""
    """Appended to the read of a session's counters before messages are appended to it: a
    lock on that row until the transaction ends (``FOR UPDATE``), for a backend whose write
    transactions do not already keep every other writer out."""

    # ------------------------------------------------------------------ primitives

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[object]:
        """One write transaction on the store's connection: committed at the end, rolled back
        on an error; a read-only store refuses it."""

    def _append_rows(
        self, session_id: str, batch: Sequence[Message], input_tokens: int, output_tokens: int
    ) -> AppendedRows | None:
        """One append as one transaction: read the session's row (locked until the end, see
        :attr:`_row_lock`), then :meth:`_insert_messages`. ``None``, having written nothing,
        when there is no such session. A backend may do the same in fewer round trips (the
        ids must still be drawn once the session's row is locked, so that a session's ids
        grow in the order its appends commit)."""
        with self._transaction():
            state = self._sql.execute(
                f"SELECT title IS NULL, message_count FROM sessions WHERE id = ?{self._row_lock}",
                (session_id,),
            ).fetchone()
            if state is None:
                return None
            ids = self._insert_messages(session_id, batch, input_tokens, output_tokens)
        return AppendedRows(ids, bool(state[0]), int(state[1]))

    def _write_one(self, sql: str, params: Sequence[object]) -> int:
        """Run one writing statement as a transaction of its own; how many rows it changed.
        (A backend whose connection commits each statement by itself may skip the block.)"""
        with self._transaction():
            return self._sql.execute(sql, params).rowcount

    @abstractmethod
    def _where(self, selection: SessionFilter) -> tuple[str, list[object]]:
        """``selection`` as one condition over ``sessions s`` and its parameters (the
        backend's :class:`~.selection_sql.SelectionDialect`)."""

    def _insert_session(self, **columns: Any) -> str:
        """Inside a transaction: insert a session row (``columns``: the keyword arguments of
        :func:`.session_writes.insert_session`, the new row checked first); its id."""
        return session_writes.insert_session(self._sql, **columns)

    def _checked_manual_title(self, title: str, session_id: str) -> str:
        """Inside a transaction: ``title`` as a person typed it for ``session_id``, sanitised;
        an empty or too long title, or one another session has, raises."""
        return session_writes.checked_manual_title(self._sql, title, exclude_id=session_id)

    def _write_title(self, session_id: str, title: str, source: str) -> None:
        """Inside a transaction: set the title (and where it came from) of ``session_id``."""
        session_writes.write_title(self._sql, session_id, title, source)

    def _queue_title(self, session_id: str, title: str) -> None:
        """Inside a transaction: keep ``title`` for when ``session_id`` is created (SPEC S4)."""
        session_writes.queue_title(self._sql, session_id, title)

    def _write_lineage_title(self, session_id: str, parent_title: str) -> None:
        """Inside a transaction: give the continuation ``session_id`` the next free ``#N``
        title of ``parent_title``'s lineage."""
        session_writes.write_lineage_title(self._sql, session_id, parent_title)

    @abstractmethod
    def _unindex_messages(self, where: str, params: Sequence[object]) -> None:
        """Inside a transaction, before the messages matching ``where`` are deleted: drop
        their search entries, where the backend keeps them apart from the rows."""

    def _with_delegates(self, session_ids: Sequence[str]) -> list[str]:
        """``session_ids`` followed by their delegate sessions at any depth."""
        return deletion.with_delegates(self._sql, session_ids)

    def _delete_rows(self, session_ids: Sequence[str]) -> int:
        """Inside a transaction: delete sessions with their messages and search entries;
        children not deleted lose their parent link. How many sessions went."""
        return deletion.delete_sessions(self._sql, session_ids, self._unindex_messages)

    @abstractmethod
    def _insert_messages(
        self, session_id: str, batch: Sequence[Message], input_tokens: int, output_tokens: int
    ) -> range:
        """Inside a transaction, after the session's row was read (and locked): insert the
        messages (checked first: a bad one writes nothing) with their search rows and add
        them, their tool calls, latest timestamp and the tokens to the session's counters.
        Their ids, consecutive."""

    def _automatic_title(self, session_id: str, proposal: str) -> str | None:
        """Inside a transaction: store ``proposal`` (sanitised, cut, made unique) as the
        session's automatic title unless it has a title by now; what was stored."""
        return session_writes.automatic_title(self._sql, session_id, proposal)

    @abstractmethod
    def _insight_rows(self, where: str, params: Sequence[object]) -> InsightRows:
        """The aggregates of ``hermes insights`` over the sessions matching ``where``."""

    @abstractmethod
    def _title_worker_store(self) -> AbstractContextManager[StoreFacade]:
        """A store on a connection of its own, without events, for the automatic-title
        thread (closed or given back when the block ends)."""

    # ------------------------------------------------------------------ what differs, public

    @property
    @abstractmethod
    def url(self) -> str:
        """Where this store lives, as a ``store.url`` (password hidden)."""

    @property
    @abstractmethod
    def read_only(self) -> bool:
        """True when every write will be refused here."""

    @abstractmethod
    def require_writable(self) -> None:
        """Raise what a write would raise when the store is read-only; else nothing."""

    @abstractmethod
    def close(self) -> None:
        """Wait briefly for automatic titles in flight, then let go of the connection."""

    @abstractmethod
    def previews(self, session_ids: Sequence[str], *, length: int = 200) -> dict[str, str]:
        """The start of each session's first user message (what listings show)."""

    @abstractmethod
    def stats(self) -> StoreStats:
        """Counts and size for ``hermes sessions stats``."""

    @abstractmethod
    def update_message_content(self, message_id: int, content: str) -> None:
        """Replace a message's text, keeping its search index in step (``KeyError`` for an
        unknown message)."""

    # ------------------------------------------------------------------ the store itself

    @property
    def events(self) -> StoreEvents | None:
        """Who hears about sessions starting and ending (the plugin host), if anyone."""
        return self._events

    def __enter__(self) -> Self:
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
        """Create a session row and return it (fires ``session_started``).

        ``fields`` are further ``Session`` attributes (``user_id``, ``model``, ``cwd``,
        ``git_branch``, ``git_repo_root``, ``chat_id``, ``chat_type``, ``thread_id``,
        ``session_key``, ``billing_provider``, ``input_tokens``…). A title queued with
        :meth:`queue_title` before the row existed is applied now (SPEC S4).
        """
        started = time.time() if started_at is None else started_at
        with self._transaction():
            created = self._insert_session(
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
        session = self.get_session(created)
        if self._events is not None:
            self._events.session_started(session)
        return session

    def queue_title(self, session_id: str, title: str) -> None:
        """Set a title now if the session exists, else keep it for when it is created (S4)."""
        with self._transaction():
            clean = self._checked_manual_title(title, session_id)
            if self._exists(session_id):
                self._write_title(session_id, clean, "user")
            else:
                self._queue_title(session_id, clean)

    def get_session(self, session_id: str) -> Session:
        """The session with exactly this id."""
        row = self._sql.execute(_SESSION_WITH_PROMPT, (session_id,)).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return session_from_row(tuple(row[:-1]), row[-1])

    def resolve(self, reference: str) -> str:
        """The id a person means by ``reference``: an id, a unique id prefix, or a title (the
        newest session of that title's compression lineage)."""
        return resolve_reference(self._sql, reference)

    def end_session(
        self, session_id: str, reason: str, *, ended_at: float | None = None
    ) -> Session:
        """Mark a session ended with ``reason`` (see ``END_REASONS``). Ending twice keeps the first."""
        ended = time.time() if ended_at is None else ended_at
        with self._transaction():
            changed = self._sql.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
                (ended, reason, session_id),
            ).rowcount
            if not changed and not self._exists(session_id):
                raise SessionNotFound(f"no session {session_id}")
        session = self.get_session(session_id)
        if changed and self._events is not None:
            self._events.session_ended(session, reason)
        return session

    def reopen_session(self, session_id: str) -> None:
        """Clear the end marks of a session that is being resumed."""
        self._write_one(
            "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", (session_id,)
        )

    def set_title(self, session_id: str, title: str) -> Session:
        """Set a title by hand: sanitised, at most 100 characters, unique (SPEC S4)."""
        with self._transaction():
            if not self._exists(session_id):
                raise SessionNotFound(f"no session {session_id}")
            clean = self._checked_manual_title(title, session_id)
            self._write_title(session_id, clean, "user")
        return self.get_session(session_id)

    def continue_after_compression(self, session_id: str, **fields: Any) -> Session:
        """End ``session_id`` with reason ``compression`` and create its continuation (S6),
        in one transaction.

        The parent keeps its messages. A titled parent gives the child the next numbered title
        of the lineage: ``my project`` → ``my project #2`` → ``my project #3``.
        """
        parent = self.get_session(session_id)
        inherited: dict[str, Any] = {name: getattr(parent, name) for name in INHERITED_FIELDS}
        inherited.update(fields)
        now = time.time()
        with self._transaction():
            ended = self._sql.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = 'compression' "
                "WHERE id = ? AND ended_at IS NULL",
                (now, parent.id),
            ).rowcount
            child_id = self._insert_session(
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
                self._write_lineage_title(child_id, parent.title)
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
        with self._transaction():
            if not self._exists(session_id):
                raise SessionNotFound(f"no session {session_id}")
            doomed = self._with_delegates([session_id])
            still_open = self._open_sessions(doomed)
            self._delete_rows(doomed)
        self._announce_deleted(still_open)
        return doomed

    def delete_sessions(self, session_ids: Sequence[str], *, batch_size: int = 500) -> int:
        """Delete many sessions (and their delegates) in batches, each batch one transaction.
        Returns how many sessions were deleted."""
        deleted = 0
        for start in range(0, len(session_ids), batch_size):
            with self._transaction():
                doomed = self._with_delegates(list(session_ids[start : start + batch_size]))
                still_open = self._open_sessions(doomed)
                deleted += self._delete_rows(doomed)
            self._announce_deleted(still_open)
        return deleted

    def set_pinned(self, session_ids: Iterable[str], pinned: bool) -> int:
        """Pin or unpin sessions; returns how many changed."""
        return self._set_flag("pinned", session_ids, pinned)

    def set_archived(self, session_ids: Iterable[str], archived: bool) -> int:
        """Archive (hide from listings, keep everything) or unarchive sessions."""
        return self._set_flag("archived", session_ids, archived)

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
        changed = self._write_one(
            "UPDATE sessions SET input_tokens = input_tokens + ?, "
            "output_tokens = output_tokens + ?, "
            "cost_actual_usd = CASE WHEN CAST(? AS DOUBLE PRECISION) IS NULL "
            "  THEN cost_actual_usd ELSE coalesce(cost_actual_usd, 0) + ? END, "
            "cost_estimated_usd = CASE WHEN CAST(? AS DOUBLE PRECISION) IS NULL "
            "  THEN cost_estimated_usd ELSE coalesce(cost_estimated_usd, 0) + ? END, "
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
        )
        if not changed:
            raise SessionNotFound(f"no session {session_id}")

    def _exists(self, session_id: str) -> bool:
        found = self._sql.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,))
        return found.fetchone() is not None

    def _open_sessions(self, session_ids: Sequence[str]) -> list[Session]:
        """The sessions of ``session_ids`` not ended yet, in that order (read only when a
        plugin listens)."""
        if self._events is None or not session_ids:
            return []
        found: dict[str, Session] = {}
        for start in range(0, len(session_ids), _CHUNK):
            chunk = list(session_ids[start : start + _CHUNK])
            rows = self._sql.execute(
                f"SELECT {SESSION_COLUMNS_QUALIFIED} FROM sessions s "
                f"WHERE s.id IN ({marks(chunk)}) AND s.ended_at IS NULL",
                chunk,
            ).fetchall()
            found.update((str(row[0]), session_from_row(row)) for row in rows)
        return [found[i] for i in session_ids if i in found]

    def _announce_deleted(self, sessions: Sequence[Session]) -> None:
        if self._events is not None:
            for session in sessions:
                self._events.session_ended(session, "deleted")

    def _set_flag(self, column: str, session_ids: Iterable[str], value: bool) -> int:
        ids = list(session_ids)
        changed = 0
        with self._transaction():
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                changed += self._sql.execute(
                    f"UPDATE sessions SET {column} = ? WHERE id IN ({marks(chunk)}) "
                    f"AND {column} != ?",
                    [int(value), *chunk, int(value)],
                ).rowcount
        return changed

    # ------------------------------------------------------------------ selection (SPEC F1)

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
        where, params = self._selected(selection)
        return self._query_sessions(
            where, params, newest_first=newest_first, limit=limit, pinned_first=pinned_first
        )

    def list_sessions(
        self, selection: SessionFilter | None = None, *, limit: int = 20
    ) -> list[Session]:
        """What ``hermes sessions list`` shows: every pinned match (pinned sessions always
        show), then the ``limit`` most recently active other matches."""
        where, params = self._selected(selection)
        pinned = self._query_sessions(f"({where}) AND s.pinned = 1", params)
        others = self._query_sessions(f"({where}) AND s.pinned = 0", params, limit=limit)
        return [*pinned, *others]

    def count_sessions(self, selection: SessionFilter | None = None) -> int:
        """How many sessions match ``selection``."""
        where, params = self._selected(selection)
        row = self._sql.execute(f"SELECT count(*) FROM sessions s WHERE {where}", params)
        found = row.fetchone()
        return int(found[0]) if found else 0

    def insight_rows(self, selection: SessionFilter | None = None) -> InsightRows:
        """The aggregates ``hermes insights`` reports over the sessions matching ``selection``:
        usage per (source, model), session starts per 15 minutes, tool results per tool, the
        largest sessions."""
        return self._insight_rows(*self._selected(selection))

    def _selected(self, selection: SessionFilter | None) -> tuple[str, list[object]]:
        from hermes_core.selection.filters import SessionFilter

        return self._where(selection or SessionFilter())

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
        order = f"s.last_active_at {direction}, s.id{self._sql.binary_order} {direction}"
        if pinned_first:
            order = "s.pinned DESC, " + order
        sql = f"SELECT {SESSION_COLUMNS_QUALIFIED} FROM sessions s WHERE {where} ORDER BY {order}"
        arguments = list(params)
        if limit is not None:
            sql += " LIMIT ?"
            arguments.append(limit)
        cursor = self._sql.execute(sql, arguments)
        while rows := cursor.fetchmany(200):
            for row in rows:
                yield session_from_row(row)

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
        appended = self._append_rows(session_id, batch, input_tokens, output_tokens)
        if appended is None:
            raise SessionNotFound(f"no session {session_id}")
        ids = appended.ids
        first_exchange = (
            self._events is not None
            and appended.untitled
            and appended.count_before + len(batch) <= AUTO_TITLE_WINDOW
            and any(message.role == "assistant" for message in batch)
            # The ids of a session's earlier appends are smaller (see _append_rows).
            and self._sql.execute(
                "SELECT 1 FROM messages WHERE session_id = ? AND role = 'assistant' AND id < ? "
                "LIMIT 1",
                (session_id, ids.start),
            ).fetchone()
            is None
        )
        if first_exchange:
            self._start_auto_title(session_id)
        return ids

    def messages(self, session_id: str) -> list[Message]:
        """All messages of a session, oldest first."""
        return list(self.iter_messages(session_id))

    def iter_messages(self, session_id: str, *, batch: int = 500) -> Iterator[Message]:
        """Stream a session's messages, oldest first, in pages of ``batch`` (keyset paging:
        no statement stays open between pages, and no page holds more than ``batch``)."""
        after = -1
        while True:
            rows = self._sql.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id > ? "
                "ORDER BY id LIMIT ?",
                (session_id, after, batch),
            ).fetchall()
            for row in rows:
                yield message_from_row(row)
            if len(rows) < batch:
                return
            after = int(rows[-1][0])

    def iter_messages_newest_first(
        self, session_id: str, *, roles: Sequence[str] | None = None, batch: int = 100
    ) -> Iterator[Message]:
        """Stream a session's messages newest first (only those of ``roles`` when given), in
        keyset pages, so a caller that needs the end of a long session (the resume recap)
        stops early."""
        role_clause = "" if roles is None else f" AND role IN ({marks(roles)})"
        before: int | None = None
        while True:
            params: list[object] = [session_id, *(roles or ())]
            sql = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?{role_clause}"
            if before is not None:
                sql += " AND id < ?"
                params.append(before)
            rows = self._sql.execute(f"{sql} ORDER BY id DESC LIMIT ?", [*params, batch])
            page = rows.fetchall()
            for row in page:
                yield message_from_row(row)
            if len(page) < batch:
                return
            before = int(page[-1][0])

    def count_messages(self, session_id: str, *, roles: Sequence[str] | None = None) -> int:
        """How many messages a session has (of ``roles`` when given)."""
        sql = "SELECT count(*) FROM messages WHERE session_id = ?"
        if roles is not None:
            sql += f" AND role IN ({marks(roles)})"
        row = self._sql.execute(sql, [session_id, *(roles or ())]).fetchone()
        return int(row[0]) if row else 0

    def message_count(self, session_id: str) -> int:
        """How many messages a session holds (0 for an unknown session)."""
        return self.count_messages(session_id)

    # ------------------------------------------------------------------ lineage and delegates

    def compression_root(self, session_id: str) -> str:
        """The first session of ``session_id``'s compression lineage (itself when none)."""
        return lineage_queries.compression_root(self._sql, session_id)

    def compression_lineage(self, session_id: str) -> list[str]:
        """Every session of ``session_id``'s compression lineage, oldest first."""
        return lineage_queries.compression_lineage(self._sql, session_id)

    def delegate_children(self, session_id: str) -> tuple[str, ...]:
        """The delegate/subagent sessions working directly for ``session_id``, oldest first."""
        return lineage_queries.delegate_children(self._sql, session_id)

    def child_sessions(self, session_id: str) -> list[tuple[str, str]]:
        """(id, parent kind) of every session whose parent is ``session_id`` — continuations,
        branches, delegates, resets — oldest first (the web app's lineage links)."""
        return lineage_queries.child_sessions(self._sql, session_id)

    def delegate_tree(self, session_id: str) -> list[str]:
        """``session_id`` and every delegate working for it, recursively."""
        return lineage_queries.delegate_tree(self._sql, session_id)

    def iter_parents_first(self, selection: SessionFilter) -> Iterator[str]:
        """The ids of ``selection``, every parent before its children (backups restore in
        one pass), then by start time."""
        where, params = self._where(selection)
        return lineage_queries.iter_parents_first(self._sql, where, params)

    def delete_exactly(self, session_id: str, expected_messages: Mapping[str, int]) -> list[str]:
        """Delete ``session_id`` and its delegates in one transaction if they are exactly the
        sessions of ``expected_messages`` with those message counts (else raise
        ``SessionsChanged``, deleting nothing). Open sessions fire ``session_ended``."""
        with self._transaction():
            still_open = self._open_sessions(list(expected_messages))
            doomed = lineage_queries.unchanged_tree(self._sql, session_id, expected_messages)
            self._delete_rows(doomed)
        self._announce_deleted(still_open)
        return doomed

    # ------------------------------------------------------------------ state_meta

    def read_state(self, keys: Iterable[str]) -> dict[str, str]:
        """The ``state_meta`` values of ``keys`` that are set."""
        return state_meta.read_state(self._sql, keys)

    def write_state(self, values: Mapping[str, str]) -> None:
        """Set ``state_meta`` keys in one transaction."""
        with self._transaction():
            state_meta.write_state(self._sql, values)

    def list_state(self, prefix: str = "") -> dict[str, str]:
        """Every ``state_meta`` key that is set and starts with ``prefix`` (all keys when it
        is empty), with its value, in key order."""
        return state_meta.list_state(self._sql, prefix)

    # ------------------------------------------------------------------ titles

    def apply_automatic_title(self, session_id: str, proposal: str) -> str | None:
        """Store an automatic title unless a title exists by now; cut to 100 characters and
        made unique with a `` (2)``-style suffix. Returns the title stored, if any."""
        with self._transaction():
            return self._automatic_title(session_id, proposal)

    def _start_auto_title(self, session_id: str) -> None:
        from .autotitle import generate_title_in_background

        if self._events is None:
            return
        thread = generate_title_in_background(self._title_worker_store, session_id, self._events)
        self._title_threads = [t for t in self._title_threads if t.is_alive()] + [thread]

    def wait_for_titles(self, timeout: float | None = None) -> None:
        """Wait for automatic titles being generated in the background (tests, shutdown),
        ``timeout`` seconds at most in all."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for job in list(self._title_threads):
            job.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
