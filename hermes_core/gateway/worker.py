"""Answering one event, on a worker thread: routing, the reset policy, gateway commands, and the
turn engine (which stores the user turn, calls the model and stores the answer).

Each worker thread has its own store connection, router and turn engine (a ``SessionStore`` is
meant for one thread). The gateway writes no message itself: every user turn and answer goes
through :meth:`TurnEngine.run_turn`. The moment the user turn is committed reaches the event
through the turn listener. Before its turn, every event is recorded in the gateway inbox
(:meth:`EventWorker.admit`, on the runner's intake thread, outside the chat's turn lock): the
adapter may acknowledge it from then on. The turn removes the inbox row once the user turn is
committed. The platform's message id (when the event has one; else one made of the inbox
row's id) is stored on the user turn itself, so a re-sent message is acknowledged without
being stored twice, and answered with a reply marked ``duplicate`` (the chat adapters post
nothing for it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import GatewayReply, Message, PlatformEvent, Session

from hermes_core.agent import TurnEngine, TurnListener
from hermes_core.store import SessionEvents, SessionStore, StoreError
from hermes_core.store.inbox import Admission, InboxEntry, Taken
from hermes_core.store.protocol import Store
from hermes_core.store.routed_sessions import RouteOrigin

from .claims import Claimant, holder_alive
from .commands import ChatCommand, parse_command
from .inbox import event_json
from .policy import ResetPolicy, TurnsInFlight
from .routing import Router, RoutingRules

if TYPE_CHECKING:
    from hermes_hookspecs import ModelProvider, ModelSettings

    from hermes_core.plugins import PluginHost

    from .delivery import DeliveryBridge
    from .mirror import SessionsMirror

log = logging.getLogger("hermes.gateway")


class TimedStore(SessionStore):
    """The SQLite store of a worker thread, measuring its writes for the debug timing line."""

    def __init__(
        self,
        path: Path,
        *,
        events: SessionEvents | None = None,
        write_lock: threading.Lock | None = None,
    ) -> None:
        super().__init__(path, events=events, write_lock=write_lock)
        self.write_seconds = 0.0
        """Time spent writing messages and usage (the store's share of a turn, for the
        debug timing line); ``write_cpu_seconds`` the CPU time of it on this thread."""
        self.write_cpu_seconds = 0.0

    def append_messages(
        self,
        session_id: str,
        messages: Iterable[Message],
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
    ) -> range:
        batch = list(messages)
        started, cpu = time.perf_counter(), time.thread_time()
        ids = super().append_messages(
            session_id, batch, input_tokens=input_tokens, output_tokens=output_tokens
        )
        self.write_seconds += time.perf_counter() - started
        self.write_cpu_seconds += time.thread_time() - cpu
        return ids

    def __enter__(self) -> TimedStore:
        return self

    def record_usage(self, session_id: str, **usage: Any) -> None:
        started, cpu = time.perf_counter(), time.thread_time()
        super().record_usage(session_id, **usage)
        self.write_seconds += time.perf_counter() - started
        self.write_cpu_seconds += time.thread_time() - cpu


@dataclass
class _ThreadContext:
    store: Store
    router: Router
    engine: TurnEngine

    @property
    def write_timing(self) -> TimedStore | None:
        """The SQLite store that measures its writes (other backends are not measured)."""
        return self.store if isinstance(self.store, TimedStore) else None


class _BridgeListener(TurnListener):
    def __init__(self, bridge: DeliveryBridge, taken: Callable[[], None]) -> None:
        self._bridge = bridge
        self._taken = taken

    def on_user_turn(self, session_id: str) -> None:
        self._bridge.stored(session_id)
        self._taken()

    def on_text(self, delta: str) -> None:
        self._bridge.text(delta)


def event_text(event: PlatformEvent) -> str:
    """What the agent reads for an event: its text, then one line per attachment (a
    description and the local path; the bytes are never stored, SPEC S7)."""
    lines = [event.text] if event.text else []
    for attachment in event.attachments:
        where = f" ({attachment.path})" if attachment.path else ""
        lines.append(f"[attachment: {attachment.description}{where}]")
    return "\n".join(lines)


def already_received(session_id: str | None) -> GatewayReply:
    """The reply to a message a platform sent again (marked ``duplicate``: chat adapters
    drop it, an HTTP caller may be told), ``session_id`` the session that holds it."""
    return GatewayReply(
        text="This message was already received.",
        session_id=session_id,
        command=True,
        duplicate=True,
    )


class NotAdmitted(Exception):
    """The store refused to record an event in the gateway inbox; ``error`` says why."""

    def __init__(self, error: Exception) -> None:
        super().__init__(_one_line(error))
        self.error = error


@dataclass(frozen=True, slots=True)
class Intake:
    """An event recorded in the inbox (or found there, or stored, before)."""

    admission: Admission
    current_session: str | None
    """The chat's session when the event was recorded (read only for a busy chat)."""


