"""``hermes acp`` over stdio: newline-delimited JSON-RPC 2.0 on stdin and stdout.

Standard output carries the protocol and nothing else: the protocol gets its own copy of the
descriptor, and descriptor 1 (with ``sys.stdout``) is pointed at standard error, so whatever a
library prints lands there. Logs go to standard error too.

Standard input is read by a thread and standard output written directly, so pipes (what an
editor gives), files and terminals all work.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from acp import Agent, run_agent

if TYPE_CHECKING:
    from .agent import HermesAgent
    from .runtime import Runtime

STDIN_LIMIT = 50 * 1024 * 1024
"""The longest JSON-RPC line read (an embedded file can be large)."""


def serve_stdio(agent: HermesAgent, runtime: Runtime) -> None:
    """Serve one editor on stdin/stdout until it closes stdin; then end what it wrote to."""
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(levelname)s: %(message)s"
    )
    try:
        asyncio.run(_serve(agent, sys.stdin.buffer, protocol_fd))
    except KeyboardInterrupt:
        pass
    finally:
        agent.stop_turns()
        runtime.wait_idle()
        try:
            agent.finish(runtime.store())
        finally:
            runtime.close()


class _ProtocolOut(asyncio.WriteTransport):
    """Writes each JSON-RPC frame to the protocol's descriptor at once, whole."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing:
            return
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError:
            self._closing = True  # the editor went away; the turn goes on, stored

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def can_write_eof(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


def _feed(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, stdin: BinaryIO) -> None:
    """Hand standard input's lines to the event loop until it ends."""
    try:
        while line := stdin.readline():
            loop.call_soon_threadsafe(reader.feed_data, line)
    except (OSError, ValueError):
        pass
    finally:
        loop.call_soon_threadsafe(reader.feed_eof)


async def _serve(agent: HermesAgent, stdin: BinaryIO, protocol_fd: int) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIN_LIMIT)
    threading.Thread(
        target=_feed, args=(loop, reader, stdin), name="hermes-acp-stdin", daemon=True
    ).start()
    protocol = asyncio.streams.FlowControlMixin(loop)
    writer = asyncio.StreamWriter(_ProtocolOut(protocol_fd), protocol, None, loop)
    await run_agent(cast(Agent, agent), writer, reader)
