"""The ``whatsapp`` adapter: a WhatsApp Business number on the Cloud API — messages in as
signed webhooks, answers out through the Graph API's ``/<phone_number_id>/messages``.

Settings (``gateway.platforms.whatsapp``; README.md has them all): ``access_token``,
``app_secret`` (webhook signatures), ``verify_token`` (Meta's GET check), ``phone_number_id``
(required; secrets also as ``<name>_env``); ``host``/``port``/``path`` of the callback URL;
``base_url``, ``api_version``, ``mark_as_read``, ``catch_up_max_age``.

A DM is keyed by the sender's ``wa_id`` (SPEC G1), a group message by its ``group_id``. A
webhook is answered 200 only once its messages are stored (else Meta sends it again); a
message id seen before is stored and answered once."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    RETRY_AFTER_SECONDS,
    BodyRefused,
    ChatType,
    Deliver,
    Delivery,
    DeliveryRefused,
    PlatformEvent,
    UserFacingError,
    build_session_key,
    read_body,  # fmt: skip
)
from hermes_hookspecs.adapter_kit import (
    AnswerTasks,
    HttpServer,
    LoopBridge,
    RecentIds,
    SettingsReader,
    answer_text,
    one_line,
    start_http_server,  # fmt: skip
    unless_too_old,
)

from .graph import GraphClient, GraphError
from .payload import SIGNATURE_HEADER, events_of, signature_ok

if TYPE_CHECKING:
    from aiohttp import ClientSession, web

log = logging.getLogger("hermes.gateway.whatsapp")

MAX_BODY_BYTES = 1024 * 1024
DEFAULTS: Mapping[str, Any] = {"host": "127.0.0.1", "port": 8647, "path": "/whatsapp/webhook",
                               "base_url": "https://graph.facebook.com", "api_version": "v21.0",
                               "mark_as_read": False}  # fmt: skip


class WhatsAppAdapter:
    """A WhatsApp Business number: webhooks in (aiohttp), Graph API calls out (aiohttp)."""

    name = "whatsapp"
    label = "WhatsApp"
    short_label = "wa"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._token = self._app_secret = self._verify_token = self._number_id = ""
        self._max_age: float | None = None
        self._server: HttpServer | None = None
        self._graph: GraphClient | None = None
        self._bridge = LoopBridge("whatsapp")
        self._seen = RecentIds()
        self._on_the_way: dict[str, Delivery] = {}
        self._deliver: Deliver | None = None
        self._replies = AnswerTasks()
        self.address: str | None = None

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the endpoint starts in :meth:`start`)."""
        read = SettingsReader("whatsapp", config, DEFAULTS)
        self._token = read.secret("access_token", "the Graph API access token of the app")
        self._app_secret = read.secret("app_secret", "webhook signatures are checked with it")
        self._verify_token = read.secret("verify_token", "Meta's webhook check sends it")
        self._number_id = str(read.text("phone_number_id", required=True,
                                        what="the id of the business phone number"))  # fmt: skip
        read.port()
        read.url("base_url")
        read.flag("mark_as_read")
        self._max_age = read.optional_seconds("catch_up_max_age")
        self._settings = read.values

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to a ``wa_id`` (digits) or a ``group_id`` (blocking); its last id."""
        group = not chat_id.isdigit()
        if self._bridge.running and self._graph is not None:
            graph = self._graph
            return self._bridge.call(lambda: graph.send_text(chat_id, text, group=group))
        if not self._token:
            raise UserFacingError("the whatsapp platform is not configured (connect first)")

        async def once() -> str | None:
            import aiohttp

            async with aiohttp.ClientSession() as session:
                return await self._client(session).send_text(chat_id, text, group=group)

        return asyncio.run(once())

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a WhatsApp conversation (a DM's ``chat_id`` is the ``wa_id``)."""
        kind: ChatType = "group" if chat_type in {"group", "thread", "channel"} else "dm"
        return build_session_key("whatsapp", kind, chat_id, user_id, None)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """WhatsApp has no threads: the caller uses the chat itself."""
        return None

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Check the token and the number with the Graph API, then serve the callback URL."""
        import aiohttp
        from aiohttp import web

        self.connect(config)
        graph = self._client(aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)))
        try:
            number = await graph.number()
        except Exception as error:
            await graph.session.close()
            if isinstance(error, GraphError) and error.status in {400, 401, 403}:
                raise UserFacingError(
                    "gateway.platforms.whatsapp: the Graph API refused the access token or "
                    f"phone_number_id ({error.message})"
                ) from None
            raise UserFacingError(f"cannot reach the Graph API at "
                                  f"{self._settings['base_url']}: {one_line(error)}") from None  # fmt: skip
        self._graph = graph
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        self._deliver = deliver
        app.router.add_get(str(self._settings["path"]), self._verify)
        app.router.add_post(str(self._settings["path"]), self._receive)
        self._server = await start_http_server(
            app, str(self._settings["host"]), int(self._settings["port"])
        )
        self._bridge.bind()
        self.address = f"http://{self._server.host}:{self._server.port}{self._settings['path']}"
        log.info("whatsapp %s: webhook at %s", number.get("display_phone_number"), self.address)

    async def stop(self) -> None:
        """Stop serving, send the answers still going out, close the client."""
        if self._server is not None:
            await self._server.stop()
            self._server = None
        await self._replies.wait()
        if self._graph is not None:
            await self._graph.session.close()
            self._graph = None
        self._bridge.unbind()

    async def _verify(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        query = request.query
        token = query.get("hub.verify_token")
        if query.get("hub.mode") == "subscribe" and token == self._verify_token:
            return web.Response(text=query.get("hub.challenge", ""))
        return self._refuse(request, 403, "webhook verification with a wrong verify_token")

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        try:
            body = await read_body(request, MAX_BODY_BYTES)
        except BodyRefused as refused:
            return self._refuse(request, refused.status, refused.reason)
        if not signature_ok(self._app_secret, body, request.headers.get(SIGNATURE_HEADER)):
            return self._refuse(request, 401, f"missing or wrong {SIGNATURE_HEADER}")
        try:
            payload = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._refuse(request, 400, "malformed JSON")
        waiting = [self._take(event) for event in events_of(payload, self._number_id)]
        for delivery in waiting:
            if delivery is None:
                continue
            try:
                await delivery.stored()
            except DeliveryRefused as error:
                log.warning("whatsapp: a message was not stored (%s); Meta will send it again",
                            error)  # fmt: skip
                return web.json_response({"error": str(error)}, status=503,
                                         headers={"Retry-After": str(RETRY_AFTER_SECONDS)})  # fmt: skip
        return web.Response(text="OK")

    def _take(self, event: PlatformEvent) -> Delivery | None:
        """The delivery of ``event`` (one already on its way for a retry); None when it was
        stored before."""
        message_id = str(event.message_id)
        on_the_way = self._on_the_way.get(message_id)
        if on_the_way is not None or not self._seen.begin(message_id):
            return on_the_way
        assert self._deliver is not None
        delivery = self._deliver(unless_too_old(event, self._max_age))
        self._on_the_way[message_id] = delivery
        self._replies.spawn(self._answer(event, delivery))
        return delivery

    async def _answer(self, event: PlatformEvent, delivery: Delivery) -> None:
        message_id = str(event.message_id)
        try:
            await delivery.stored()
        except DeliveryRefused:
            self._seen.dropped(message_id)
            return
        finally:
            self._on_the_way.pop(message_id, None)
        self._seen.taken(message_id)
        graph = self._graph
        if self._settings["mark_as_read"] and graph is not None:
            try:
                await graph.mark_read(message_id)
            except Exception as error:
                log.warning("whatsapp: %s not marked read: %s", message_id, one_line(error))
        try:
            text = answer_text(await delivery.reply())
            if text and graph is not None:
                await graph.send_text(event.chat_id, text, group=event.chat_type == "group",
                                      reply_to=message_id)  # fmt: skip
        except DeliveryRefused as error:
            log.error("whatsapp: no answer for %s: %s", event.chat_id, error)
        except Exception as error:
            log.error("whatsapp: sending to %s failed: %s", event.chat_id, one_line(error))

    def _client(self, session: ClientSession) -> GraphClient:
        settings = self._settings
        return GraphClient(session, str(settings["base_url"]), str(settings["api_version"]),
                           self._number_id, self._token)  # fmt: skip

    def _refuse(self, request: web.Request, status: int, reason: str) -> web.StreamResponse:
        from aiohttp import web

        log.warning("whatsapp refused a request from %s (HTTP %d): %s", request.remote or "?",
                    status, reason)  # fmt: skip
        return web.json_response({"error": reason}, status=status)
