"""``hermes gateway run``: the asyncio side of the gateway.

Adapters deliver events here. Each event is first recorded in the gateway inbox. An event with
a turn ahead of it (of its chat, or every worker thread taken) is recorded on an intake thread
of its own, outside its chat's turn lock, so recording (and the adapter's acknowledgement to
its platform) never waits for a model answering another message, and is told "stored" then.
An event with nothing ahead is recorded on its turn's worker thread right before its turn (one
thread hop for both), and told "stored" once its user turn is committed, which follows at once
(it carries the session id).

Events of one chat (one session key) are answered strictly in the order they arrived;
different chats are answered concurrently, each turn on a worker thread (the turn engine is
blocking) through ``asyncio.to_thread``. ``/stop`` jumps the queue and interrupts the chat's
turn in progress (interruption state is per key, so with ``group_sessions_per_user`` one
user's ``/stop`` never touches another's turn).

Starting: rows a previous run left in the inbox (it was killed after acknowledging them,
before their turn) are answered first, in order, for each platform that starts; their
answers go out through the adapter's ``send`` (an adapter that cannot send — an HTTP caller
long gone — keeps the answer in the session only). Each row is claimed first
(:mod:`.claims`): of several gateways on one store, one answers it. While running, the
gateway renews its claims and takes the rows a gateway that died meanwhile left.

Stopping (SIGINT/SIGTERM): new events are refused (nothing acknowledged, so the platform may
retry), the turns in flight and queued are finished, then the adapters are stopped.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_hookspecs import GatewayReply, PlatformEvent, ReceivingAdapter, UserFacingError
from hermes_hookspecs.adapter_kit import STATE_FOLDER, answer_text

from hermes_core.plugins import COMPONENT_DISTRIBUTIONS
from hermes_core.store.errors import StoreFull, StoreReadOnly, StoreUnavailable
from hermes_core.store.inbox import InboxEntry, Taken

from .claims import RENEW_SECONDS
from .commands import parse_command
from .delivery import DeliveryBridge, EventDelivery
from .inbox import event_from_json
from .worker import EventWorker, NotAdmitted, already_received

log = logging.getLogger("hermes.gateway")


@dataclass
class _Place:
    """An event's place in its chat's line: it may queue for the chat's lock only once the
    event before it holds the lock (or left the line). Writing to the inbox takes a varying
    time on a pool of threads, so without this a later message could take its turn first."""

    ahead: asyncio.Future[None] | None
    mine: asyncio.Future[None]

    async def wait_for_the_one_ahead(self) -> None:
        if self.ahead is not None:
            await self.ahead

    def leave(self) -> None:
        """The next event may queue now (idempotent)."""
        if not self.mine.done():
            self.mine.set_result(None)


@dataclass
class _Chat:
    """The per-key state: its queue (a fair lock taken in arrival order), its pending count,
    its interruption."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    pending: int = 0
    cancel: threading.Event | None = None
    last_in_line: asyncio.Future[None] | None = None

    def take_place(self) -> _Place:
        """The next place in this chat's line (called in arrival order, on the loop)."""
        place = _Place(self.last_in_line, asyncio.get_running_loop().create_future())
        self.last_in_line = place.mine
        return place


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
        self._intake: concurrent.futures.ThreadPoolExecutor | None = None
        self._turning = 0
        self.platforms: list[PlatformState] = []
        self._running: list[tuple[str, ReceivingAdapter]] = []
        self._configured: list[str] = []
        self._keeper: asyncio.Task[None] | None = None
        self._store_down = False

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
        # A turn ahead (of this chat, or every worker thread taken): "stored" is told once the
        # event is in the inbox, not after that turn.
        busy = chat.pending > 1 or self._turning >= self.workers
        place = chat.take_place()
        self._spawn(self._admit_and_answer(key, chat, event, delivery, busy, place))
        return delivery

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _intake_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        if self._intake is None:
            self._intake = concurrent.futures.ThreadPoolExecutor(
                max_workers=2, thread_name_prefix="hermes-gateway-inbox"
            )
        return self._intake

    async def _admit_and_answer(
        self,
        key: str,
        chat: _Chat,
        event: PlatformEvent,
        delivery: EventDelivery,
        busy: bool,
        place: _Place,
    ) -> None:
        try:
            await self._admit_then_answer(key, chat, event, delivery, busy, place)
        finally:
            place.leave()

    async def _admit_then_answer(
        self,
        key: str,
        chat: _Chat,
        event: PlatformEvent,
        delivery: EventDelivery,
        busy: bool,
        place: _Place,
    ) -> None:
        if not busy:
            # Nothing ahead: recorded in the inbox on the turn's own worker thread, right
            # before its turn (one thread hop for both; acknowledged once the user turn is
            # committed, as before).
            await self._answer(key, chat, event, delivery, None, place)
            return
        loop = asyncio.get_running_loop()
        admit = functools.partial(self.worker.admit, event, key, busy=busy)
        try:
            intake = await loop.run_in_executor(self._intake_pool(), admit)
        except Exception as error:
            self._not_admitted(key, error, delivery)
            self._leave(key, chat)
            return
        self._admitted()
        admission = intake.admission
        if admission.entry is None:
            # A platform re-sent a message it had no acknowledgement for: recorded already.
            log.info("%s: message %s was already received; not again", key, event.message_id)
            delivery.finish(already_received(admission.stored_in))
            self._leave(key, chat)
            return
        if busy:
            delivery.stored_as(intake.current_session)
        await self._answer(key, chat, event, delivery, admission.entry, place)

    async def _answer(
        self,
        key: str,
        chat: _Chat,
        event: PlatformEvent,
        delivery: EventDelivery,
        entry: InboxEntry | None,
        place: _Place,
    ) -> None:
        """The event's turn, once the one ahead of it holds the chat's lock; ``entry`` None:
        the event is recorded in the inbox first, on the turn's thread."""
        try:
            await place.wait_for_the_one_ahead()
            async with chat.lock:
                place.leave()
                cancel = threading.Event()
                chat.cancel = cancel
                self._turning += 1
                try:
                    bridge = DeliveryBridge(delivery)
                    if entry is None:
                        turn = functools.partial(
                            self.worker.admit_and_handle, event, key, bridge, cancel
                        )
                    else:
                        turn = functools.partial(
                            self.worker.handle, event, key, bridge, cancel, entry
                        )
                    try:
                        await asyncio.to_thread(turn)
                    except NotAdmitted as refused:
                        self._not_admitted(key, refused.error, delivery)
                    else:
                        if entry is None:
                            self._admitted()
                finally:
                    self._turning -= 1
                    chat.cancel = None
        finally:
            place.leave()
            self._leave(key, chat)

    def _not_admitted(self, key: str, error: Exception, delivery: EventDelivery) -> None:
        """The store refused to record ``key``'s event: it is not acknowledged (its platform
        sends it again). A store that takes no writes at all (a full disk) is one log line
        while it lasts, every message meanwhile refused the same way."""
        line = " ".join(str(error).split()) or type(error).__name__
        down = isinstance(error, StoreFull | StoreReadOnly | StoreUnavailable)
        if not down:
            log.error("%s: %s", key, line)
        elif not self._store_down:
            log.error("the gateway inbox takes no writes (%s): messages are not "
                      "acknowledged until it does; their platforms send them again", line)  # fmt: skip
        self._store_down = self._store_down or down
        delivery.not_stored(f"the event could not be stored: {line}", store_down=down)

    def _admitted(self) -> None:
        """An event was recorded: a store that took no writes takes them again."""
        if self._store_down:
            self._store_down = False
            log.info("the gateway inbox takes writes again")

    def _leave(self, key: str, chat: _Chat) -> None:
        chat.pending -= 1
        if chat.pending == 0 and self._chats.get(key) is chat:
            del self._chats[key]

    # ------------------------------------------------------------------ after a restart

    async def _take(self, platforms: list[str]) -> Taken:
        """Claim the inbox rows of ``platforms`` nobody holds, oldest first (none when the
        inbox cannot be read: they stay for the next try)."""
        loop = asyncio.get_running_loop()
        wanted = [name for name in platforms if name]
        if not wanted:
            return Taken([])
        try:
            return await loop.run_in_executor(self._intake_pool(), self.worker.take, wanted)
        except Exception as error:
            log.error("the gateway inbox could not be read: %s", " ".join(str(error).split()))
            return Taken([])

    async def _keep_claims(self, held_until: float | None) -> None:
        """Renew this gateway's claims on its inbox rows while it runs, and answer the rows
        nobody holds any more (a gateway on the same store died) — at the latest when the
        first claim seen held runs out."""
        loop = asyncio.get_running_loop()
        while not self._closing:
            wait = RENEW_SECONDS
            if held_until is not None:
                wait = min(wait, max(held_until - time.time(), 0.0) + 0.05)
            await asyncio.sleep(wait)
            if self._closing:
                return
            try:
                await loop.run_in_executor(self._intake_pool(), self.worker.renew)
            except Exception as error:
                log.error("the gateway inbox claims could not be renewed: %s",
                          " ".join(str(error).split()))  # fmt: skip
            taken = await self._take(self.running_platforms)
            held_until = taken.held_until
            if self._closing:
                await self._release(taken.entries)
                return
            for name, adapter in self._running:
                self._replay(name, adapter, [e for e in taken.entries if e.platform == name])

    def _replay(self, name: str, adapter: ReceivingAdapter, entries: list[InboxEntry]) -> None:
        """Queue the turns of ``entries`` (the rows of platform ``name``), before anything the
        adapter delivers from now on; each answer is sent through ``adapter.send``."""
        for entry in entries:
            try:
                event = event_from_json(entry.event)
            except (ValueError, TypeError, AttributeError) as error:
                log.error("%s: inbox row %d is unreadable (%s); dropped", entry.session_key,
                          entry.id, " ".join(str(error).split()))  # fmt: skip
                self._spawn(asyncio.to_thread(self.worker.forget, entry))
                continue
            log.info("%s: answering a message received before the restart", entry.session_key)
            chat = self._chats.setdefault(entry.session_key, _Chat())
            chat.pending += 1
            delivery = EventDelivery(asyncio.get_running_loop())
            delivery.stored_as(None)  # acknowledged by the previous run
            place = chat.take_place()
            self._spawn(self._answer(entry.session_key, chat, event, delivery, entry, place))
            self._spawn(self._send_replayed(name, adapter, event, delivery))

    async def _send_replayed(
        self, name: str, adapter: ReceivingAdapter, event: PlatformEvent, delivery: EventDelivery
    ) -> None:
        reply = await delivery.reply()
        text = answer_text(reply)
        if not text:
            return
        try:
            await asyncio.to_thread(adapter.send, event.chat_id, text, event.thread_id)
        except UserFacingError as error:
            log.info("platform %s: the answer is stored in %s, not sent (%s)", name,
                     reply.session_id, " ".join(str(error).split()))  # fmt: skip
        except Exception as error:
            log.error("platform %s: sending to chat %s failed: %s", name, event.chat_id,
                      " ".join(str(error).split()) or type(error).__name__)  # fmt: skip

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
        self._configured = list(settings)
        taken = await self._take(self._configured)
        left = taken.entries
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
            # Nothing awaited from here to the queued turns: they come before its new events.
            self._replay(name, adapter, [entry for entry in left if entry.platform == name])
            self._running.append((name, adapter))
            self.platforms.append(PlatformState(name, True))
            log.info("platform %s is running", name)
        waiting = sorted({entry.platform for entry in left} - set(self.running_platforms))
        for name in waiting:
            count = sum(1 for entry in left if entry.platform == name)
            log.warning("platform %s: %d message(s) acknowledged before the restart wait in the "
                        "gateway inbox until it runs", name, count)  # fmt: skip
        if waiting:
            await self._release([entry for entry in left if entry.platform in waiting])
        self._keeper = asyncio.get_running_loop().create_task(self._keep_claims(taken.held_until))

    async def _release(self, entries: list[InboxEntry]) -> None:
        """Let another gateway (one that runs their platform) take ``entries``."""
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._intake_pool(), self.worker.release, entries)
        except Exception as error:
            log.error("the gateway inbox claims could not be released: %s",
                      " ".join(str(error).split()))  # fmt: skip

    def _problem(self, name: str, problem: str) -> None:
        self.platforms.append(PlatformState(name, False, problem))
        log.error("platform %s: %s", name, problem)

    @property
    def running_platforms(self) -> list[str]:
        return [name for name, _ in self._running]

    def refuse_new(self) -> None:
        """Refuse every event delivered from now on (the gateway is stopping)."""
        self._closing = True

    async def stop(self) -> None:
        """Refuse new events, finish every turn delivered so far, then stop the adapters."""
        self.refuse_new()
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.gather(self._keeper, return_exceptions=True)
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
        if self._intake is not None:
            self._intake.shutdown(wait=True)
        self.worker.close()
