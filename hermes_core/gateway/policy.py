"""When a gateway session is reset automatically (SPEC G3): ``session_reset`` in config.yaml.

- ``none`` (the default): never; ``/new`` and ``/reset`` are the way, and compression keeps a
  long chat within its budget.
- ``idle``: when the chat's last real activity (its last stored message) is more than
  ``idle_minutes`` old.
- ``daily``: when the last real activity is before the most recent ``daily_hour`` o'clock (local
  time) — so the first message after 4 am starts fresh, once.
- ``both``: whichever comes first.

The decision is taken when the chat's next message arrives, from what the store says, so a
restarted gateway applies it to recovered sessions with their real idle time. A session that is
*busy* is never reset, whatever the policy: busy means this gateway has a turn of that session
in flight (the model still answering or a tool still running — the session's background work).
The clock is injectable for tests.
"""

from __future__ import annotations

import datetime as _dt
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from hermes_core.config import Config

ResetMode = Literal["none", "idle", "daily", "both"]
ResetCause = Literal["idle", "daily"]


@dataclass(frozen=True, slots=True)
class ResetPolicy:
    """The automatic reset policy of gateway sessions."""

    mode: ResetMode = "none"
    idle_minutes: int = 1440
    daily_hour: int = 4

    @classmethod
    def from_config(cls, config: Config) -> ResetPolicy:
        """The policy ``session_reset`` in config.yaml asks for."""
        return cls(
            mode=config["session_reset.mode"],
            idle_minutes=int(config["session_reset.idle_minutes"]),
            daily_hour=int(config["session_reset.daily_hour"]),
        )

    def due(self, last_activity: float, now: float, *, busy: bool = False) -> ResetCause | None:
        """Why a session last active at ``last_activity`` is reset at ``now``, or None."""
        if busy or self.mode == "none":
            return None
        if self.mode in ("idle", "both") and now - last_activity > self.idle_minutes * 60:
            return "idle"
        if self.mode in ("daily", "both") and last_activity < self.daily_boundary(now):
            return "daily"
        return None

    def daily_boundary(self, now: float) -> float:
        """The most recent ``daily_hour`` o'clock (local time) at or before ``now``."""
        moment = _dt.datetime.fromtimestamp(now).astimezone()
        boundary = moment.replace(hour=self.daily_hour, minute=0, second=0, microsecond=0)
        if boundary > moment:
            boundary -= _dt.timedelta(days=1)
        return boundary.timestamp()


class TurnsInFlight:
    """The sessions this gateway is answering right now (thread-safe): what "busy" means."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def begin(self, session_id: str) -> None:
        with self._lock:
            self._counts[session_id] = self._counts.get(session_id, 0) + 1

    def end(self, session_id: str) -> None:
        with self._lock:
            left = self._counts.get(session_id, 0) - 1
            if left > 0:
                self._counts[session_id] = left
            else:
                self._counts.pop(session_id, None)

    def busy(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._counts

    def count(self) -> int:
        with self._lock:
            return sum(self._counts.values())
