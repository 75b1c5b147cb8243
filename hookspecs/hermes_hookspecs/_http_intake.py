"""What every HTTP adapter of the gateway (webhook, api-server) does the same way when taking a
request in: reading its body within a size and a time limit, telling a client to come back
while the gateway stops, and how long a stopping server waits for its connections.

Duck-typed on aiohttp's ``web.Request`` (``content_length``, ``content.readany()``, and
``content.is_eof()`` / ``read_nowait()`` when the whole body is already in), so this package
needs no HTTP library.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

BODY_TIMEOUT_SECONDS = 30.0
"""A request body must arrive whole within this long (a client keeping it half-sent is
answered 408, and never holds a stopping gateway)."""
RETRY_AFTER_SECONDS = 5
"""``Retry-After`` of the 503 a request gets while the gateway stops."""
SHUTDOWN_GRACE_SECONDS = 2.0
"""Once every turn is answered, how long a stopping adapter waits for its connections to
finish (a reply being written, a client still sending a body) before closing them."""


class BodyRefused(Exception):
    """A request body the adapter will not read: ``status`` (413 too large, 408 too slow)
    and one line saying why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


async def read_body(request: Any, limit: int, timeout: float = BODY_TIMEOUT_SECONDS) -> bytes:
    """The whole body of ``request``, at most ``limit`` bytes, within ``timeout`` seconds.

    A declared ``Content-Length`` over the limit is refused before anything is read; a body
    that grows past it while being read is refused as soon as it does; one that does not
    arrive in time is refused with 408 (:class:`BodyRefused`)."""
    declared = request.content_length
    if declared is not None and declared > limit:
        raise BodyRefused(413, f"body of {declared} bytes is over the {limit}-byte limit")
    pieces: list[bytes] = []
    size = 0
    deadline = time.monotonic() + timeout
    content = request.content
    arrived = getattr(content, "is_eof", None)
    while True:
        if arrived is not None and arrived():
            # All of it is here (a small request usually is): taken without a timer.
            piece = content.read_nowait()
        else:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BodyRefused(408, f"the body did not arrive within {timeout:g} s")
            try:
                piece = await asyncio.wait_for(content.readany(), left)
            except TimeoutError:
                raise BodyRefused(408, f"the body did not arrive within {timeout:g} s") from None
        if not piece:
            return b"".join(pieces)
        size += len(piece)
        if size > limit:
            raise BodyRefused(413, f"body over the {limit}-byte limit")
        pieces.append(piece)
