"""The handoff registry (SPEC G7): the state of a CLI session's ``/handoff <platform>``.

One row per session in ``state_meta`` (key ``gateway.handoff:<session id>``, a JSON value), so
no schema migration is needed: ``pending`` (asked by the CLI) → ``running`` (claimed by a
gateway) → ``completed`` | ``failed`` (with a reason of at most 500 characters). Every change is
a compare-and-set inside one ``BEGIN IMMEDIATE`` transaction, so two gateways never both claim
a handoff and a waiter that gives up never cancels one already claimed. A ``completed`` or
``failed`` row no longer blocks anything: a new request replaces it (a failed handoff can be
retried).

This module holds the :class:`Handoff` record, the row encoding, :class:`HandoffRows` — every
transition and its ``state_meta`` rows, written once over a backend's connection and
compare-and-set transaction — and the SQLite facet
over it (:attr:`SessionStore.handoffs <hermes_core.store.SessionStore.handoffs>`, the
protocol's :class:`~hermes_core.store.protocol.HandoffTable`); the PostgreSQL one lives in the
``hermes-store-postgres`` plugin, over the same class and rows.
"""

from __future__ import annotations

import json
import sqlite3
import time
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal

from .connection import write_transaction
from .state_meta import delete_state, read_state, write_state
from .statements import Sql, SqliteSql

HandoffState = Literal["pending", "running", "completed", "failed"]
HANDOFF_PREFIX = "gateway.handoff:"
HOME_PARTICIPANT_PREFIX = "gateway.home_participant:"
REASON_LIMIT = 500
"""The longest failure reason kept."""
ACTIVE_STATES = ("pending", "running")


@dataclass(frozen=True, slots=True)
class Handoff:
    """One session's handoff."""

    session_id: str
    platform: str
    state: HandoffState
    requested_at: float
    error: str | None = None


class HandoffRows(ABC):
    """The handoff facet's operations (``HandoffTable``) over a backend's connection: the
    ``state_meta`` rows are read and written in the SQL both stores take (``_sql``). A backend
    says what one compare-and-set transaction is (:meth:`_exclusive`): inside it, every read
    sees what other connections committed and no other writer of handoffs gets in."""

    _sql: Sql
    """The store's connection (statements both stores take)."""

    @abstractmethod
    def _exclusive(self) -> AbstractContextManager[object]:
        """One transaction no other handoff writer interleaves with; commits at the end."""

    def _value(self, key: str) -> str | None:
        """The value of ``key``, if set."""
        return read_state(self._sql, [key]).get(key)

    def _values(self, prefix: str) -> dict[str, str]:
        """Every key starting with ``prefix`` and its value: a key range (in byte order),
        which the key's index serves."""
        after_prefix = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        column = f"key{self._sql.binary_order}"
        rows = self._sql.execute(
            f"SELECT key, value FROM state_meta WHERE {column} >= ? AND {column} < ?",
            (prefix, after_prefix),
        ).fetchall()
        return {str(key): str(value) for key, value in rows}

    def _put(self, key: str, value: str) -> None:
        """Set ``key`` (insert or replace)."""
        write_state(self._sql, {key: value})

    def _drop(self, key: str) -> None:
        """Delete ``key``."""
        delete_state(self._sql, [key])

    def _idle_poll_may_skip(self) -> bool:
        """Whether a plain read outside a transaction shows what is committed now (so an idle
        :meth:`claim` can answer without taking the lock)."""
        return True

    def get(self, session_id: str) -> Handoff | None:
        """The handoff of ``session_id``, if one was ever asked."""
        value = self._value(HANDOFF_PREFIX + session_id)
        return None if value is None else decode_handoff(session_id, value)

    def request(self, session_id: str, platform: str, *, now: float | None = None) -> bool:
        """Mark ``session_id`` pending for ``platform``; False when one is already pending or
        running (nothing is changed then)."""
        moment = time.time() if now is None else now
        with self._exclusive():
            current = self.get(session_id)
            if current is not None and current.state in ACTIVE_STATES:
                return False
            self._write(Handoff(session_id, platform, "pending", moment))
        return True

    def claim(self, platforms: list[str]) -> Handoff | None:
        """Take the oldest pending handoff for one of ``platforms`` (pending → running); None
        when there is none. Atomic: a handoff is claimed by one gateway only."""
        if self._idle_poll_may_skip() and self._oldest_pending(platforms) is None:
            # The gateway polls every second: an idle poll is a plain read and never takes the
            # lock (on SQLite, the write lock the gateway's turns are waiting for).
            return None
        with self._exclusive():
            current = self._oldest_pending(platforms)
            if current is None:
                return None  # another gateway was first
            claimed = Handoff(current.session_id, current.platform, "running", current.requested_at)
            self._write(claimed)
        return claimed

    def complete(self, session_id: str) -> bool:
        """running → completed; whether the row was running."""
        return self._finish(session_id, "completed", None)

    def fail(self, session_id: str, reason: str) -> bool:
        """running → failed with ``reason`` (cut to 500 characters); the row no longer blocks
        a new request, so the handoff can be retried. Whether the row was running."""
        return self._finish(session_id, "failed", failure_reason(reason))

    def cancel(self, session_id: str) -> bool:
        """Withdraw a request nobody claimed (the waiter timed out): pending → no row. False
        when a gateway claimed it meanwhile (the waiter keeps waiting then)."""
        with self._exclusive():
            current = self.get(session_id)
            if current is None or current.state != "pending":
                return False
            self._drop(HANDOFF_PREFIX + session_id)
        return True

    def reclaim_stale(self, platforms: list[str]) -> list[str]:
        """At gateway start: handoffs of ``platforms`` left ``running`` by a gateway that died
        are pending again; their session ids."""
        reclaimed: list[str] = []
        with self._exclusive():
            for current in self._all():
                if current.state == "running" and current.platform in platforms:
                    pending = Handoff(
                        current.session_id, current.platform, "pending", current.requested_at
                    )
                    self._write(pending)
                    reclaimed.append(current.session_id)
        return reclaimed

    def remember_home_participant(self, platform: str, chat_type: str, user_id: str | None) -> None:
        """What ``/sethome`` knew besides the chat: its type and who sent it, so a handoff
        to the home channel itself lands on the key that person's messages there use."""
        with self._exclusive():
            self._put(
                HOME_PARTICIPANT_PREFIX + platform, encode_home_participant(chat_type, user_id)
            )

    def home_participant(self, platform: str) -> tuple[str, str | None]:
        """(chat type, user id) of the platform's ``/sethome``; ("group", None) when unknown."""
        return decode_home_participant(self._value(HOME_PARTICIPANT_PREFIX + platform))

    def _finish(self, session_id: str, state: HandoffState, error: str | None) -> bool:
        with self._exclusive():
            current = self.get(session_id)
            if current is None or current.state != "running":
                return False
            self._write(Handoff(session_id, current.platform, state, current.requested_at, error))
        return True

    def _all(self) -> list[Handoff]:
        return [
            decode_handoff(key[len(HANDOFF_PREFIX) :], value)
            for key, value in self._values(HANDOFF_PREFIX).items()
        ]

    def _oldest_pending(self, platforms: list[str]) -> Handoff | None:
        waiting = [h for h in self._all() if h.state == "pending" and h.platform in platforms]
        return min(waiting, key=lambda h: h.requested_at, default=None)

    def _write(self, handoff: Handoff) -> None:
        self._put(HANDOFF_PREFIX + handoff.session_id, encode_handoff(handoff))


