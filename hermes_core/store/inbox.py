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

Several gateways may share one store, so a row is **claimed** before it is turned: a
``state_meta`` key per row (:data:`CLAIM_PREFIX` and the row's id) names the gateway process
that took it and until when (:class:`InboxClaim`). The gateway that records an event claims its
row in the same transaction; a starting gateway takes only rows nobody holds — unclaimed, a
claim whose lease ran out, or one whose holder is dead (:meth:`InboxRows.inbox_take`, one
transaction per row that only one process wins). A live gateway renews its claims
(:meth:`InboxRows.inbox_renew`); removing a row removes its claim.

:class:`InboxRows` is written once, in SQL both SQLite and PostgreSQL take, over the routing
facet's primitives (:class:`~hermes_core.store.routed_sessions.RoutingRows` inherits it).
"""

from __future__ import annotations

import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .routed_sessions import ResultRows

INBOX_MESSAGE_PREFIX = "hermes-inbox:"
"""The start of the message id the inbox gives an event that came without one."""

_COLUMNS = "id, session_key, platform, message_id, event, received_at"

CLAIM_PREFIX = "gateway.inbox_claim:"
"""``state_meta`` key of a row's claim: this and the row's id; the value is
:attr:`InboxClaim.text`. Claims belong to the store they were taken in: a copy of the store
(migrate, merge, salvage) leaves them behind."""

CLAIM_SECONDS = 60.0
"""How long a claim holds unless renewed: a gateway on another machine that died without a
trace lets its rows go after this long."""


def claim_key(entry_id: int) -> str:
    """The ``state_meta`` key of the claim on inbox row ``entry_id``."""
    return f"{CLAIM_PREFIX}{entry_id}"


@dataclass(frozen=True, slots=True)
class InboxClaim:
    """A gateway process holding inbox rows: who it is, and until when (epoch seconds) its
    claims hold unless it renews them."""

    owner: str
    """Unique per process, without spaces (the gateway makes it of host, pid and a random
    part, and tells from it whether the holder is alive)."""
    until: float

    @property
    def text(self) -> str:
        return f"{self.owner} {self.until:.3f}"

    @classmethod
    def parse(cls, text: str) -> InboxClaim | None:
        """The claim :attr:`text` wrote; None for anything else."""
        owner, _, until = text.rpartition(" ")
        try:
            return cls(owner, float(until)) if owner else None
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class Taken:
    """What :meth:`InboxRows.inbox_take` took."""

    entries: list[InboxEntry]
    """The rows now claimed by the caller, oldest first."""
    held_until: float | None = None
    """When the earliest claim of a live holder on another row runs out (None: no such row)."""


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
        claim: InboxClaim | None = None,
    ) -> Admission:
        """Record an incoming event (``event``: its JSON text), in one transaction holding
        the key. A message id already in the inbox, or already stored as a user turn of this
        key, adds nothing: the admission says it is a duplicate. ``message_id`` None: the row
        gets an id of its own (:func:`made_message_id`). ``claim``: the new row is claimed
        for it in the same transaction."""
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
            if row is not None and claim is not None:
                self._execute(
                    "INSERT INTO state_meta(key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (claim_key(int(row[0])), claim.text),
                )
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
        return [_entry(r) for r in rows]

    def inbox_take(
        self,
        platforms: Sequence[str],
        claim: InboxClaim,
        alive: Callable[[str], bool],
        *,
        now: float | None = None,
    ) -> Taken:
        """Claim for ``claim`` every row of ``platforms`` nobody holds: unclaimed, or whose
        claim ran out, or whose holder is dead (``alive(owner)`` False). Rows ``claim``'s
        owner holds already are not taken again. Each row is taken in a transaction of its
        own holding its key, so of several processes taking at once exactly one gets it."""
        moment = time.time() if now is None else now
        taken: list[InboxEntry] = []
        held: float | None = None
        for entry in self.inbox_pending(platforms):
            with self._transaction():
                self._lock_key(entry.session_key)
                there = self._execute("SELECT id FROM gateway_inbox WHERE id = ?", (entry.id,))
                if there.fetchone() is None:
                    continue  # turned meanwhile
                found = self._execute(
                    "SELECT value FROM state_meta WHERE key = ?", (claim_key(entry.id),)
                ).fetchone()
                holder = InboxClaim.parse(str(found[0])) if found and found[0] else None
                if holder is not None:
                    if holder.owner == claim.owner:
                        continue
                    if holder.until > moment and alive(holder.owner):
                        held = holder.until if held is None else min(held, holder.until)
                        continue
                self._execute(
                    "INSERT INTO state_meta(key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (claim_key(entry.id), claim.text),
                )
            taken.append(entry)
        return Taken(taken, held)

    def inbox_renew(self, claim: InboxClaim) -> int:
        """Extend every claim of ``claim``'s owner to ``claim.until``; how many there were."""
        owner = f"{claim.owner} "
        with self._transaction():
            renewed = self._execute(
                "UPDATE state_meta SET value = ? WHERE substr(key, 1, ?) = ? "
                "AND substr(value, 1, ?) = ?",
                (claim.text, len(CLAIM_PREFIX), CLAIM_PREFIX, len(owner), owner),
            ).rowcount
        return int(renewed or 0)

    def inbox_release(self, entry_ids: Sequence[int], owner: str) -> None:
        """Drop ``owner``'s claims on the rows ``entry_ids`` (the rows stay, for anyone)."""
        held = f"{owner} "
        with self._transaction():
            for entry_id in entry_ids:
                self._execute(
                    "DELETE FROM state_meta WHERE key = ? AND substr(value, 1, ?) = ?",
                    (claim_key(entry_id), len(held), held),
                )

    def inbox_remove(self, entry_id: int) -> bool:
        """Forget a row (and its claim) once its turn is stored; whether it was there."""
        with self._transaction():
            removed = self._execute("DELETE FROM gateway_inbox WHERE id = ?", (entry_id,)).rowcount
            self._execute("DELETE FROM state_meta WHERE key = ?", (claim_key(entry_id),))
        return bool(removed)


def _entry(row: Any) -> InboxEntry:
    return InboxEntry(int(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]),
                      float(row[5]))  # fmt: skip
