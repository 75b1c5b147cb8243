"""An adapter's event loop seen from other threads, and an HTTP endpoint on it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from .._types import UserFacingError

if TYPE_CHECKING:
    from aiohttp import web

T = TypeVar("T")


class LoopBridge:
    """Runs an adapter's coroutine on the loop it receives on, for a caller on another thread
    (``send`` and ``create_thread`` are blocking: the handoff watcher and the CLI call them
    from their threads)."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        self.loop: asyncio.AbstractEventLoop | None = None

    def bind(self) -> None:
        """From ``start``: the running loop is the adapter's."""
        self.loop = asyncio.get_running_loop()

    def unbind(self) -> None:
        """From ``stop``."""
        self.loop = None

    @property
    def running(self) -> bool:
        return self.loop is not None and self.loop.is_running()

    def call(self, make: Callable[[], Awaitable[T]], timeout: float = 60.0) -> T:
        """``await make()`` on the adapter's loop and return its result (blocking). Refuses
        in one line when the adapter is not running, and when called on that loop itself
        (it would wait for itself)."""
        loop = self.loop
        if loop is None or not loop.is_running():
            raise UserFacingError(f"the {self.platform} platform is not running (start it first)")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError(f"{self.platform}: send/create_thread block; call them off the loop")

        async def on_loop() -> T:
            return await make()

        return asyncio.run_coroutine_threadsafe(on_loop(), loop).result(timeout)


@dataclass
class HttpServer:
    """A started aiohttp endpoint: where it listens, and how to stop it."""

    runner: web.AppRunner
    host: str
    port: int

    async def stop(self) -> None:
        """Stop listening and close the open connections."""
        await self.runner.cleanup()


async def start_http_server(app: web.Application, host: str, port: int) -> HttpServer:
    """Serve ``app`` on ``host:port`` (0: a free port) without aiohttp's access log or signal
    handling; one line (``cannot listen on …``) when the address is taken or not allowed."""
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as error:
        await runner.cleanup()
        raise UserFacingError(
            f"cannot listen on {host}:{port} ({error.strerror or error})"
        ) from None
    bound_host, bound_port = runner.addresses[0][:2]
    return HttpServer(runner, str(bound_host), int(bound_port))
