"""The lifecycle lock: at most one process prunes a store at a time.

The lock is a row in ``state_meta`` (key :data:`~.state.LOCK`), taken and checked inside a
``BEGIN IMMEDIATE`` transaction, so taking it is atomic across processes without any file
beside the store, and works wherever SQLite does. The row names its holder (a random token,
pid, host) and a lease: each prune batch renews the lease in the batch's own transaction, and
the holder deletes the row when done.

A holder killed with ``kill -9`` cannot delete its row, so a row is considered stale — and
taken over — when its lease has run out, or at once when it names a process on this host that
no longer exists. (An ``fcntl`` lock file would be released by the kernel on death, but is not
portable to every platform and would be one more file in the home.)
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import state

if TYPE_CHECKING:
    from hermes_core.store.protocol import LifecycleQueries, LifecycleTransaction, StateReader

LEASE_SECONDS = 120.0
"""How long a holder may go without renewing before others may take the lock over."""


class LockHeld(Exception):
    """Another live process holds the lifecycle lock; the message says who."""


@dataclass(frozen=True, slots=True)
class Holder:
    token: str
    pid: int
    host: str
    purpose: str
    since: float
    expires: float

    def describe(self) -> str:
        started = time.strftime("%H:%M:%S", time.localtime(self.since))
        return f"{self.purpose} by process {self.pid} on {self.host}, since {started}"


def _read_holder(reader: StateReader) -> Holder | None:
    value = state.read(reader, [state.LOCK]).get(state.LOCK)
    if value is None:
        return None
    try:
        data = json.loads(value)
        return Holder(
            token=str(data["token"]),
            pid=int(data["pid"]),
            host=str(data["host"]),
            purpose=str(data.get("purpose", "clean-up")),
            since=float(data.get("since", 0.0)),
            expires=float(data["expires"]),
        )
    except (ValueError, KeyError, TypeError):
        return None  # an unreadable row protects nothing


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # exists, owned by someone else
    return False


def is_stale(holder: Holder, now: float) -> bool:
    """Whether ``holder`` no longer protects anything (lease over, or its process is gone)."""
    if holder.expires <= now:
        return True
    return holder.host == socket.gethostname() and _process_gone(holder.pid)


class LifecycleLock:
    """A held lock. Renew it inside each write transaction; release it when done."""

    def __init__(self, lifecycle: LifecycleQueries | None, holder: Holder) -> None:
        self._lifecycle = lifecycle
        self.holder = holder

    def bind(self, lifecycle: LifecycleQueries) -> LifecycleLock:
        """Tie a lock taken inside a transaction to the store it releases itself from."""
        self._lifecycle = lifecycle
        return self

    def renew(self, db: LifecycleTransaction, *, lease: float = LEASE_SECONDS) -> None:
        """Extend the lease; call inside the caller's write transaction."""
        now = time.time()
        self.holder = Holder(
            self.holder.token,
            self.holder.pid,
            self.holder.host,
            self.holder.purpose,
            self.holder.since,
            now + lease,
        )
        state.write(db, {state.LOCK: _as_json(self.holder)})

    def release(self) -> None:
        """Delete the lock row if it is still ours (never raises on a closed store)."""
        if self._lifecycle is None:
            return
        try:
            with self._lifecycle.transaction(retry_seconds=10.0) as db:
                current = _read_holder(db)
                if current is not None and current.token == self.holder.token:
                    state.delete(db, state.LOCK)
        except Exception:  # the lease runs out anyway
            pass


def _as_json(holder: Holder) -> dict[str, object]:
    return {
        "token": holder.token,
        "pid": holder.pid,
        "host": holder.host,
        "purpose": holder.purpose,
        "since": holder.since,
        "expires": holder.expires,
    }


def take(
    db: LifecycleTransaction, purpose: str, *, now: float | None = None, lease: float = LEASE_SECONDS
) -> LifecycleLock:
    """Take the lock inside the caller's write transaction; raises :class:`LockHeld`."""
    moment = time.time() if now is None else now
    current = _read_holder(db)
    if current is not None and not is_stale(current, moment):
        raise LockHeld(f"another Hermes process is cleaning up this store ({current.describe()})")
    holder = Holder(
        token=os.urandom(8).hex(),
        pid=os.getpid(),
        host=socket.gethostname(),
        purpose=purpose,
        since=moment,
        expires=moment + lease,
    )
    state.write(db, {state.LOCK: _as_json(holder)})
    return LifecycleLock(None, holder)


def acquire(lifecycle: LifecycleQueries, purpose: str) -> LifecycleLock:
    """Take the lock in a transaction of its own (``lifecycle``: ``store.lifecycle``);
    raises :class:`LockHeld`."""
    with lifecycle.transaction() as db:
        return take(db, purpose).bind(lifecycle)
