"""The gateway inbox: every incoming platform event, durably recorded the moment it arrives,
before its chat's turn (``gateway_inbox``).

A platform message is acknowledged once its row is here, so acknowledging never waits for
a model answering an earlier message of the same chat. The turn takes the event from its row
and removes the row once the user turn is committed; rows a killed gateway left behind are
answered by the next start (:meth:`InboxRows.inbox_pending`). A platform message id is
recorded once per session key: a re-send finds it (in the inbox, or already stored as a user
turn) and is acknowledged without a second row. An event without one is given a unique id
here (:data:`INBOX_MESSAGE_PREFIX` and a random part), which its user turn carries, so a
restart that finds a row whose turn was stored just before a crash does not store it again.

:class:`InboxRows` is written once, in SQL both SQLite and PostgreSQL take, over the routing
facet's primitives (:class:`~hermes_core.store.routed_sessions.RoutingRows` inherits it).
"""

from __future__ import annotations

import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .routed_sessions import ResultRows

INBOX_MESSAGE_PREFIX = "hermes-inbox:"
"""The start of the message id the inbox gives an event that came without one."""

_COLUMNS = "id, session_key, platform, message_id, event, received_at"


@dataclass(frozen=True, slots=True)
class InboxEntry:
    """One row of ``gateway_inbox``: an event received and not turned yet."""

    id: int
    session_key: str
    platform: str
    message_id: str
    """The platform's id of the message; for an event without one, the id the inbox made
    (:func:`made_message_id`). Its user turn is stored with it."""
    event: str
    """The event as JSON text (``hermes_core.gateway.inbox`` writes and reads it)."""
    received_at: float

    @property
    def platform_message_id(self) -> str | None:
        """The platform's own id of the message, None when the inbox made it up."""
        return None if self.message_id.startswith(INBOX_MESSAGE_PREFIX) else self.message_id


@dataclass(frozen=True, slots=True)
class Admission:
    """What :meth:`InboxRows.inbox_add` made of an event."""

    entry: InboxEntry | None
    """The new row; None when the message was recorded before (a re-send)."""
    stored_in: str | None = None
    """For a re-send already turned: the session its user turn is in."""

    @property
    def duplicate(self) -> bool:
        return self.entry is None


def made_message_id() -> str:
    """A message id for an event that came without one: unique, never a platform's."""
    return f"{INBOX_MESSAGE_PREFIX}{uuid.uuid4().hex}"


class InboxRows(ABC):
    """Every operation on ``gateway_inbox``, over a backend's primitives (the routing
    facet's: statements with ``?`` placeholders, one write transaction, a per-key lock)."""

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[object] = ()) -> ResultRows:
        """Run one statement (``?`` placeholders)."""

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[object]:
        """One write transaction: committed at the end, rolled back on an error."""

    @abstractmethod
    def _lock_key(self, session_key: str) -> None:
        """Inside :meth:`_transaction`: hold ``session_key`` until the transaction ends."""

    @abstractmethod
    def delivered(self, session_key: str, message_id: str) -> str | None:
        """The session a platform message id of this key was stored in, if it was."""

    def inbox_add(
        self,
        session_key: str,
        platform: str,
        message_id: str | None,
        event: str,
        *,
        now: float | None = None,
    ) -> Admission:
        """Record an incoming event (``event``: its JSON text), in one transaction holding
        the key. A message id already in the inbox, or already stored as a user turn of this
        key, adds nothing: the admission says it is a duplicate. ``message_id`` None: the row
        gets an id of its own (:func:`made_message_id`)."""
        moment = time.time() if now is None else now
        recorded = made_message_id() if message_id is None else message_id
        with self._transaction():
            self._lock_key(session_key)
            if message_id is not None:
                seen = self.delivered(session_key, message_id)
                if seen is not None:
                    return Admission(None, seen)
            row = self._execute(
                "INSERT INTO gateway_inbox (session_key, platform, message_id, event, "
                "received_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
                (session_key, platform, recorded, event, moment),
            ).fetchone()
        if row is None:
            return Admission(None)
        entry = InboxEntry(int(row[0]), session_key, platform, recorded, event, moment)
        return Admission(entry)

    def inbox_pending(self, platforms: Sequence[str] | None = None) -> list[InboxEntry]:
        """The rows not turned yet (of ``platforms``), oldest first."""
        where, params = "", list(platforms or [])
        if platforms is not None:
            if not params:
                return []
            where = f"WHERE platform IN ({', '.join('?' for _ in params)}) "
        rows = self._execute(
            f"SELECT {_COLUMNS} FROM gateway_inbox {where}ORDER BY id", params
        ).fetchall()
        return [
            InboxEntry(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), float(r[5]))
            for r in rows
        ]

    def inbox_remove(self, entry_id: int) -> bool:
        """Forget a row once its turn is stored; whether it was there."""
        with self._transaction():
            removed = self._execute("DELETE FROM gateway_inbox WHERE id = ?", (entry_id,)).rowcount
        return bool(removed)
