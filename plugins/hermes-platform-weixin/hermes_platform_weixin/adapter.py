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

from hermes_hookspecs import Deliver, UserFacingError, build_session_key
from hermes_hookspecs.adapter_kit import (
    ApiRefused,
    Incoming,
    LoopBridge,
    SettingsReader,
    WebhookIntake,
    WebhookRefused,
    split_text,
)

from .messages import check_signature, event_from_message, read_message, text_reply
from .mp_api import mp_api, send_text
from .pending import Pending, seconds_left
from .safe_mode import SafeMode

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("hermes.gateway.weixin")

MESSAGE_BYTES = 2048
"""The most UTF-8 bytes of text put in one message: longer answers are split."""
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
        self._api = mp_api(str(DEFAULTS["api_base"]), "", "")
        self._intake = WebhookIntake(
            "weixin",
            log,
            hold_refusals=UNANSWERED_SECONDS,
            again="pushed again",
            acknowledgement="success",
        )
        self._bridge = LoopBridge("weixin")
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
        self._api = mp_api(read.url("api_base"), app_id, secret)
        read.port()
        wait = read.number("reply_wait_seconds", positive=True)
        if wait >= 5:
            raise read.problem("reply_wait_seconds", "must be below 5 (the platform's limit)")
        self._settings = read.values
        self._intake.ack_wait = wait

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to the user ``chat_id`` (their OpenID) through the customer-service
        API (blocking; the platform takes it within 48 hours of their last message)."""

        async def post() -> None:
            try:
                for piece in split_text(text, MESSAGE_BYTES, in_bytes=True):
                    await send_text(self._api, chat_id, piece)
            except ApiRefused as error:
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
        self.connect(config)
        await self._api.open()
        self._bridge.bind()
        try:
            self.address = await self._intake.serve(
                deliver, self._settings, self._receive, self._verify
            )
        except UserFacingError:
            await self._api.close()
            raise
        log.info("weixin server URL at %s (API %s)", self.address, self._api.base)

    async def stop(self) -> None:
        """Stop serving, then send the answers still going out."""
        await self._intake.stop()
        self._bridge.unbind()
        await self._api.close()

    async def _verify(self, request: web.Request) -> web.StreamResponse:
        """The URL check: ``echostr`` back when ``signature`` is right."""
        from aiohttp import web

        try:
            check_signature(request.query, self._token)
        except WebhookRefused as refused:
            return self._intake.refuse(request, refused.status, refused.reason)
        return web.Response(text=request.query.get("echostr", ""))

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        until = asyncio.get_running_loop().time() + float(self._settings["reply_wait_seconds"])
        pendings: list[Pending] = []

        def parse(request: web.Request, body: bytes) -> Incoming | None:
            fields, encrypted = read_message(request.query, body, self._token, self._safe)
            event = event_from_message(fields)
            if event is None:
                return None  # nothing for the agent
            pending = Pending()
            pendings.append(pending)
            account = fields.get("ToUserName", "")

            async def passive_reply() -> web.StreamResponse:
                """The answer in the acknowledgement when it is ready in time and fits in
                one message; else ``success``, and it follows through the API."""
                from aiohttp import web

                try:
                    text = await asyncio.wait_for(asyncio.shield(pending.text), seconds_left(until))
                except TimeoutError:
                    return web.Response(text="success")
                if len(split_text(text, MESSAGE_BYTES, in_bytes=True)) != 1:
                    return web.Response(text="success")
                safe = self._safe if encrypted else None
                reply = text_reply(event.chat_id, account, text, safe, self._token)
                pending.decide(True)
                return web.Response(body=reply, content_type="application/xml")

            async def answer(text: str) -> None:
                pending.text.set_result(text)
                if not text.strip() or await pending.passive:
                    return
                for piece in split_text(text, MESSAGE_BYTES, in_bytes=True):
                    await send_text(self._api, event.chat_id, piece)

            return Incoming(event, str(event.message_id), answer, acknowledgement=passive_reply)

        try:
            return await self._intake.receive(request, parse)
        finally:
            for pending in pendings:
                pending.decide(False)
