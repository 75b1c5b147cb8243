"""Listening on 127.0.0.1 and running the app with uvicorn until interrupted."""

from __future__ import annotations

import socket
from collections.abc import Callable

from starlette.types import ASGIApp

from hermes_core.loopback import listen_on_loopback


def listen(port: int) -> socket.socket:
    """A socket bound to 127.0.0.1 only (``port`` 0: any free port). Raises ``OSError``
    with one line when the port cannot be had."""
    return listen_on_loopback(port)


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
