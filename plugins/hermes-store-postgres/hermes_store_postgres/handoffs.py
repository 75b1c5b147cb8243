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

import time
from typing import TYPE_CHECKING, Any

from hermes_core.store.handoffs import (
    ACTIVE_STATES,
    HANDOFF_PREFIX,
    HOME_PARTICIPANT_PREFIX,
    Handoff,
    HandoffState,
    decode_handoff,
    decode_home_participant,
    encode_handoff,
    encode_home_participant,
    failure_reason,
)

if TYPE_CHECKING:
    import psycopg

    Db = psycopg.Connection[tuple[Any, ...]]

_LOCK_CLASS = 0x4848  # "HH": the advisory-lock namespace of handoffs (routing uses 0x4852)
_LOCK_KEY = 0
"""One lock for every handoff row: handoffs are rare, and claim looks at all of them."""


class PostgresHandoffs:
    """The handoff rows of one PostgreSQL store."""

    def __init__(self, db: Db) -> None:
        self._db = db

    def get(self, session_id: str) -> Handoff | None:
        """The handoff of ``session_id``, if one was ever asked."""
        return _read(self._db, session_id)

    def request(self, session_id: str, platform: str, *, now: float | None = None) -> bool:
        """Mark ``session_id`` pending for ``platform``; False when one is already pending or
        running (nothing is changed then)."""
        moment = time.time() if now is None else now
        with self._db.transaction():
            _lock(self._db)
            current = _read(self._db, session_id)
            if current is not None and current.state in ACTIVE_STATES:
                return False
            _write(self._db, Handoff(session_id, platform, "pending", moment))
        return True

    def claim(self, platforms: list[str]) -> Handoff | None:
        """Take the oldest pending handoff for one of ``platforms`` (pending → running); None
        when there is none. Atomic across connections: one gateway only claims a handoff."""
        if _oldest_pending(_all(self._db), platforms) is None:
            # The gateway polls every second: an idle poll takes no lock.
            return None
        with self._db.transaction():
            _lock(self._db)
            current = _oldest_pending(_all(self._db), platforms)
            if current is None:
                return None  # another gateway was first
            claimed = Handoff(current.session_id, current.platform, "running", current.requested_at)
            _write(self._db, claimed)
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
        with self._db.transaction():
            _lock(self._db)
            current = _read(self._db, session_id)
            if current is None or current.state != "pending":
                return False
            self._db.execute("DELETE FROM state_meta WHERE key = %s", (HANDOFF_PREFIX + session_id,))
        return True

    def reclaim_stale(self, platforms: list[str]) -> list[str]:
        """At gateway start: handoffs of ``platforms`` left ``running`` by a gateway that died
        are pending again; their session ids."""
        reclaimed: list[str] = []
        with self._db.transaction():
            _lock(self._db)
            for current in _all(self._db):
                if current.state == "running" and current.platform in platforms:
                    pending = Handoff(
                        current.session_id, current.platform, "pending", current.requested_at
                    )
                    _write(self._db, pending)
                    reclaimed.append(current.session_id)
        return reclaimed

    def remember_home_participant(self, platform: str, chat_type: str, user_id: str | None) -> None:
        """What ``/sethome`` knew besides the chat: its type and who sent it, so a handoff
        to the home channel itself lands on the key that person's messages there use."""
        self._db.execute(
            "INSERT INTO state_meta(key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (HOME_PARTICIPANT_PREFIX + platform, encode_home_participant(chat_type, user_id)),
        )

    def home_participant(self, platform: str) -> tuple[str, str | None]:
        """(chat type, user id) of the platform's ``/sethome``; ("group", None) when unknown."""
        row = self._db.execute(
            "SELECT value FROM state_meta WHERE key = %s", (HOME_PARTICIPANT_PREFIX + platform,)
        ).fetchone()
        return decode_home_participant(None if row is None else str(row[0]))

    def _finish(self, session_id: str, state: HandoffState, error: str | None) -> bool:
        with self._db.transaction():
            _lock(self._db)
            current = _read(self._db, session_id)
            if current is None or current.state != "running":
                return False
            _write(
                self._db,
                Handoff(session_id, current.platform, state, current.requested_at, error),
            )
        return True


def _lock(db: Db) -> None:
    db.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_LOCK_CLASS, _LOCK_KEY))


def _read(db: Db, session_id: str) -> Handoff | None:
    row = db.execute(
        "SELECT value FROM state_meta WHERE key = %s", (HANDOFF_PREFIX + session_id,)
    ).fetchone()
    return None if row is None else decode_handoff(session_id, str(row[0]))


def _all(db: Db) -> list[Handoff]:
    rows = db.execute(
        "SELECT key, value FROM state_meta WHERE starts_with(key, %s)", (HANDOFF_PREFIX,)
    ).fetchall()
    return [decode_handoff(str(key)[len(HANDOFF_PREFIX) :], str(value)) for key, value in rows]


def _oldest_pending(handoffs: list[Handoff], platforms: list[str]) -> Handoff | None:
    waiting = [h for h in handoffs if h.state == "pending" and h.platform in platforms]
    return min(waiting, key=lambda h: h.requested_at, default=None)


def _write(db: Db, handoff: Handoff) -> None:
    db.execute(
        "INSERT INTO state_meta(key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (HANDOFF_PREFIX + handoff.session_id, encode_handoff(handoff)),
    )
