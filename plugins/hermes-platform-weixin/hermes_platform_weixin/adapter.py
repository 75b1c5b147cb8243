"""The ``weixin`` adapter: a Weixin (微信) Official Account's server URL. The platform checks the
URL with a signed GET (``echostr`` answered as it is) and POSTs each user message as XML —
plaintext, or encrypted in safe mode — wanting an answer within five seconds: a passive XML
reply when the turn is done in time, else ``success`` and the answer follows through the
customer-service message API (aiohttp). Settings and session keys: the plugin's README. A
message is acknowledged only once stored; a re-sent ``MsgId`` stored before is not delivered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    Deliver,
    Delivery,
    DeliveryRefused,
    PlatformEvent,
    UserFacingError,
    build_session_key,
)
from hermes_hookspecs.adapter_kit import (
    AnswerTasks,
    HttpServer,
    LoopBridge,
    RecentIds,
    SettingsReader,
    answer_text,
    one_line,
    split_text,
    start_http_server,
)

from .messages import Refused, check_signature, event_from_message, read_message, text_reply
from .mp_api import MpApi, WeixinError
from .pending import Pending, seconds_left
from .safe_mode import SafeMode

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("hermes.gateway.weixin")

MESSAGE_BYTES = 2048
"""The most UTF-8 bytes of text put in one message: longer answers are split."""
MAX_BODY_BYTES = 1 << 20
UNANSWERED_SECONDS = 5.5
"""A message not stored is not answered before this: the platform retries what it got no
answer for in five seconds (an error answer would only show the follower a failure notice)."""
DEFAULTS: Mapping[str, Any] = {"api_base": "https://api.weixin.qq.com", "host": "127.0.0.1",
                                "port": 8650, "path": "/weixin/callback",
                                "reply_wait_seconds": 4.0}  # fmt: skip


class WeixinAdapter:
    """An Official Account: its server URL over aiohttp, passive or customer-service answers."""

    name = "weixin"
    label = "Weixin Official Account"
    short_label = "weixin"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._token = ""
        self._safe: SafeMode | None = None
        self._api = MpApi(str(DEFAULTS["api_base"]), "", "")
        self._server: HttpServer | None = None
        self._seen = RecentIds(4096)
        self._on_the_way: dict[str, Delivery] = {}
        self._replies = AnswerTasks()
        self._bridge = LoopBridge("weixin")
        self._deliver: Deliver = _not_started
        self.address: str | None = None

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the server starts in :meth:`start`)."""
        read = SettingsReader("weixin", config, DEFAULTS)
        app_id = str(read.text("app_id", required=True, what="the AppID (Settings > Basic)"))
        secret = read.secret("app_secret", "the AppSecret (Settings and Development > Basic)")
        self._token = read.secret("token", "the Token of the server configuration")
        key = read.text("encoding_aes_key")
        try:
            self._safe = SafeMode(key, app_id) if key else None
        except ValueError as error:
            raise read.problem("encoding_aes_key", str(error)) from None
        self._api = MpApi(read.url("api_base"), app_id, secret)
        read.port()
        wait = read.number("reply_wait_seconds", positive=True)
        if wait >= 5:
            raise read.problem("reply_wait_seconds", "must be below 5 (the platform's limit)")
        self._settings = read.values

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to the user ``chat_id`` (their OpenID) through the customer-service
        API (blocking; the platform takes it within 48 hours of their last message)."""

        async def post() -> None:
            try:
                for piece in split_text(text, MESSAGE_BYTES, in_bytes=True):
                    await self._api.send_text(chat_id, piece)
            except WeixinError as error:
                raise UserFacingError(f"weixin: sending to {chat_id} refused: {error}") from None

        self._bridge.call(post)
        return None

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a user's conversation with the account: a DM keyed by OpenID."""
        return build_session_key("weixin", "dm", chat_id)

    def create_thread(self, chat_id: str, title: str) -> None:
        """An Official Account conversation has no threads: the home conversation is used."""
        return None

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Ask for an access token (refused credentials stop here), then serve the URL."""
        from aiohttp import web

        self.connect(config)
        await self._api.open()
        self._bridge.bind()
        self._deliver = deliver
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_get(str(self._settings["path"]), self._verify)
        app.router.add_post(str(self._settings["path"]), self._receive)
        host, port = str(self._settings["host"]), int(self._settings["port"])
        try:
            self._server = await start_http_server(app, host, port)
        except UserFacingError:
            await self._api.close()
            raise
        self.address = f"http://{self._server.host}:{self._server.port}{self._settings['path']}"
        log.info("weixin server URL at %s (API %s)", self.address, self._api.base)

    async def stop(self) -> None:
        """Stop serving, then send the answers still going out."""
        if self._server is not None:
            await self._server.stop()
            self._server = None
        await self._replies.wait()
        self._bridge.unbind()
        await self._api.close()

    async def _verify(self, request: web.Request) -> web.StreamResponse:
        """The URL check: ``echostr`` back when ``signature`` is right."""
        from aiohttp import web

        try:
            check_signature(request.query, self._token)
        except Refused as refused:
            return self._refuse(request, refused.status, str(refused))
        return web.Response(text=request.query.get("echostr", ""))

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        until = asyncio.get_running_loop().time() + float(self._settings["reply_wait_seconds"])
        try:
            fields, encrypted = read_message(
                request.query, await request.read(), self._token, self._safe
            )
        except Refused as refused:
            return self._refuse(request, refused.status, str(refused))
        event = event_from_message(fields)
        if event is None:
            return web.Response(text="success")  # nothing for the agent
        message_id = str(event.message_id)
        delivery = self._on_the_way.get(message_id)
        if delivery is not None or not self._seen.begin(message_id):
            return await self._acknowledge(request, delivery, until)  # a re-send
        delivery = self._on_the_way[message_id] = self._deliver(event)
        pending = Pending()
        self._replies.spawn(self._answer(event, delivery, pending))
        try:
            response = await self._acknowledge(request, delivery, until)
            if response.status != 200:
                return response
            text = await asyncio.wait_for(asyncio.shield(pending.text), seconds_left(until))
            if len(split_text(text, MESSAGE_BYTES, in_bytes=True)) != 1:
                return response
            reply = text_reply(
                event.chat_id, fields.get("ToUserName", ""), text,
                self._safe if encrypted else None, self._token,
            )  # fmt: skip
            pending.decide(True)
            return web.Response(body=reply, content_type="application/xml")
        except TimeoutError:
            return web.Response(text="success")  # the answer follows by the API
        finally:
            pending.decide(False)

    async def _acknowledge(
        self, request: web.Request, delivery: Delivery | None, until: float
    ) -> web.StreamResponse:
        """``success`` once the message is stored (at once for one stored before); else no
        answer until the platform's five seconds are over — what makes it push again."""
        from aiohttp import web

        try:
            if delivery is not None:
                await asyncio.wait_for(delivery.stored(), seconds_left(until))
        except (TimeoutError, DeliveryRefused) as error:
            wait = float(self._settings["reply_wait_seconds"])
            await asyncio.sleep(seconds_left(until - wait + UNANSWERED_SECONDS))
            return self._refuse(request, 503, f"{error or 'not stored in time'}; pushed again")
        return web.Response(text="success")

    async def _answer(self, event: PlatformEvent, delivery: Delivery, pending: Pending) -> None:
        message_id = str(event.message_id)
        try:
            await delivery.stored()
        except DeliveryRefused:
            self._on_the_way.pop(message_id, None)
            self._seen.dropped(message_id)
            return  # answered 503: Weixin sends it again
        self._on_the_way.pop(message_id, None)
        self._seen.taken(message_id)
        try:
            text = answer_text(await delivery.reply())
        except DeliveryRefused as error:
            log.error("weixin: no answer for %s: %s", event.chat_id, error)
            text = ""
        pending.text.set_result(text)
        if not text.strip() or await pending.passive:
            return
        try:
            for piece in split_text(text, MESSAGE_BYTES, in_bytes=True):
                await self._api.send_text(event.chat_id, piece)
        except Exception as error:
            log.error("weixin: answering %s failed: %s", event.chat_id, one_line(error))

    def _refuse(self, request: web.Request, status: int, reason: str) -> web.StreamResponse:
        from aiohttp import web

        log.warning(
            "weixin refused a request from %s (HTTP %d): %s", request.remote, status, reason
        )
        return web.Response(text=reason, status=status)


def _not_started(event: PlatformEvent) -> Delivery:
    raise DeliveryRefused("the weixin platform is not started", stopping=True)
