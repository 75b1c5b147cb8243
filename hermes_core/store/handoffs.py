"""The handoff registry (SPEC G7): the state of a CLI session's ``/handoff <platform>``.

One row per session in ``state_meta`` (key ``gateway.handoff:<session id>``, a JSON value), so
no schema migration is needed: ``pending`` (asked by the CLI) → ``running`` (claimed by a
gateway) → ``completed`` | ``failed`` (with a reason of at most 500 characters). Every change is
a compare-and-set inside one ``BEGIN IMMEDIATE`` transaction, so two gateways never both claim
a handoff and a waiter that gives up never cancels one already claimed. A ``completed`` or
``failed`` row no longer blocks anything: a new request replaces it (a failed handoff can be
retried).

This module holds the :class:`Handoff` record, the row encoding every backend shares and the
SQLite facet (:attr:`SessionStore.handoffs <hermes_core.store.SessionStore.handoffs>`, the
protocol's :class:`~hermes_core.store.protocol.HandoffTable`); the PostgreSQL one lives in the
``hermes-store-postgres`` plugin and keeps the same rows.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Literal

from .connection import write_transaction

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


class HandoffRegistry:
    """The handoff facet of the SQLite store: compare-and-set operations on the handoff rows
    of one connection."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    def get(self, session_id: str) -> Handoff | None:
        """The handoff of ``session_id``, if one was ever asked."""
        row = self._db.execute(
            "SELECT value FROM state_meta WHERE key = ?", (HANDOFF_PREFIX + session_id,)
        ).fetchone()
        return None if row is None else decode_handoff(session_id, row[0])

    def request(self, session_id: str, platform: str, *, now: float | None = None) -> bool:
        """Mark ``session_id`` pending for ``platform``; False when one is already pending or
        running (nothing is changed then)."""
        moment = time.time() if now is None else now
        with write_transaction(self._db) as db:
            current = _read(db, session_id)
            if current is not None and current.state in ACTIVE_STATES:
                return False
            _write(db, Handoff(session_id, platform, "pending", moment))
        return True

    def claim(self, platforms: list[str]) -> Handoff | None:
        """Take the oldest pending handoff for one of ``platforms`` (pending → running); None
        when there is none. Atomic: a handoff is claimed by one gateway only."""
        idle = not self._db.in_transaction and not any(
            h.state == "pending" and h.platform in platforms for h in _all(self._db)
        )
        if idle:
            # The gateway polls every second: a plain (autocommit, so current) read first, so
            # an idle poll never takes the write lock the gateway's turns are waiting for.
            return None
        with write_transaction(self._db) as db:
            for current in sorted(_all(db), key=lambda h: h.requested_at):
                if current.state == "pending" and current.platform in platforms:
                    claimed = Handoff(
                        current.session_id, current.platform, "running", current.requested_at
                    )
                    _write(db, claimed)
                    return claimed
        return None

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
        with write_transaction(self._db) as db:
            current = _read(db, session_id)
            if current is None or current.state != "pending":
                return False
            db.execute("DELETE FROM state_meta WHERE key = ?", (HANDOFF_PREFIX + session_id,))
        return True

    def reclaim_stale(self, platforms: list[str]) -> list[str]:
        """At gateway start: handoffs of ``platforms`` left ``running`` by a gateway that died
        are pending again; their session ids."""
        reclaimed: list[str] = []
        with write_transaction(self._db) as db:
            for current in _all(db):
                if current.state == "running" and current.platform in platforms:
                    _write(
                        db,
                        Handoff(
                            current.session_id, current.platform, "pending", current.requested_at
                        ),
                    )
                    reclaimed.append(current.session_id)
        return reclaimed

    def remember_home_participant(self, platform: str, chat_type: str, user_id: str | None) -> None:
        """What ``/sethome`` knew besides the chat: its type and who sent it, so a handoff
        to the home channel itself lands on the key that person's messages there use."""
        value = encode_home_participant(chat_type, user_id)
        with write_transaction(self._db) as db:
            db.execute(
                "INSERT OR REPLACE INTO state_meta(key, value) VALUES (?, ?)",
                (HOME_PARTICIPANT_PREFIX + platform, value),
            )

    def home_participant(self, platform: str) -> tuple[str, str | None]:
        """(chat type, user id) of the platform's ``/sethome``; ("group", None) when unknown."""
        row = self._db.execute(
            "SELECT value FROM state_meta WHERE key = ?", (HOME_PARTICIPANT_PREFIX + platform,)
        ).fetchone()
        return decode_home_participant(None if row is None else row[0])

    def _finish(self, session_id: str, state: HandoffState, error: str | None) -> bool:
        with write_transaction(self._db) as db:
            current = _read(db, session_id)
            if current is None or current.state != "running":
                return False
            _write(db, Handoff(session_id, current.platform, state, current.requested_at, error))
        return True


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


def _read(db: sqlite3.Connection, session_id: str) -> Handoff | None:
    row = db.execute(
        "SELECT value FROM state_meta WHERE key = ?", (HANDOFF_PREFIX + session_id,)
    ).fetchone()
    return None if row is None else decode_handoff(session_id, row[0])


def _all(db: sqlite3.Connection) -> list[Handoff]:
    rows = db.execute(
        "SELECT key, value FROM state_meta WHERE key >= ? AND key < ?",
        (HANDOFF_PREFIX, HANDOFF_PREFIX[:-1] + ";"),
    ).fetchall()
    return [decode_handoff(key[len(HANDOFF_PREFIX) :], value) for key, value in rows]


def _write(db: sqlite3.Connection, handoff: Handoff) -> None:
    db.execute(
        "INSERT OR REPLACE INTO state_meta(key, value) VALUES (?, ?)",
        (HANDOFF_PREFIX + handoff.session_id, encode_handoff(handoff)),
    )
