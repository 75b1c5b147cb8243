"""``hermes gateway run``: the asyncio side of the gateway.

Adapters deliver events here. Events of one chat (one session key) are answered strictly in
the order they arrived; different chats are answered concurrently, each turn on a worker
thread (the turn engine is blocking) through ``asyncio.to_thread``. ``/stop`` jumps the queue
and interrupts the chat's turn in progress (interruption state is per key, so with
``group_sessions_per_user`` one user's ``/stop`` never touches another's turn).

Stopping (SIGINT/SIGTERM): new events are refused (nothing acknowledged, so the platform may
retry), the turns in flight and queued are finished, then the adapters are stopped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_hookspecs import GatewayReply, PlatformEvent, ReceivingAdapter
from hermes_hookspecs.adapter_kit import STATE_FOLDER

from hermes_core.plugins import COMPONENT_DISTRIBUTIONS

from .commands import parse_command
from .delivery import DeliveryBridge, EventDelivery
from .worker import EventWorker

log = logging.getLogger("hermes.gateway")


@dataclass
class _Chat:
    """The per-key state: its queue (a fair lock), its pending count, its interruption."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    pending: int = 0
    cancel: threading.Event | None = None


@dataclass
class PlatformState:
    """How one configured platform fared at start-up."""

    name: str
    running: bool
    problem: str | None = None


def unknown_platform(name: str, adapters: Mapping[str, object]) -> str:
    """Why ``name`` cannot run when no installed plugin provides it: the distribution to
    install when it is one of ours, else the adapters that are installed."""
    hint = COMPONENT_DISTRIBUTIONS.get(("platform", name))
    if hint:
        return f"unknown platform (pip install {hint})"
    known = ", ".join(sorted(adapters)) or "none installed"
    return f"unknown platform (installed adapters: {known})"


class Gateway:
    """Routes delivered events to the worker, one chat at a time, many chats at once."""

    def __init__(self, worker: EventWorker, *, workers: int = 8) -> None:
        self.worker = worker
        self.workers = workers
        self._chats: dict[str, _Chat] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.platforms: list[PlatformState] = []
        self._running: list[tuple[str, ReceivingAdapter]] = []

    # ------------------------------------------------------------------ delivering

    def deliver(self, event: PlatformEvent) -> EventDelivery:
        """Take one event (called by adapters on the event loop)."""
        loop = asyncio.get_running_loop()
        delivery = EventDelivery(loop)
        if self._closing:
            delivery.refuse("the gateway is stopping; send it again once it is back")
            return delivery
        key = self.worker.rules.key_for(event)
        chat = self._chats.setdefault(key, _Chat())
        command = parse_command(event.text)
        if command is not None and command.name == "stop" and chat.cancel is not None:
            chat.cancel.set()
            delivery.finish(
                GatewayReply(text="Stopping the answer in progress.", session_id=None, command=True)
            )
            return delivery
        chat.pending += 1
        task = loop.create_task(self._answer(key, chat, event, delivery))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return delivery

    async def _answer(
        self, key: str, chat: _Chat, event: PlatformEvent, delivery: EventDelivery
    ) -> None:
        try:
            async with chat.lock:
                cancel = threading.Event()
                chat.cancel = cancel
                try:
                    await asyncio.to_thread(
                        self.worker.handle, event, key, DeliveryBridge(delivery), cancel
                    )
                finally:
                    chat.cancel = None
        finally:
            chat.pending -= 1
            if chat.pending == 0 and self._chats.get(key) is chat:
                del self._chats[key]

    @property
    def turns_in_flight(self) -> int:
        """Events delivered and not answered yet."""
        return len(self._tasks)

    # ------------------------------------------------------------------ running

    async def start(
        self,
        adapters: Mapping[str, object],
        settings: Mapping[str, Mapping[str, Any]],
    ) -> None:
        """Start each configured platform; a platform that is unknown, cannot receive or fails
        to start is logged (one line) and the others run."""
        self._loop = asyncio.get_running_loop()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.workers, thread_name_prefix="hermes-gateway"
        )
        self._loop.set_default_executor(self._pool)
        from hermes_core.store.autotitle import defer_titles_while

        # Automatic titles wait for a pause between turns, so they never slow one down.
        defer_titles_while(lambda: bool(self._tasks))
        for name, options in settings.items():
            adapter = adapters.get(name)
            if adapter is None:
                self._problem(name, unknown_platform(name, adapters))
                continue
            if not isinstance(adapter, ReceivingAdapter):
                self._problem(name, "its adapter cannot receive (no start/stop)")
                continue
            # The adapter's own folder, for its cursors between runs (catch-up after a restart).
            folder = self.worker.home / "gateway" / "platforms" / name
            options = {STATE_FOLDER: str(folder), **options}
            try:
                await adapter.start(options, self.deliver)
            except Exception as error:
                self._problem(name, f"failed to start: {' '.join(str(error).split())}")
                continue
            self._running.append((name, adapter))
            self.platforms.append(PlatformState(name, True))
            log.info("platform %s is running", name)

    def _problem(self, name: str, problem: str) -> None:
        self.platforms.append(PlatformState(name, False, problem))
        log.error("platform %s: %s", name, problem)

    @property
    def running_platforms(self) -> list[str]:
        return [name for name, _ in self._running]

    async def stop(self) -> None:
        """Refuse new events, finish every turn delivered so far, then stop the adapters."""
        self._closing = True
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        from hermes_core.store.autotitle import defer_titles_while

        defer_titles_while(None)
        for name, adapter in reversed(self._running):
            try:
                await adapter.stop()
            except Exception as error:
                log.error("platform %s: failed to stop cleanly: %s", name, error)
        self._running.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self.worker.close()
