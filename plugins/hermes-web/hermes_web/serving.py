"""Listening on 127.0.0.1 and running the app with uvicorn until interrupted."""

from __future__ import annotations

import socket
from collections.abc import Callable

from starlette.types import ASGIApp

from .settings import LOOPBACK


def listen(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1 only (``port`` 0: any free port). Raises ``OSError``
    with one line when the port cannot be had."""
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose protocol says TCP (an
    # accepted socket inherits it); with 0, every answer on a kept-alive connection waited
    # ~40 ms for the browser's delayed ACK (Nagle).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((LOOPBACK, port))
    except OSError as error:
        listener.close()
        raise OSError(f"cannot listen on {LOOPBACK}:{port}: {error.strerror or error}") from None
    listener.listen(64)
    return listener


def run(app: ASGIApp, listener: socket.socket, on_ready: Callable[[], None]) -> None:
    """Serve ``app`` on ``listener``; ``on_ready`` runs once the server accepts requests."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    startup = server.startup

    async def announced_startup(sockets: list[socket.socket] | None = None) -> None:
        await startup(sockets=sockets)
        on_ready()

    server.startup = announced_startup  # type: ignore[method-assign]
    server.run(sockets=[listener])
