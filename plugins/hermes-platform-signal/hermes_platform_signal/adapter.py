"""The ``signal`` adapter: a Signal account run by ``signal-cli daemon --http`` — messages in
from its Server-Sent Events stream, answers out with its JSON-RPC ``send``.

Settings (``gateway.platforms.signal``; README.md has them all): ``url`` of the daemon
(required), ``account`` (the bot's number: needed by a multi-account daemon, and its own
messages are ignored), ``catch_up_max_age``.

A DM is keyed by the sender's ACI (uuid; the number when the daemon gives no uuid), a group
message by its ``groupId``. The stream's last event stored is kept in the state folder and
given back as ``Last-Event-ID`` on reconnecting and at the next start, so the daemon replays
what came after it; a broken stream is reopened with a growing pause.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from hermes_hookspecs import (
    ChatType,
    Deliver,
    DeliveryRefused,
    PlatformEvent,
    UserFacingError,
    build_session_key,
)
from hermes_hookspecs.adapter_kit import (
    AnswerTasks,
    Backoff,
    CursorFile,
    LoopBridge,
    RecentIds,
    SettingsReader,
    StoredPrefix,
    answer_text,
    is_stopping,
    one_line,
    store_down,
    unless_too_old,
)

from .daemon import Daemon, StreamEvent, event_from_envelope

log = logging.getLogger("hermes.gateway.signal")

CURSOR = "last_event_id"
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def is_person(chat_id: str) -> bool:
    """True for a number (``+…``) or an ACI; False for a group id (base64)."""
    return chat_id.startswith("+") or UUID.fullmatch(chat_id) is not None


class SignalAdapter:
    """A Signal account through signal-cli's daemon HTTP API (aiohttp)."""

    name = "signal"
    label = "Signal"
    short_label = "sig"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._url = ""
        self._account: str | None = None
        self._max_age: float | None = None
        self._daemon: Daemon | None = None
        self._bridge = LoopBridge("signal")
        self._reader: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._seen = RecentIds()
        self._order: StoredPrefix[str] = StoredPrefix()
        self._refusal_pause = Backoff()
        self._cursors: CursorFile | None = None
        self._last_id: str | None = None
        self._replies = AnswerTasks()
        self.address: str | None = None

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the stream opens in :meth:`start`)."""
        read = SettingsReader("signal", config)
        what = "the address of `signal-cli daemon --http`, e.g. http://127.0.0.1:8080"
        self._url = str(read.text("url", required=True, what=what))
        self._account = read.text("account")
        self._max_age = read.optional_seconds("catch_up_max_age")

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to a number, an ACI or a group id (blocking); its timestamp."""
        group = not is_person(chat_id)
        daemon = self._daemon
        if daemon is not None and self._bridge.running:
            return self._bridge.call(lambda: daemon.send_text(chat_id, text, group=group))
        if not self._url:
            raise UserFacingError("the signal platform is not configured (connect first)")

        async def once() -> str | None:
            import aiohttp

            async with aiohttp.ClientSession() as session:
                own = Daemon(session, self._url, self._account)
                return await own.send_text(chat_id, text, group=group)

        return asyncio.run(once())

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a Signal conversation (a DM's ``chat_id`` is the sender's ACI)."""
        kind: ChatType = "group" if chat_type in {"group", "thread", "channel"} else "dm"
        return build_session_key("signal", kind, chat_id, user_id, None)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Signal has no threads: the caller uses the chat itself."""
        return None

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Check the daemon answers, then read its event stream from where we left off."""
        import aiohttp

        self.connect(config)
        session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        daemon = Daemon(session, self._url, self._account)
        try:
            await daemon.check()
        except Exception as error:
            await session.close()
            raise UserFacingError(f"cannot reach signal-cli at {self._url}: {one_line(error)} "
                                  "(is `signal-cli daemon --http` running?)") from None  # fmt: skip
        self._daemon, self._stopping = daemon, asyncio.Event()
        self._cursors = CursorFile.of(config)
        self._last_id = self._cursors.get(CURSOR) if self._cursors else None
        self._bridge.bind()
        self.address = self._url
        self._reader = asyncio.create_task(self._read(daemon, deliver))
        log.info("signal: reading %s/api/v1/events (from event %s)", self._url, self._last_id)

    async def stop(self) -> None:
        """Stop reading, send the answers still going out, close the connection."""
        self._stopping.set()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        await self._replies.wait()
        if self._daemon is not None:
            await self._daemon.session.close()
            self._daemon = None
        self._bridge.unbind()

    async def _read(self, daemon: Daemon, deliver: Deliver) -> None:
        """Read the stream; reopen it (from the last event read) after a growing pause."""
        pause = Backoff()
        while not self._stopping.is_set():
            try:
                async for event in daemon.events(self._last_id):
                    pause.reset()
                    self._take(event, deliver)
                problem = "the daemon closed it"
            except Exception as error:
                problem = one_line(error)
            if self._stopping.is_set():
                return
            seconds = pause.next_pause()
            log.warning("signal: event stream lost (%s); reconnecting in %.1fs", problem, seconds)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), seconds)

    def _take(self, item: StreamEvent, deliver: Deliver) -> None:
        """Deliver the message of one stream event, unless taken already."""
        if item.kind != "receive" or self._stopping.is_set():
            return
        try:
            data = json.loads(item.data)
        except ValueError:
            data = None
        envelope = data.get("envelope") if isinstance(data, dict) else None
        event = event_from_envelope(envelope, self._account) if isinstance(envelope, dict) else None
        key = item.id if item.id is not None else f"message {event.message_id}" if event else None
        if item.id is not None:
            self._last_id = item.id
        if key is None:
            return
        self._order.add(key)
        if event is None or not self._seen.begin(str(event.message_id)):
            self._stored(key)
            return
        self._replies.spawn(self._follow(key, unless_too_old(event, self._max_age), deliver))

    async def _follow(self, key: str, event: PlatformEvent, deliver: Deliver) -> None:
        """Deliver ``event`` until it is stored (then remember our place), then answer it."""
        message_id = str(event.message_id)
        while True:
            delivery = deliver(event)
            try:
                await delivery.stored()
                break
            except DeliveryRefused as error:
                if is_stopping(error) or self._stopping.is_set():
                    self._stopping.set()  # the gateway stops: so does reading
                    self._seen.dropped(message_id)
                    return
                down = store_down(error)  # not this message's fault: never skipped for it
                if not down and self._order.refused(key):
                    log.error("signal: message %s skipped: it could not be stored three times "
                              "(%s)", message_id, error)  # fmt: skip
                    self._seen.taken(message_id)
                    self._stored(key)
                    return
                seconds = self._refusal_pause.next_pause()
                if not down:  # the gateway said it once for all of them
                    log.warning("signal: message %s not stored (%s); trying again in %.0fs",
                                message_id, error, seconds)  # fmt: skip
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), seconds)
        self._refusal_pause.reset()
        self._seen.taken(message_id)
        self._stored(key)
        try:
            text = answer_text(await delivery.reply())
            if text and self._daemon is not None:
                await self._daemon.send_text(event.chat_id, text, group=event.chat_type == "group")
        except DeliveryRefused as error:
            log.error("signal: no answer for %s: %s", event.chat_id, error)
        except Exception as error:
            log.error("signal: sending to %s failed: %s", event.chat_id, one_line(error))

    def _stored(self, key: str) -> None:
        """``key`` is done: save the stream position once everything before it is."""
        if not self._order.done(key) or self._cursors is None:
            return
        confirmable = self._order.confirmable
        if confirmable is not None and not confirmable.startswith("message "):
            try:
                self._cursors.save(CURSOR, confirmable)
            except OSError as error:
                log.error("signal: the stream position was not saved: %s", one_line(error))
