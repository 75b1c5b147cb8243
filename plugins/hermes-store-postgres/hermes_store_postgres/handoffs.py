"""The handoff registry in PostgreSQL: ``hermes_core.store.protocol.HandoffTable`` — each
session's ``/handoff`` state and what ``/sethome`` knew of the home channel's sender — in the
same ``state_meta`` rows and with the semantics of the SQLite one
(``hermes_core/store/handoffs.py``).

Every transition is one transaction that first takes the handoff advisory lock
(``pg_advisory_xact_lock``), then reads the row(s) and writes only when the state is still the
expected one. Connections run in READ COMMITTED, so each statement after the lock sees what the
previous holder committed: two gateways never both claim a handoff, and a waiter's cancel
never withdraws one a gateway claimed in the meantime.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from hermes_core.store.handoffs import HandoffRows

from .statements import PostgresSql

if TYPE_CHECKING:
    from collections.abc import Iterator

    import psycopg

    Db = psycopg.Connection[tuple[Any, ...]]

_LOCK_CLASS = 0x4848  # "HH": the advisory-lock namespace of handoffs (routing uses 0x4852)
_LOCK_KEY = 0
"""One lock for every handoff row: handoffs are rare, and claim looks at all of them."""


class PostgresHandoffs(HandoffRows):
    """The handoff rows of one PostgreSQL store (the transitions: :class:`HandoffRows`)."""

    def __init__(self, db: Db) -> None:
        self._db = db
        self._sql = PostgresSql(db)

    @contextmanager
    def _exclusive(self) -> Iterator[object]:
        with self._db.transaction() as transaction:
            self._db.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_LOCK_CLASS, _LOCK_KEY))
            yield transaction
