"""``PostgresStore``: the session store protocol (``hermes_core.store.protocol.Store``) over
one PostgreSQL database.

One instance holds one connection for its own thread (the automatic-title worker takes
another from a pool opened on first use, see :class:`~.connection.StoreConnections`). Every
write is one transaction; every write that starts or ends a session fires the plugin events,
as the SQLite store does. Engines reach the many small reads through the facets ``search_index``, ``lifecycle``, ``imports``, ``routing`` and ``handoffs``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import Message, ParentKind, Session, StoreEvents

from hermes_core.store.errors import SessionNotFound, StoreReadOnly
from hermes_core.store.rows import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    SESSION_COLUMNS_QUALIFIED,
    message_from_row,
    session_from_row,
)
from hermes_core.store.validation import check_usage

from . import lineage, writes
from .connection import StoreConnections, first_look
from .handoffs import PostgresHandoffs
from .imports import PostgresImportBookkeeping
from .lifecycle import PostgresLifecycle
from .lookup import resolve_reference
from .routing import PostgresRouting
from .schema import migrate
from .search import PostgresSearchIndex
from .selection_sql import build_where

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter
    from hermes_core.store.insight_rows import InsightRows
    from hermes_core.store.maintenance import RepairReport, StoreStats

    from .translating import StoreConnection

log = logging.getLogger(__name__)

AUTO_TITLE_WINDOW = 20
"""Automatic titles are only considered while a session has at most this many messages."""
TITLE_MESSAGES_SHOWN = 6
_INHERITED_FIELDS = (
    "user_id", "model", "cwd", "git_branch", "git_repo_root", "chat_id", "chat_type",
    "thread_id", "session_key", "billing_provider",
)  # fmt: skip


class PostgresStore:
    """Sessions and their messages in a PostgreSQL database (``store.url``)."""

    def __init__(self, url: str, shown_url: str, *, events: StoreEvents | None = None) -> None:
        self._url = url
        self._shown = shown_url
        self._events = events
        where = f"store.url {shown_url!r}"
        self._pool = StoreConnections(url, where)
        self._db: StoreConnection[tuple[Any, ...]] = self._pool.main
        try:
            self._write_refusal, version = first_look(self._db, where)
            migrate(self._db, where, known=version)
        except BaseException:
            self._pool.close()
            raise
        self._title_threads: list[threading.Thread] = []
        self._closed = False
        self.search_index = PostgresSearchIndex(self._db)
        """The reads of ``session_search`` and the browse picker."""
        self.lifecycle = PostgresLifecycle(self._db)
        """What prune, archive and the automatic clean-up read and write."""
        self.imports = PostgresImportBookkeeping(self._db, events)
        """Import writes and bookkeeping (their sessions fire the plugin events)."""
        self.routing = PostgresRouting(self._db, self.get_session, events)
        """The routing table: the gateway's routed sessions, recovery reads, home channels
        and repair, and the raw rows migrate and imports copy."""
        self.handoffs = PostgresHandoffs(self._db)
        """The ``/handoff`` registry and what ``/sethome`` knew of the home channel."""

    @property
    def url(self) -> str:
        """Where this store lives, as a ``store.url`` (password hidden)."""
        return self._shown

    @property
    def read_only(self) -> bool:
        """True when the server refuses this store's writes: a hot standby, or a database,
        role or server whose transactions are read-only by default (found when the store
        opened). Reads work; every write raises :class:`~hermes_core.store.errors.StoreReadOnly`.
        A role that may not write a table is not this: the server refuses it at each write."""
        return self._write_refusal is not None

    def require_writable(self) -> None:
        """Raise what a write would raise when the store is read-only (the gateway and the
        chat refuse at start rather than at their first write); else nothing."""
        if self._write_refusal is not None:
            raise StoreReadOnly(str(self._write_refusal))

    def close(self) -> None:
        """Wait briefly for automatic titles in flight, then give back the connections
        (closing twice does nothing): the pool, if it was opened, then the store's own
        connection, quietly even when the server is gone."""
        if self._closed:
            return
        self._closed = True
        self.wait_for_titles(timeout=5.0)
        self._pool.close()

    def __enter__(self) -> PostgresStore:
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
        """Create a session row and return it (fires ``session_started``)."""
        started = time.time() if started_at is None else started_at
        with self._db.transaction():
            created = writes.insert_session(
                self._db,
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
        with self._db.transaction():
            clean = writes.checked_manual_title(self._db, title, exclude_id=session_id)
            if writes.session_exists(self._db, session_id):
                writes.write_title(self._db, session_id, clean, "user")
            else:
                writes.queue_title(self._db, session_id, clean)

    def get_session(self, session_id: str) -> Session:
        """The session with exactly this id."""
        row = self._db.execute(
            f"SELECT {SESSION_COLUMNS_QUALIFIED}, p.prompt FROM sessions s "
            "LEFT JOIN system_prompts p ON p.hash = s.system_prompt_hash WHERE s.id = %s",
            (session_id,),
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return session_from_row(row[:-1], row[-1])

    def resolve(self, reference: str) -> str:
        """The id a person means by ``reference``: an id, a unique id prefix, or a title."""
        return resolve_reference(self._db, reference)

    def end_session(
        self, session_id: str, reason: str, *, ended_at: float | None = None
    ) -> Session:
        """Mark a session ended with ``reason``. Ending twice keeps the first."""
        ended = time.time() if ended_at is None else ended_at
        with self._db.transaction():
            changed = self._db.execute(
                "UPDATE sessions SET ended_at = %s, end_reason = %s "
                "WHERE id = %s AND ended_at IS NULL",
                (ended, reason, session_id),
            ).rowcount
            if not changed and not writes.session_exists(self._db, session_id):
                raise SessionNotFound(f"no session {session_id}")
        session = self.get_session(session_id)
        if changed and self._events is not None:
            self._events.session_ended(session, reason)
        return session

    def reopen_session(self, session_id: str) -> None:
        """Clear the end marks of a session that is being resumed."""
        self._db.execute(
            "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = %s", (session_id,)
        )

    def set_title(self, session_id: str, title: str) -> Session:
        """Set a title by hand: sanitised, at most 100 characters, unique (SPEC S4)."""
        with self._db.transaction():
            if not writes.session_exists(self._db, session_id):
                raise SessionNotFound(f"no session {session_id}")
            clean = writes.checked_manual_title(self._db, title, exclude_id=session_id)
            writes.write_title(self._db, session_id, clean, "user")
        return self.get_session(session_id)

    def continue_after_compression(self, session_id: str, **fields: Any) -> Session:
        """End ``session_id`` with reason ``compression`` and create its continuation (S6),
        in one transaction; a titled parent gives the child the lineage's next ``#N`` title."""
        parent = self.get_session(session_id)
        inherited: dict[str, Any] = {name: getattr(parent, name) for name in _INHERITED_FIELDS}
        inherited.update(fields)
        now = time.time()
        with self._db.transaction():
            ended = self._db.execute(
                "UPDATE sessions SET ended_at = %s, end_reason = 'compression' "
                "WHERE id = %s AND ended_at IS NULL",
                (now, parent.id),
            ).rowcount
            child_id = writes.insert_session(
                self._db,
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
            parent_title = parent.title
            if parent_title:
                writes.store_unique_title(
                    self._db,
                    child_id,
                    lambda: writes.next_lineage_title(self._db, parent_title),
                    "lineage",
                    if_untitled=False,
                )
        if ended and self._events is not None:
            self._events.session_ended(self.get_session(parent.id), "compression")
        child = self.get_session(child_id)
        if self._events is not None:
            self._events.session_started(child)
        return child

    def delete_session(self, session_id: str) -> list[str]:
        """Delete a session with its messages and its delegates; other children lose their
        parent link. Sessions still open fire ``session_ended`` with reason ``deleted``."""
        with self._db.transaction():
            if not writes.session_exists(self._db, session_id):
                raise SessionNotFound(f"no session {session_id}")
            doomed = writes.with_delegates(self._db, [session_id])
            still_open = self._open_sessions(doomed)
            writes.delete_sessions(self._db, doomed)
        self._announce_deleted(still_open)
        return doomed

    def delete_sessions(self, session_ids: Sequence[str], *, batch_size: int = 500) -> int:
        """Delete many sessions (and their delegates), each batch one transaction."""
        deleted = 0
        for start in range(0, len(session_ids), batch_size):
            with self._db.transaction():
                batch = list(session_ids[start : start + batch_size])
                doomed = writes.with_delegates(self._db, batch)
                still_open = self._open_sessions(doomed)
                deleted += writes.delete_sessions(self._db, doomed)
            self._announce_deleted(still_open)
        return deleted

    def _open_sessions(self, session_ids: Sequence[str]) -> list[Session]:
        if self._events is None or not session_ids:
            return []
        rows = self._db.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ANY(%s) AND ended_at IS NULL",
            (list(session_ids),),
        ).fetchall()
        by_id = {row[0]: session_from_row(row) for row in rows}
        return [by_id[i] for i in session_ids if i in by_id]

    def _announce_deleted(self, sessions: Sequence[Session]) -> None:
        if self._events is not None:
            for session in sessions:
                self._events.session_ended(session, "deleted")

    def set_pinned(self, session_ids: Iterable[str], pinned: bool) -> int:
        """Pin or unpin sessions; returns how many changed."""
        return self._set_flag("pinned", session_ids, pinned)

    def set_archived(self, session_ids: Iterable[str], archived: bool) -> int:
        """Archive (hide from listings, keep everything) or unarchive sessions."""
        return self._set_flag("archived", session_ids, archived)

    def _set_flag(self, column: str, session_ids: Iterable[str], value: bool) -> int:
        changed: int = self._db.execute(
            f"UPDATE sessions SET {column} = %s WHERE id = ANY(%s) AND {column} != %s",
            (int(value), list(session_ids), int(value)),
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
        changed = self._db.execute(
            "UPDATE sessions SET input_tokens = input_tokens + %(input)s, "
            "output_tokens = output_tokens + %(output)s, "
            "cost_actual_usd = CASE WHEN %(actual)s::float8 IS NULL THEN cost_actual_usd "
            "  ELSE coalesce(cost_actual_usd, 0) + %(actual)s END, "
            "cost_estimated_usd = CASE WHEN %(estimated)s::float8 IS NULL THEN cost_estimated_usd "
            "  ELSE coalesce(cost_estimated_usd, 0) + %(estimated)s END, "
            "billing_provider = coalesce(%(provider)s, billing_provider) WHERE id = %(id)s",
            {
                "input": input_tokens,
                "output": output_tokens,
                "actual": cost_actual_usd,
                "estimated": cost_estimated_usd,
                "provider": billing_provider,
                "id": session_id,
            },
        ).rowcount
        if not changed:
            raise SessionNotFound(f"no session {session_id}")

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
        from hermes_core.selection.filters import SessionFilter

        where, params = build_where(selection or SessionFilter())
        return self._query_sessions(
            where, params, newest_first=newest_first, limit=limit, pinned_first=pinned_first
        )

    def list_sessions(
        self, selection: SessionFilter | None = None, *, limit: int = 20
    ) -> list[Session]:
        """Every pinned match, then the ``limit`` most recently active other matches."""
        from hermes_core.selection.filters import SessionFilter

        where, params = build_where(selection or SessionFilter())
        pinned = self._query_sessions(f"({where}) AND s.pinned = 1", params)
        others = self._query_sessions(f"({where}) AND s.pinned = 0", params, limit=limit)
        return [*pinned, *others]

    def count_sessions(self, selection: SessionFilter | None = None) -> int:
        """How many sessions match ``selection``."""
        from hermes_core.selection.filters import SessionFilter

        where, params = build_where(selection or SessionFilter())
        row = self._db.execute(f"SELECT count(*) FROM sessions s WHERE {where}", params).fetchone()
        return int(row[0]) if row else 0

    def insight_rows(self, selection: SessionFilter | None = None) -> InsightRows:
        """The aggregates ``hermes insights`` reports over the sessions matching ``selection``
        (see ``hermes_core/store/insight_rows.py``)."""
        from hermes_core.selection.filters import SessionFilter

        from .insights import insight_rows

        where, params = build_where(selection or SessionFilter())
        return insight_rows(self._db, where, params)

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
        order = f's.last_active_at {direction}, s.id COLLATE "C" {direction}'
        if pinned_first:
            order = "s.pinned DESC, " + order
        sql = f"SELECT {SESSION_COLUMNS_QUALIFIED} FROM sessions s WHERE {where} ORDER BY {order}"
        arguments = list(params)
        if limit is not None:
            sql += " LIMIT %s"
            arguments.append(limit)
        # Fetched at once (a store's sessions are thousands, its messages millions: messages
        # are what iter_messages pages through).
        rows = self._db.execute(sql, arguments).fetchall()
        for row in rows:
            yield session_from_row(row)

    def previews(self, session_ids: Sequence[str], *, length: int = 200) -> dict[str, str]:
        """The start of each session's first user message (what listings show)."""
        rows = self._db.execute(
            "SELECT ids.id, (SELECT left(content, %s) FROM messages m WHERE m.session_id = ids.id "
            "AND m.role = 'user' ORDER BY m.id LIMIT 1) FROM unnest(%s::text[]) AS ids(id)",
            (length, list(session_ids)),
        ).fetchall()
        found = {str(row[0]): " ".join(str(row[1]).split()) if row[1] else "" for row in rows}
        return {session_id: found.get(session_id, "") for session_id in session_ids}

    def stats(self) -> StoreStats:
        """Counts and size for ``hermes sessions stats`` (size: ``pg_database_size``)."""
        return self.lifecycle.stats()

    def repair(self, *, check_only: bool = False) -> RepairReport:
        """``hermes sessions repair``: find what is out of step and rebuild it (see
        :mod:`.repair`). Not part of the store protocol: the command looks for it."""
        from .repair import repair

        return repair(self._db, check_only=check_only)

    # ------------------------------------------------------------------ messages

    def append_message(
        self, session_id: str, message: Message, *, input_tokens: int = 0, output_tokens: int = 0
    ) -> int:
        """Append one message (and the tokens of the model call that made it); returns its id."""
        return self.append_messages(
            session_id, [message], input_tokens=input_tokens, output_tokens=output_tokens
        )[0]

    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Message],
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> range:
        """Append messages in one transaction; returns their ids (consecutive: see
        :func:`.writes.reserve_message_ids`). ``input_tokens``/``output_tokens`` are added to
        the session's totals in the same transaction."""
        check_usage(input_tokens, output_tokens)
        batch = list(messages)
        if not batch:
            return range(0)
        with writes.pipelined(self._db, len(batch)), self._db.transaction():
            state = self._db.execute(
                "SELECT title IS NULL, message_count FROM sessions WHERE id = %s FOR UPDATE",
                (session_id,),
            ).fetchone()
            if state is None:
                raise SessionNotFound(f"no session {session_id}")
            untitled, count_before = bool(state[0]), int(state[1])
            first_exchange = (
                untitled
                and count_before + len(batch) <= AUTO_TITLE_WINDOW
                and any(message.role == "assistant" for message in batch)
                and self._db.execute(
                    "SELECT 1 FROM messages WHERE session_id = %s AND role = 'assistant' LIMIT 1",
                    (session_id,),
                ).fetchone()
                is None
            )
            inserted = writes.insert_messages(self._db, session_id, batch, time.time())
            writes.add_to_counters(self._db, session_id, inserted)
            if input_tokens or output_tokens:
                self._db.execute(
                    "UPDATE sessions SET input_tokens = input_tokens + %s, "
                    "output_tokens = output_tokens + %s WHERE id = %s",
                    (input_tokens, output_tokens, session_id),
                )
        if first_exchange and self._events is not None:
            self._start_auto_title(session_id)
        return range(inserted.ids[0], inserted.ids[-1] + 1)

    def update_message_content(self, message_id: int, content: str) -> None:
        """Replace a message's text (its search columns follow)."""
        from .fulltext import cjk_runs

        changed = self._db.execute(
            "UPDATE messages SET content = %s, cjk_text = %s WHERE id = %s",
            (content, cjk_runs(content), message_id),
        ).rowcount
        if not changed:
            raise KeyError(f"no message {message_id}")

    def messages(self, session_id: str) -> list[Message]:
        """All messages of a session, oldest first."""
        return list(self.iter_messages(session_id))

    def iter_messages(self, session_id: str, *, batch: int = 500) -> Iterator[Message]:
        """Stream a session's messages, oldest first, in pages of ``batch`` (keyset paging:
        no cursor stays open between pages)."""
        after = -1
        while True:
            rows = self._db.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = %s AND id > %s "
                "ORDER BY id LIMIT %s",
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
        keyset pages, so a caller that needs the end of a long session stops early."""
        role_clause = "" if roles is None else " AND role = ANY(%s)"
        before: int | None = None
        while True:
            params: list[object] = [session_id]
            if roles is not None:
                params.append(list(roles))
            sql = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = %s{role_clause}"
            if before is not None:
                sql += " AND id < %s"
                params.append(before)
            rows = self._db.execute(sql + " ORDER BY id DESC LIMIT %s", [*params, batch]).fetchall()
            for row in rows:
                yield message_from_row(row)
            if len(rows) < batch:
                return
            before = int(rows[-1][0])

    def count_messages(self, session_id: str, *, roles: Sequence[str] | None = None) -> int:
        """How many messages a session has (of ``roles`` when given)."""
        if roles is None:
            row = self._db.execute(
                "SELECT count(*) FROM messages WHERE session_id = %s", (session_id,)
            ).fetchone()
        else:
            row = self._db.execute(
                "SELECT count(*) FROM messages WHERE session_id = %s AND role = ANY(%s)",
                (session_id, list(roles)),
            ).fetchone()
        return int(row[0]) if row else 0

    def message_count(self, session_id: str) -> int:
        """How many messages a session holds (0 for an unknown session)."""
        row = self._db.execute(
            "SELECT count(*) FROM messages WHERE session_id = %s", (session_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    # ------------------------------------------------------------------ lineage and delegates

    def compression_root(self, session_id: str) -> str:
        """The first session of ``session_id``'s compression lineage (itself when none)."""
        return lineage.compression_root(self._db, session_id)

    def compression_lineage(self, session_id: str) -> list[str]:
        """Every session of ``session_id``'s compression lineage, oldest first."""
        return lineage.compression_lineage(self._db, session_id)

    def delegate_children(self, session_id: str) -> tuple[str, ...]:
        """The delegate sessions working directly for ``session_id``, oldest first."""
        return lineage.delegate_children(self._db, session_id)

    def delegate_tree(self, session_id: str) -> list[str]:
        """``session_id`` and every delegate working for it, recursively."""
        return lineage.delegate_tree(self._db, session_id)

    def iter_parents_first(self, selection: SessionFilter) -> Iterator[str]:
        """The ids of ``selection``, every parent before its children, then by start time."""
        return lineage.iter_parents_first(self._db, selection)

    def delete_exactly(self, session_id: str, expected_messages: Mapping[str, int]) -> list[str]:
        """Delete ``session_id`` and its delegates if unchanged since the export (else raise
        ``SessionsChanged``, deleting nothing)."""
        with self._db.transaction():
            still_open = self._open_sessions(list(expected_messages))
            deleted = lineage.delete_exactly(self._db, session_id, expected_messages)
        self._announce_deleted(still_open)
        return deleted

    # ------------------------------------------------------------------ state_meta

    def read_state(self, keys: Iterable[str]) -> dict[str, str]:
        """The ``state_meta`` values of ``keys`` that are set."""
        return writes.read_state(self._db, keys)

    def write_state(self, values: Mapping[str, str]) -> None:
        """Set ``state_meta`` keys in one transaction."""
        with self._db.transaction():
            writes.write_state(self._db, values)

    def list_state(self, prefix: str = "") -> dict[str, str]:
        """Every ``state_meta`` key that is set and starts with ``prefix`` (all keys when it
        is empty), with its value, in key order."""
        return writes.list_state(self._db, prefix)

    # ------------------------------------------------------------------ titles

    def apply_automatic_title(self, session_id: str, proposal: str) -> str | None:
        """Store an automatic title unless a title exists by now (made unique)."""
        with self._db.transaction():
            return writes.automatic_title(self._db, session_id, proposal)

    def _start_auto_title(self, session_id: str) -> None:
        thread = threading.Thread(
            target=self._generate_title,
            args=(session_id,),
            name=f"hermes-title-{session_id}",
            daemon=True,
        )
        thread.start()
        self._title_threads = [t for t in self._title_threads if t.is_alive()] + [thread]

    def _generate_title(self, session_id: str) -> None:
        """The title worker: its own pooled connection; never raises (a title is a nicety)."""
        events = self._events
        if events is None:
            return
        try:
            with self._pool.borrowed() as db:
                row = db.execute(
                    f"SELECT {SESSION_COLUMNS_QUALIFIED}, p.prompt FROM sessions s "
                    "LEFT JOIN system_prompts p ON p.hash = s.system_prompt_hash WHERE s.id = %s",
                    (session_id,),
                ).fetchone()
                if row is None or row[3] is not None:
                    return
                rows = db.execute(
                    f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = %s "
                    "ORDER BY id LIMIT %s",
                    (session_id, TITLE_MESSAGES_SHOWN),
                ).fetchall()
                proposal = events.generate_title(
                    session_from_row(row[:-1], row[-1]), [message_from_row(r) for r in rows]
                )
                if proposal:
                    with db.transaction():
                        writes.automatic_title(db, session_id, proposal)
        except Exception:
            log.warning("automatic title for %s failed", session_id, exc_info=True)

    def wait_for_titles(self, timeout: float | None = None) -> None:
        """Wait for automatic titles being generated in the background (tests, shutdown)."""
        for thread in list(self._title_threads):
            thread.join(timeout)
