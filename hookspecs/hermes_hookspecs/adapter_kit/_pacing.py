"""Waiting after a failure: a growing pause, or exactly what the platform asked for."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ._text import one_line

T = TypeVar("T")


class Backoff:
    """The pause before the next attempt after ``failures`` failures in a row: ``first``
    seconds, times ``factor`` after each failure, at most ``ceiling``; a platform's own
    ``retry_after`` (flood control) is waited in full instead when it is longer."""

    def __init__(self, first: float = 1.0, factor: float = 2.0, ceiling: float = 30.0) -> None:
        self.first, self.factor, self.ceiling = first, factor, ceiling
        self.failures = 0

    def next_pause(self, retry_after: float | None = None) -> float:
        """Count one more failure; the seconds to wait before trying again."""
        pause = min(self.ceiling, self.first * self.factor**self.failures)
        self.failures += 1
        if retry_after is not None and retry_after > pause:
            return retry_after
        return pause

    def reset(self) -> None:
        """A success: the next failure starts from ``first`` again."""
        self.failures = 0

    async def wait(
        self, retry_after: float | None = None, *, interrupt: asyncio.Event | None = None
    ) -> float:
        """Sleep the next pause (cut short when ``interrupt`` is set); the pause."""
        pause = self.next_pause(retry_after)
        await sleep_unless(pause, interrupt)
        return pause


async def sleep_unless(seconds: float, interrupt: asyncio.Event | None) -> None:
    """Sleep ``seconds``, or less when ``interrupt`` is set meanwhile (the adapter stops)."""
    if interrupt is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(interrupt.wait(), seconds)


def as_seconds(value: object) -> float | None:
    """A platform's ``retry_after`` as seconds (a number, a numeric string or a timedelta)."""
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return float(value)
    return None


async def retry_transient(
    call: Callable[[], Awaitable[T]],
    *,
    transient: Callable[[BaseException], bool],
    retry_after: Callable[[BaseException], float | None] = lambda error: None,
    attempts: int = 4,
    backoff: Backoff | None = None,
    log: logging.Logger | None = None,
    what: str = "the request",
) -> T:
    """``await call()``, again after a pause when it fails with an error ``transient`` accepts
    (flood control, a time-out), up to ``attempts`` calls in all; the last error is raised."""
    pacing = backoff or Backoff(first=0.5)
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except Exception as error:
            if attempt == attempts or not transient(error):
                raise
            pause = await pacing.wait(retry_after(error))
            if log is not None:
                log.warning("%s failed (%s); tried again after %.1fs", what, one_line(error), pause)
    raise AssertionError("unreachable")  # pragma: no cover
