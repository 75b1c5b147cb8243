"""The routing table in PostgreSQL: ``hermes_core.store.protocol.RoutingTable`` — the gateway's
routed sessions and the raw ``gateway_routing`` rows. The operations are the SQLite store's,
written once in :class:`hermes_core.store.routed_sessions.RoutingRows`; this module gives them
PostgreSQL's primitives.

Every write is one transaction. A write that concerns one session key first takes a
transaction-scoped advisory lock on the key (``pg_advisory_xact_lock``), so two gateways (or
two workers) on one database decide a key's session one after the other: in ``claim_route``
the second reads the first one's routing row and adopts its session instead of creating
another.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import Session, StoreEvents

from hermes_core.store import session_writes
from hermes_core.store.routed_sessions import (
    ResultRows,
    RoutingRows,
)

from .statements import PostgresSql

if TYPE_CHECKING:
    import psycopg

    Db = psycopg.Connection[tuple[Any, ...]]

_LOCK_CLASS = 0x4852  # "HR": the advisory-lock namespace of routing keys


class PostgresRouting(RoutingRows):
    """``gateway_routing`` and the routed session rows of one PostgreSQL store."""

    _binary_order = ' COLLATE "C"'

    def __init__(
        self,
        db: Db,
        get_session: Callable[[str], Session],
        events: StoreEvents | None,
    ) -> None:
        self._db = db
        self._get_session = get_session
        self._store_events = events

    def _execute(self, sql: str, params: Sequence[object] = ()) -> ResultRows:
        return self._db.execute(sql.replace("?", "%s"), tuple(params))

    def _transaction(self) -> AbstractContextManager[object]:
        return self._db.transaction()

    def _lock_key(self, session_key: str) -> None:
        self._db.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_CLASS, session_key)
        )

    def _insert_session(self, **columns: Any) -> str:
        return session_writes.insert_session(PostgresSql(self._db), **columns)

    def _session(self, session_id: str) -> Session:
        return self._get_session(session_id)

    def _events(self) -> StoreEvents | None:
        return self._store_events
