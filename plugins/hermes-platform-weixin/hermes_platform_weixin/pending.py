"""A message in flight between the request that brought it and the task answering it: the
platform waits five seconds for the request's answer, so the two agree on who replies."""

from __future__ import annotations

import asyncio


class Pending:
    """The answer's text once known, and whether the request took it as a passive reply
    (True) or answered ``success`` so the answer goes through the customer-service API."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.text: asyncio.Future[str] = loop.create_future()
        self.passive: asyncio.Future[bool] = loop.create_future()

    def decide(self, passive: bool) -> None:
        """Settle who replies (the first decision stands)."""
        if not self.passive.done():
            self.passive.set_result(passive)


def seconds_left(until: float) -> float:
    """Seconds from now (the running loop's clock) to ``until``, never below 0."""
    return max(0.0, until - asyncio.get_running_loop().time())
