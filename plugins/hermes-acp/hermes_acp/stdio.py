"""``hermes acp`` over stdio: newline-delimited JSON-RPC 2.0 on stdin and stdout.

Standard output carries the protocol and nothing else: the protocol gets its own copy of the
descriptor, and descriptor 1 (with ``sys.stdout``) is pointed at standard error, so whatever a
library prints lands there. Logs go to standard error too.

Standard input is read by a thread and standard output written directly, so pipes (what an
editor gives), files and terminals all work. When standard input ends, the requests already
read are answered first (a prompt runs to its end), then the process exits. SIGTERM and
Ctrl-C stop the turns in flight (what was said is kept) and end the sessions as well.

Log lines are one line each: a traceback is reduced to its last line unless ``HERMES_DEBUG``
is set.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, cast

from acp import Agent, run_agent
from acp.connection import StreamDirection, StreamEvent

if TYPE_CHECKING:
    from .agent import HermesAgent
    from .runtime import Runtime

STDIN_LIMIT = 50 * 1024 * 1024
"""The longest JSON-RPC line read (an embedded file can be large)."""
ANSWER_POLL_SECONDS = 0.02
READ_SIZE = 65536


def serve_stdio(agent: HermesAgent, runtime: Runtime) -> None:
    """Serve one editor on stdin/stdout until it closes stdin; then end what it wrote to."""
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))
    if not os.environ.get("HERMES_DEBUG"):
        handler.addFilter(_one_line)
    logging.basicConfig(handlers=[handler], level=logging.WARNING)
    signal.signal(signal.SIGTERM, _interrupt)  # an editor stopping the agent: end as on Ctrl-C
    try:
        asyncio.run(_serve(agent, sys.stdin.fileno(), protocol_fd))
    except KeyboardInterrupt:
        pass
    finally:
        agent.stop_turns()
        runtime.wait_idle()
        try:
            agent.finish(runtime.store())
        finally:
            runtime.close()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


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


def _one_line(record: logging.LogRecord) -> bool:
    """Fold an exception into its log line (no traceback)."""
    if record.exc_info and record.exc_info[1] is not None:
        error = record.exc_info[1]
        record.msg = f"{record.getMessage()}: {type(error).__name__}: {error}"
        record.args = None
        record.exc_info = None
        record.exc_text = None
    return True


class _Lines(asyncio.StreamReader):
    """Standard input, its complete lines counted as they are fed and as the connection
    takes them."""

    def __init__(self) -> None:
        super().__init__(limit=STDIN_LIMIT)
        self.fed = 0
        self.taken = 0
        self.ended = asyncio.Event()
        """Standard input ended (the end is held back until every request is answered)."""

    def feed_chunk(self, chunk: bytes) -> None:
        self.fed += chunk.count(b"\n")
        self.feed_data(chunk)

    async def readuntil(self, separator: Any = b"\n") -> bytes:
        data = await super().readuntil(separator)
        self.taken += 1
        return data


class _Pending:
    """The ids of the requests read and not yet answered (a connection observer)."""

    def __init__(self) -> None:
        self.ids: set[object] = set()

    def __call__(self, event: StreamEvent) -> None:
        message = event.message
        if "id" not in message:
            return
        if event.direction is StreamDirection.INCOMING and "method" in message:
            self.ids.add(message["id"])
        elif event.direction is StreamDirection.OUTGOING and "method" not in message:
            self.ids.discard(message["id"])


def _feed(loop: asyncio.AbstractEventLoop, reader: _Lines, stdin_fd: int) -> None:
    """Hand what arrives on standard input to the event loop until it ends. The descriptor is
    read directly (never through ``sys.stdin``'s buffer, whose lock a thread blocked in it
    would hold while the interpreter exits)."""
    try:
        while chunk := os.read(stdin_fd, READ_SIZE):
            loop.call_soon_threadsafe(reader.feed_chunk, chunk)
    except OSError:
        pass
    finally:
        loop.call_soon_threadsafe(reader.ended.set)


async def _end_when_answered(reader: _Lines, pending: _Pending) -> None:
    """Once standard input ended: let the connection read every line and answer every
    request, then let it see the end."""
    await reader.ended.wait()
    while reader.taken < reader.fed or pending.ids:
        await asyncio.sleep(ANSWER_POLL_SECONDS)
    reader.feed_eof()


async def _serve(agent: HermesAgent, stdin_fd: int, protocol_fd: int) -> None:
    loop = asyncio.get_running_loop()
    reader = _Lines()
    pending = _Pending()
    threading.Thread(
        target=_feed, args=(loop, reader, stdin_fd), name="hermes-acp-stdin", daemon=True
    ).start()
    ending = asyncio.ensure_future(_end_when_answered(reader, pending))
    protocol = asyncio.streams.FlowControlMixin(loop)
    writer = asyncio.StreamWriter(_ProtocolOut(protocol_fd), protocol, None, loop)
    try:
        await run_agent(cast(Agent, agent), writer, reader, observers=[pending])
    finally:
        ending.cancel()
