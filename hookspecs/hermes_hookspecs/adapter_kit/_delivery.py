"""After delivering: what to post for the gateway's reply, and the answers going out."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Coroutine
from typing import Any

from .._gateway import DeliveryRefused, GatewayReply, PlatformEvent


def is_stopping(error: DeliveryRefused) -> bool:
    """True when the gateway refused because it is stopping (stop receiving), False when one
    event was not stored (back off and try again)."""
    return bool(getattr(error, "stopping", False))


def store_down(error: DeliveryRefused) -> bool:
    """True when the store took no write at all (a full disk…): not the event's fault — keep
    trying it (with a pause), never skip it."""
    return bool(getattr(error, "store_down", False))


def answer_text(reply: GatewayReply, *, failure: str = "⚠ The agent could not answer: ") -> str:
    """What a chat adapter posts for ``reply``: its text; ``failure`` + the error when the
    model could not answer; nothing for a message the platform sent again (the gateway had
    stored it already, and a chat should not hear about it)."""
    if reply.duplicate:
        return ""
    if reply.text.strip():
        return reply.text
    return f"{failure}{reply.error}" if reply.error else ""


def unless_too_old(
    event: PlatformEvent, max_age: float | None, *, now: float | None = None
) -> PlatformEvent:
    """``event`` marked "store, do not answer" when it was written more than ``max_age``
    seconds ago (an adapter's ``catch_up_max_age``: after a long outage, very old messages are
    kept in the session but not answered); unchanged when either is unknown."""
    if max_age is None or event.sent_at is None:
        return event
    if (time.time() if now is None else now) - event.sent_at <= max_age:
        return event
    return dataclasses.replace(event, answer=False)


class AnswerTasks:
    """The answers an adapter is sending in the background (so receiving goes on meanwhile);
    :meth:`wait` at stop lets them finish."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, answer: Coroutine[Any, Any, None]) -> None:
        """Run ``answer`` on the running loop, kept until it ends."""
        task = asyncio.ensure_future(answer)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait(self) -> None:
        """Wait for every answer still going out (their failures are theirs to log)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def __len__(self) -> int:
        return len(self._tasks)
