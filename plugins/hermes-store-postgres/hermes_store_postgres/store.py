"""``PostgresStore``: the session store protocol (``hermes_core.store.protocol.Store``) over
one PostgreSQL database.

The session facade itself is the core's :class:`~hermes_core.store.facade.StoreFacade`,
written once for every backend; this class gives it PostgreSQL's primitives — the pooled
connection and its transactions, the message inserts of :mod:`.writes`, the selection dialect,
the full-text columns, previews and statistics — and the facets ``search_index``,
``lifecycle``, ``imports``, ``routing`` and ``handoffs``.

One instance holds one pooled connection for its own thread (the automatic-title worker takes
another from the pool). Connections commit each statement by itself; every write of several
statements is one transaction. Every write that starts or ends a session fires the plugin
events, as the SQLite store does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import Message, StoreEvents

from hermes_core.store.errors import StoreReadOnly
from hermes_core.store.facade import AppendedRows, StoreFacade

from . import writes
from .connection import StoreConnections, first_look
from .schema import migrate
from .statements import PostgresSql

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter
    from hermes_core.store.autotitle import TitleJob
    from hermes_core.store.insight_rows import InsightRows
    from hermes_core.store.maintenance import RepairReport, StoreStats

    from .handoffs import PostgresHandoffs
    from .imports import PostgresImportBookkeeping
    from .lifecycle import PostgresLifecycle
    from .routing import PostgresRouting
    from .search import PostgresSearchIndex
    from .translating import StoreConnection


class PostgresStore(StoreFacade):
    """Sessions and their messages in a PostgreSQL database (``store.url``)."""

    _row_lock = " FOR UPDATE"
    """Appends to one session queue on its row; appends to others run side by side."""

    def __init__(self, url: str, shown_url: str, *, events: StoreEvents | None = None) -> None:
        where = f"store.url {shown_url!r}"
        pool = StoreConnections(url, where)
        db: StoreConnection[tuple[Any, ...]] = pool.main
        try:
            refusal, version = first_look(db, where)
            migrate(db, where, known=version)
        except BaseException:
            pool.close()
            raise
        self._attach(pool, db, shown_url, refusal, events)

    def _attach(
        self,
        pool: StoreConnections,
        db: StoreConnection[tuple[Any, ...]],
        shown_url: str,
        refusal: StoreReadOnly | None,
        events: StoreEvents | None,
    ) -> None:
        self._pool = pool
        self._db = db
        self._sql = PostgresSql(db)
        self._shown = shown_url
        self._write_refusal = refusal
        self._events = events
        self._title_threads: list[TitleJob] = []
        self._closed = False

    # The facets are made on first use: a command needs one or two of their modules.

    @cached_property
    def search_index(self) -> PostgresSearchIndex:
        """The reads of ``session_search`` and the browse picker."""
        from .search import PostgresSearchIndex

        return PostgresSearchIndex(self._db)

    @cached_property
    def lifecycle(self) -> PostgresLifecycle:
        """What prune, archive and the automatic clean-up read and write."""
        from .lifecycle import PostgresLifecycle

        return PostgresLifecycle(self._db)

    @cached_property
    def imports(self) -> PostgresImportBookkeeping:
        """Import writes and bookkeeping (their sessions fire the plugin events)."""
        from .imports import PostgresImportBookkeeping

        return PostgresImportBookkeeping(self._db, self._events, self._pool.borrowed)

    @cached_property
    def routing(self) -> PostgresRouting:
        """The routing table: the gateway's routed sessions, recovery reads, home channels
        and repair, and the raw rows migrate and imports copy."""
        from .routing import PostgresRouting

        return PostgresRouting(self._db, self.get_session, self._events)

    @cached_property
    def handoffs(self) -> PostgresHandoffs:
        """The ``/handoff`` registry and what ``/sethome`` knew of the home channel."""
        from .handoffs import PostgresHandoffs

        return PostgresHandoffs(self._db)

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

    # ------------------------------------------------------------------ PostgreSQL's primitives

    def _transaction(self) -> AbstractContextManager[object]:
        return self._db.transaction()

    def _append_rows(
        self, session_id: str, batch: Sequence[Message], input_tokens: int, output_tokens: int
    ) -> AppendedRows | None:
        """A live turn's append (fewer than :data:`.writes.COPY_FROM` messages) in one
        statement (:func:`.writes.append_live`); a larger batch as every backend does it."""
        if len(batch) >= writes.COPY_FROM:
            return super()._append_rows(session_id, batch, input_tokens, output_tokens)
        return writes.append_live(
            self._db, session_id, batch, time.time(), input_tokens, output_tokens
        )

    def _write_one(self, sql: str, params: Sequence[object]) -> int:
        """The connection commits each statement by itself: no block needed."""
        return self._sql.execute(sql, params).rowcount

    def _where(self, selection: SessionFilter) -> tuple[str, list[object]]:
        from .selection_sql import build_where

        return build_where(selection)

    def _unindex_messages(self, where: str, params: Sequence[object]) -> None:
        """Nothing: a message's search columns go with its row."""

    def _insert_messages(
        self, session_id: str, batch: Sequence[Message], input_tokens: int, output_tokens: int
    ) -> range:
        """Their ids are consecutive: see :func:`.writes.reserve_message_ids`."""
        inserted = writes.insert_messages(self._db, session_id, batch, time.time())
        writes.add_to_counters(self._db, session_id, inserted)
        if input_tokens or output_tokens:
            self._db.execute(
                "UPDATE sessions SET input_tokens = input_tokens + %s, "
                "output_tokens = output_tokens + %s WHERE id = %s",
                (input_tokens, output_tokens, session_id),
            )
        return range(inserted.ids[0], inserted.ids[-1] + 1)

    def _insight_rows(self, where: str, params: Sequence[object]) -> InsightRows:
        from .insights import insight_rows

        return insight_rows(self._db, where, params)

    @contextmanager
    def _title_worker_store(self) -> Iterator[PostgresStore]:
        """This store on another connection of the pool (given back when the block ends),
        without events."""
        with self._pool.borrowed() as db:
            worker = PostgresStore.__new__(PostgresStore)
            worker._attach(self._pool, db, self._shown, self._write_refusal, None)
            yield worker

    # ------------------------------------------------------------------ what PostgreSQL says its way

    def previews(self, session_ids: Sequence[str], *, length: int = 200) -> dict[str, str]:
        """The start of each session's first user message (what listings show), in one
        statement."""
        rows = self._db.execute(
            "SELECT ids.id, (SELECT left(content, %s) FROM messages m WHERE m.session_id = ids.id "
            "AND m.role = 'user' ORDER BY m.id LIMIT 1) FROM unnest(%s::text[]) AS ids(id)",
            (length, list(session_ids)),
        ).fetchall()
        found = {str(row[0]): " ".join(str(row[1]).split()) if row[1] else "" for row in rows}
        return {session_id: found.get(session_id, "") for session_id in session_ids}

    def update_message_content(self, message_id: int, content: str) -> None:
        """Replace a message's text (its search columns follow)."""
        from .writes import search_columns

        changed = self._db.execute(
            "UPDATE messages SET content = %s, cjk_text = %s, pair_keys = %s WHERE id = %s",
            (content, *search_columns(content), message_id),
        ).rowcount
        if not changed:
            raise KeyError(f"no message {message_id}")

    def stats(self) -> StoreStats:
        """Counts and size for ``hermes sessions stats`` (size: ``pg_database_size``)."""
        return self.lifecycle.stats()

    def repair(self, *, check_only: bool = False) -> RepairReport:
        """``hermes sessions repair``: find what is out of step and rebuild it (see
        :mod:`.repair`). Not part of the store protocol: the command looks for it."""
        from .repair import repair

        return repair(self._db, check_only=check_only)
