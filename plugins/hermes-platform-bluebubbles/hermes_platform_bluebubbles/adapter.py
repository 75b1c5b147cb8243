"""The ``bluebubbles`` adapter: iMessage through a BlueBubbles server — its ``new-message``
webhooks in (an aiohttp endpoint whose requests carry ``?password=``), ``POST
/api/v1/message/text`` out (settings: :mod:`.settings`). A one-to-one chat is keyed by the other
person's canonical handle, a group chat by its guid and the sender. A webhook is answered 200
once stored, a repeat taken once; at start, and after a refusal, what came after the last stored
message is read with ``POST /api/v1/message/query`` (catch-up).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    ChatType,
    Deliver,
    Delivery,
    DeliveryRefused,
    PlatformEvent,
    UserFacingError,
    build_session_key,
)
from hermes_hookspecs.adapter_kit import (
    AnswerTasks,
    Backoff,
    CursorFile,
    HttpServer,
    LoopBridge,
    RecentIds,
    StoredPrefix,
    answer_text,
    is_stopping,
    one_line,
    sleep_unless,
    start_http_server,
    unless_too_old,
)

from .messages import chat_guid_of, created_ms, event_from_message, new_message_in
from .rest import BlueBubblesRest
from .settings import BlueBubblesSettings, parse_settings

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("hermes.gateway.bluebubbles")

CURSOR = "messages"
Place = tuple[int, str]  # a message's dateCreated and guid


class BlueBubblesAdapter:
    """iMessage through a BlueBubbles server: webhooks in, REST out (aiohttp)."""

    name = "bluebubbles"
    label = "iMessage (BlueBubbles)"
    short_label = "imsg"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: BlueBubblesSettings | None = None
        self._rest: BlueBubblesRest | None = None
        self._stopping = asyncio.Event()
        self._deliver: Deliver | None = None
        self._server: HttpServer | None = None
        self._bridge = LoopBridge("bluebubbles")
        self._seen = RecentIds()
        self._retry = Backoff(first=1.0, ceiling=30.0)
        self._on_the_way: dict[str, Delivery] = {}
        self._order: StoredPrefix[Place] = StoredPrefix()
        self._chats: dict[str, str] = {}
        self._cursors: CursorFile | None = None
        self._answers = AnswerTasks()
        self.address: str | None = None

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take and check the settings (the endpoint opens in :meth:`start`)."""
        settings = self._settings = parse_settings(config)
        self._rest = BlueBubblesRest(settings.url, settings.password)

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to a chat guid, or to a person's handle (their one-to-one chat); the
        last message's guid. Blocking: call it off the gateway's loop while it runs."""
        rest = self._rest
        if rest is None:
            raise UserFacingError("the bluebubbles platform is not running")
        guid = self._chats.get(chat_id) or chat_guid_of(chat_id)
        return self._bridge.call(lambda: rest.send_text(guid, text))

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of an iMessage chat (a DM's ``chat_id`` is the canonical handle)."""
        kind: ChatType = "dm" if chat_type == "dm" else "group"
        return build_session_key("bluebubbles", kind, chat_id, user_id, None)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """iMessage has no threads the gateway can open: None (the chat itself is used)."""
        return None

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Check the password (``GET /api/v1/ping``), serve the webhook endpoint, catch up."""
        from aiohttp import web

        self.connect(config)
        rest, settings = self._rest, self._settings
        assert rest is not None and settings is not None
        await rest.ping()
        app = web.Application(client_max_size=1 << 20)
        app.router.add_post(settings.path, self._receive)
        try:
            server = await start_http_server(app, settings.host, settings.port)
        except UserFacingError:
            await rest.close()
            raise
        self._server, self._deliver = server, deliver
        self.address = f"http://{server.host}:{server.port}{settings.path}"
        self._cursors = CursorFile.of(config)
        self._bridge.bind()
        self._stopping.clear()
        self._answers.spawn(self._catch_up())
        log.info("bluebubbles: webhooks at %s, server %s", self.address, rest.url)

    async def stop(self) -> None:
        """Stop serving, finish the answers going out, close the HTTP session."""
        self._stopping.set()
        if self._server is not None:
            await self._server.stop()
            self._server = None
        await self._answers.wait()
        if self._rest is not None:
            await self._rest.close()
        self._bridge.unbind()

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        given = request.query.get("password", "")
        assert self._rest is not None
        if not hmac.compare_digest(given.encode(), self._rest.password.encode()):
            return self._refuse(request, 401, "missing or wrong ?password=")
        try:
            data = new_message_in(await request.read())
        except ValueError as error:  # UnicodeDecodeError and JSONDecodeError included
            return self._refuse(request, 400, f"not a BlueBubbles event ({one_line(error)})")
        if data is None:
            return web.Response(status=200)  # other events: nothing for the agent
        guid = str(data.get("guid") or "")
        on_the_way = self._on_the_way.get(guid)
        if on_the_way is not None:  # delivered again while being stored: wait for it
            return await self._acknowledge(request, on_the_way, guid)
        delivery = self._take(data)
        return await self._acknowledge(request, delivery, guid) if delivery else web.Response()

    async def _catch_up(self) -> None:
        """Deliver, oldest first, the messages received after the last one stored."""
        cursors, rest = self._cursors, self._rest
        saved = cursors.get(CURSOR) if cursors is not None else None
        if saved is None or rest is None or self._stopping.is_set():
            return
        after, _, last_guid = saved.partition(":")
        try:
            found = await rest.messages_after(int(after) - 1, but=last_guid)  # same ms too
        except Exception as error:
            log.warning("bluebubbles: no catch-up: %s", one_line(error))
            return
        for message in found:
            self._take(message)

    def _take(self, message: Mapping[str, Any]) -> Delivery | None:
        """Deliver a new message, answered aside; None when not for the agent or seen."""
        found = event_from_message(message)
        deliver = self._deliver
        if found is None or deliver is None or self._server is None:
            return None
        event, chat_guid = found
        guid = str(event.message_id)
        if not self._seen.begin(guid):
            return None
        self._chats[event.chat_id] = chat_guid
        place = (created_ms(message), guid)
        if self._cursors is not None and self._cursors.get(CURSOR) is None:
            self._save(f"{place[0] - 1}:")  # the first message seen: read from it on
        self._order.add(place)
        max_age = self._settings.catch_up_max_age if self._settings else None
        delivery = deliver(unless_too_old(event, max_age))
        self._on_the_way[guid] = delivery
        self._answers.spawn(self._answer(event, chat_guid, place, delivery))
        return delivery

    async def _acknowledge(
        self, request: web.Request, delivery: Delivery, guid: str
    ) -> web.StreamResponse:
        """200 once stored; 503 when refused or still on its way after ``ack_wait_seconds``."""
        from aiohttp import web

        wait = self._settings.ack_wait_seconds if self._settings else 10.0
        try:
            await asyncio.wait_for(delivery.stored(), wait)
        except TimeoutError:
            return self._refuse(request, 503, f"not stored within {wait:g}s")
        except DeliveryRefused as error:
            self._forget(guid, taken=False)  # a repeat is delivered anew
            return self._refuse(request, 503, str(error))
        return web.Response(status=200)

    async def _answer(self, event: PlatformEvent, chat_guid: str, place: Place,
                      delivery: Delivery) -> None:  # fmt: skip
        try:
            await delivery.stored()
        except DeliveryRefused as error:  # answered 503; read again after a pause
            self._forget(place[1], taken=False)
            if not is_stopping(error) and not self._stopping.is_set():
                await sleep_unless(self._retry.next_pause(), self._stopping)
                await self._catch_up()
            return
        self._forget(place[1], taken=True)
        self._retry.reset()
        if self._order.done(place) and self._order.confirmable:
            self._save("{}:{}".format(*self._order.confirmable))
        try:
            text = answer_text(await delivery.reply())
            if text and self._rest is not None:
                await self._rest.send_text(chat_guid, text)
        except Exception as error:
            log.error("bluebubbles: no answer in %s: %s", chat_guid, one_line(error))

    def _save(self, value: str) -> None:
        try:
            if self._cursors is not None:
                self._cursors.save(CURSOR, value)
        except OSError as error:
            log.error("bluebubbles: the catch-up position was not saved: %s", one_line(error))

    def _forget(self, guid: str, *, taken: bool) -> None:
        self._on_the_way.pop(guid, None)
        (self._seen.taken if taken else self._seen.dropped)(guid)

    def _refuse(self, request: web.Request, status: int, reason: str) -> web.StreamResponse:
        from aiohttp import web

        log.warning("bluebubbles refused a webhook from %s (HTTP %d): %s",
                    request.remote or "?", status, reason)  # fmt: skip
        return web.json_response({"error": reason}, status=status)
