"""A listening socket on 127.0.0.1 for the local servers plugins run (``hermes mcp --http``,
``hermes serve``): never another interface, and one line when the port cannot be had."""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def listen_on_loopback(port: int, *, backlog: int = 64) -> socket.socket:
    """A socket bound to 127.0.0.1 only and listening (``port`` 0: any free port). Raises
    ``OSError`` with one line when the port cannot be had."""
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose protocol says TCP (an
    # accepted socket inherits it); with 0, every answer on a kept-alive connection waited
    # ~40 ms for the client's delayed ACK (Nagle).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((LOOPBACK, port))
    except OSError as error:
        listener.close()
        raise OSError(f"cannot listen on {LOOPBACK}:{port}: {error.strerror or error}") from None
    listener.listen(backlog)
    return listener
