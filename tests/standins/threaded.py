"""The one threaded base of the test stand-ins: a server coroutine on its own event loop and
thread, started and stopped from the test's thread (and a ``with`` block).

A stand-in subclasses :class:`ThreadedStandIn` and writes ``_serve`` (listen on 127.0.0.1,
return once listening) and, when it holds more than its listener, ``_close``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Self

from aiohttp import web


class ThreadedStandIn:
    """Runs ``_serve`` on a private loop in a daemon thread; :meth:`stop` undoes it."""

    thread_name = "standin"

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._serving: asyncio.Task[None] | None = None

    async def _serve(self) -> None:
        """Start listening (on 127.0.0.1 only)."""
        raise NotImplementedError

    async def _close(self) -> None:
        """Stop listening; close what ``_serve`` opened."""
        if self._runner is not None:
            await self._runner.cleanup()

    async def _serve_app(self, app: web.Application) -> None:
        """For an aiohttp stand-in: serve ``app`` on a free port of 127.0.0.1."""
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self._port = self._runner.addresses[0][1]

    def start(self) -> Self:
        """Serve on a free port of 127.0.0.1 (returns once listening)."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        started = threading.Event()
        failure: list[BaseException] = []

        async def serve() -> None:
            try:
                await self._serve()
            except BaseException as error:
                failure.append(error)
            finally:
                started.set()

        def run() -> None:
            asyncio.set_event_loop(loop)
            self._serving = loop.create_task(serve())
            loop.run_forever()

        self._thread = threading.Thread(target=run, name=self.thread_name, daemon=True)
        self._thread.start()
        if not started.wait(10) or failure:
            raise RuntimeError(f"the {self.thread_name} stand-in did not start: {failure}")
        return self

    def stop(self) -> None:
        """Stop serving and join the server thread."""
        loop = self._loop
        if loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        loop.close()
        self._loop = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