class HandoffRegistry(HandoffRows):
    """The handoff facet of the SQLite store, on one connection: a compare-and-set is one
    ``BEGIN IMMEDIATE`` transaction (SQLite's one writer at a time)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection
        self._sql = SqliteSql(connection)

    def _exclusive(self) -> AbstractContextManager[object]:
        return write_transaction(self._db)

    def _idle_poll_may_skip(self) -> bool:
        return not self._db.in_transaction  # an open read transaction would show an old state


def failure_reason(reason: str) -> str:
    """``reason`` on one line, cut to :data:`REASON_LIMIT` characters (never empty)."""
    return " ".join(reason.split())[:REASON_LIMIT] or "the handoff failed"


def encode_handoff(handoff: Handoff) -> str:
    """The ``state_meta`` value of ``handoff`` (its key is ``HANDOFF_PREFIX + session id``)."""
    value = {
        "platform": handoff.platform,
        "state": handoff.state,
        "requested_at": handoff.requested_at,
        "error": handoff.error,
    }
    return json.dumps(value)


def decode_handoff(session_id: str, value: str) -> Handoff:
    """The handoff stored as ``value`` under ``session_id``'s key."""
    data = json.loads(value)
    return Handoff(
        session_id,
        str(data["platform"]),
        data["state"],
        float(data["requested_at"]),
        data.get("error"),
    )


def encode_home_participant(chat_type: str, user_id: str | None) -> str:
    """The ``state_meta`` value ``/sethome`` leaves under ``HOME_PARTICIPANT_PREFIX + platform``."""
    return json.dumps({"chat_type": chat_type, "user_id": user_id})


def decode_home_participant(value: str | None) -> tuple[str, str | None]:
    """(chat type, user id) from a stored value; ("group", None) when there is none."""
    if value is None:
        return "group", None
    data = json.loads(value)
    return str(data.get("chat_type") or "group"), data.get("user_id")