class EventWorker:
    """Answers events on worker threads; shared by all of them."""

    def __init__(
        self,
        home: Path,
        host: PluginHost,
        provider: ModelProvider,
        settings: ModelSettings,
        *,
        rules: RoutingRules,
        policy: ResetPolicy,
        mirror: SessionsMirror | None,
        clock: Callable[[], float] = time.time,
        system_prompt: str | None = None,
        store_url: str | None = None,
    ) -> None:
        self.home = home
        self.store_url = store_url
        """``store.url`` (None: the home's ``state.db``); any backend with the routing facet."""
        self.host = host
        self.provider = provider
        self.settings = settings
        self.rules = rules
        self.policy = policy
        self.mirror = mirror
        self.clock = clock
        self.system_prompt = system_prompt
        self.in_flight = TurnsInFlight()
        self._local = threading.local()
        self._opened: list[Store] = []
        self._opened_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.claimant = Claimant()
        """This process as the holder of the inbox rows it records and takes."""

    def _context(self) -> _ThreadContext:
        context: _ThreadContext | None = getattr(self._local, "context", None)
        if context is None:
            store = self.open_store()
            with self._opened_lock:
                self._opened.append(store)
            router = Router(store, mirror=self.mirror, clock=self.clock)
            engine = TurnEngine(
                store,
                self.provider,
                self.settings,
                system_prompt=self.system_prompt,
                clock=self.clock,
            )
            context = _ThreadContext(store, router, engine)
            self._local.context = context
        return context

    def open_store(self) -> Store:
        """A store for the calling thread (a worker's, the handoff watcher's): a measuring
        SQLite store, or the configured backend's; the caller closes it."""
        from hermes_core.store import STATE_DB_NAME
        from hermes_core.store.backends import SQLITE_SCHEME, open_url, sqlite_path, url_scheme

        url = self.store_url
        if url is None or url_scheme(url) == SQLITE_SCHEME:
            path = self.home / STATE_DB_NAME if url is None else sqlite_path(url)
            return TimedStore(path, events=self.host, write_lock=self._write_lock)
        return open_url(url, events=self.host, host=self.host)

    def close(self) -> None:
        """Close every worker thread's store (after the threads are done)."""
        with self._opened_lock:
            for store in self._opened:
                store.close()
            self._opened.clear()

    # ------------------------------------------------------------------ the inbox

    def admit(self, event: PlatformEvent, session_key: str, *, busy: bool) -> Intake:
        """Record ``event`` in the gateway inbox (blocking; raises when the store refuses).
        ``busy``: a turn is ahead of it (of its chat, or every worker thread taken), so the
        adapter acknowledges it at once, with the chat's session as it is now (a new chat's is
        claimed here; its turn goes on in it)."""
        router = self._context().router
        admission = router.table.inbox_add(
            session_key,
            event.platform,
            event.message_id,
            event_json(event),
            claim=self.claimant.claim(),
        )
        current = None
        if busy and not admission.duplicate:
            origin = self.rules.origin(event)
            current = router.resolve(session_key, origin, model=self.settings.model).session.id
        return Intake(admission, current)

    def admit_and_handle(
        self,
        event: PlatformEvent,
        session_key: str,
        bridge: DeliveryBridge,
        cancel: threading.Event,
    ) -> None:
        """Record ``event`` in the inbox, then answer it (blocking): the turn of an event with
        nothing ahead of it, both on one worker thread. Every outcome of the turn reaches
        ``bridge``; when the store refuses to record the event, :class:`NotAdmitted` is raised
        before anything was reported (the caller refuses the event as an intake refusal)."""
        try:
            admission = self.admit(event, session_key, busy=False).admission
        except Exception as error:
            raise NotAdmitted(error) from error
        if admission.entry is None:
            # A platform re-sent a message it had no acknowledgement for: recorded already.
            log.info("%s: message %s was already received; not again", session_key,
                     event.message_id)  # fmt: skip
            bridge.finish(already_received(admission.stored_in))
            return
        self.handle(event, session_key, bridge, cancel, admission.entry, admitted=True)

    def take(self, platforms: list[str]) -> Taken:
        """Claim the inbox rows of ``platforms`` no live gateway holds (blocking): those a
        previous run left, or another gateway on this store, dead now, had taken."""
        return self._context().router.table.inbox_take(
            platforms, self.claimant.claim(), holder_alive
        )

    def renew(self) -> None:
        """Extend this process's claims on its inbox rows (blocking)."""
        self._context().router.table.inbox_renew(self.claimant.claim())

    def release(self, entries: list[InboxEntry]) -> None:
        """Give up this process's claims on ``entries`` (blocking): their platform does not
        run here, another gateway may take them."""
        self._context().router.table.inbox_release([e.id for e in entries], self.claimant.owner)

    def forget(self, entry: InboxEntry) -> None:
        """Remove an inbox row (blocking): it cannot be turned (its event is unreadable)."""
        self._context().router.table.inbox_remove(entry.id)

    # ------------------------------------------------------------------ one event

    def handle(
        self,
        event: PlatformEvent,
        session_key: str,
        bridge: DeliveryBridge,
        cancel: threading.Event,
        entry: InboxEntry | None = None,
        *,
        admitted: bool = False,
    ) -> None:
        """Answer ``event`` (blocking), whose inbox row is ``entry``; ``admitted``: the row was
        added on this thread just now (its message id is known not to be stored). Every
        outcome reaches ``bridge``; nothing raises. The row is removed once the event is stored (its user
        turn committed, its command done); a failure before that leaves it for the next
        start when the event was acknowledged already, else removes it (the platform sends
        it again)."""
        try:
            self._handle(event, session_key, bridge, cancel, entry, admitted)
        except Exception as error:  # the one place an unexpected failure is turned into a line
            line = _one_line(error)
            log.error("%s: %s", session_key, line)
            if bridge.was_stored:
                bridge.finish(GatewayReply(text="", session_id=None, error=line))
            else:
                if entry is not None:
                    self._remove_quietly(entry)
                bridge.refuse(f"the event could not be stored: {line}")

    def _remove_quietly(self, entry: InboxEntry) -> None:
        try:
            self._context().router.table.inbox_remove(entry.id)
        except Exception as error:
            log.error("%s: inbox row %d stays: %s", entry.session_key, entry.id, _one_line(error))

    def _handle(
        self,
        event: PlatformEvent,
        session_key: str,
        bridge: DeliveryBridge,
        cancel: threading.Event,
        entry: InboxEntry | None,
        admitted: bool,
    ) -> None:
        context = self._context()
        origin = self.rules.origin(event)
        command = parse_command(event.text) if event.answer else None
        message_id = entry.message_id if entry is not None else event.message_id

        def taken() -> None:
            if entry is not None:
                self._remove_quietly(entry)

        if message_id is not None and not admitted:
            seen = context.router.table.delivered(session_key, message_id)
            if seen is not None:
                # A platform re-sent a message it had no acknowledgement for, or a restart
                # found the row of a turn stored just before the gateway died: it is stored.
                log.info("%s: message %s was already stored; not again", session_key, message_id)
                taken()
                bridge.stored(seen)
                # Marked duplicate: chat adapters post nothing (their user already has the
                # answer); an HTTP caller (webhook, api-server) may be told in the text.
                bridge.finish(already_received(seen))
                return
        if command is not None:
            reply = self._command(context, session_key, origin, command)
            if message_id is not None and reply.session_id is not None and not reply.error:
                # A re-sent /new must not start a second session.
                context.router.table.mark_delivered(session_key, message_id, reply.session_id)
            taken()
            bridge.finish(reply)
            return
        started, cpu = time.perf_counter(), time.thread_time()
        session = context.router.resolve(session_key, origin, model=self.settings.model).session
        session = self._apply_policy(context, session_key, origin, session)
        routing, routing_cpu = time.perf_counter() - started, time.thread_time() - cpu
        self.in_flight.begin(session.id)
        measured = context.write_timing
        if measured is not None:
            measured.write_seconds = measured.write_cpu_seconds = 0.0
        started = time.perf_counter()
        try:
            result = context.engine.run_turn(
                session.id,
                event_text(event),
                listener=_BridgeListener(bridge, taken),
                cancel=cancel,
                # Stored on the user turn, in its own write: a re-send is recognised by it.
                platform_message_id=message_id,
                answer=event.answer,
                # An answer sent whole is asked of the model in one piece.
                stream=event.stream_answer,
            )
        finally:
            self.in_flight.end(session.id)
        if measured is not None and log.isEnabledFor(logging.DEBUG):
            turn, writes = time.perf_counter() - started, measured.write_seconds
            log.debug(
                "timing %s routing_ms=%.3f store_ms=%.3f turn_ms=%.3f "
                "routing_cpu_ms=%.3f store_cpu_ms=%.3f",
                session_key,
                routing * 1000,
                writes * 1000,
                turn * 1000,
                routing_cpu * 1000,
                measured.write_cpu_seconds * 1000,
            )
        if result.session_id != session.id:
            # A compression continuation took the route over in its own transaction; the
            # mirror follows.
            context.router.follow(session_key, result.session_id, origin)
        if result.error:
            log.warning("%s: the model could not answer: %s", session_key, result.error)
        bridge.finish(
            GatewayReply(
                text=result.text,
                session_id=result.session_id,
                error=result.error,
                usage=result.usage,
            )
        )
        if event.one_shot:
            context.router.forget(session_key)

    def _apply_policy(
        self, context: _ThreadContext, session_key: str, origin: RouteOrigin, session: Session
    ) -> Session:
        """Reset the chat's session first when the policy says so (never a busy one)."""
        if session.message_count == 0:
            return session
        now = self.clock()
        activity = context.router.table.real_activity(session.id)
        cause = self.policy.due(activity, now, busy=self.in_flight.busy(session.id))
        if cause is None:
            return session
        # The last chance to save memories: plugins get the whole conversation.
        self.host.session_before_reset(session, context.store.messages(session.id))
        fresh = context.router.start_new(
            session_key, origin, previous=session.id, reason="reset", model=self.settings.model
        )
        log.info("%s: %s reset: %s → %s", session_key, cause, session.id, fresh.id)
        return fresh

    # ------------------------------------------------------------------ commands

    def _command(
        self, context: _ThreadContext, session_key: str, origin: RouteOrigin, command: ChatCommand
    ) -> GatewayReply:
        router = context.router
        if command.name in ("new", "reset"):
            current = router.current(session_key)
            try:
                fresh = router.start_new(
                    session_key,
                    origin,
                    previous=current.session_id if current else None,
                    reason="new_session" if command.name == "new" else "reset",
                    title=command.argument or None,
                    model=self.settings.model,
                )
            except StoreError as error:
                return _command_reply(str(error), current.session_id if current else None, True)
            named = f" “{fresh.title}”" if fresh.title else ""
            return _command_reply(f"✓ New session{named} started ({fresh.id}).", fresh.id)
        if command.name == "title":
            session = router.resolve(session_key, origin, model=self.settings.model).session
            if not command.argument:
                shown = f"Title: {session.title}" if session.title else "This session has no title."
                return _command_reply(shown, session.id)
            try:
                titled = context.store.set_title(session.id, command.argument)
            except StoreError as error:
                return _command_reply(str(error), session.id, True)
            return _command_reply(f"✓ Title set: {titled.title}", session.id)
        if command.name == "sethome":
            router.table.set_home(origin.platform, origin.chat_id, origin.thread_id)
            _remember_home_participant(context.store, origin)
            current = router.current(session_key)
            return _command_reply(
                f"✓ This chat is now the home channel of {origin.platform}.",
                current.session_id if current else None,
            )
        if command.name == "branch":
            session = router.resolve(session_key, origin, model=self.settings.model).session
            child = context.engine.branch(session.id)
            router.follow(session_key, child.id, origin)
            return _command_reply(
                f"✓ Branched: this chat goes on in {child.id}; {session.id} stays as it was.",
                child.id,
            )
        # /stop reaches a worker only when nothing was running for this chat.
        current = router.current(session_key)
        return _command_reply("Nothing to stop.", current.session_id if current else None)


def _remember_home_participant(store: Store, origin: RouteOrigin) -> None:
    """For ``/handoff`` to the home channel itself (see ``gateway.handoff``)."""
    store.handoffs.remember_home_participant(origin.platform, origin.chat_type, origin.user_id)


def _command_reply(text: str, session_id: str | None, failed: bool = False) -> GatewayReply:
    return GatewayReply(
        text=text, session_id=session_id, error=text if failed else None, command=True
    )


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text
