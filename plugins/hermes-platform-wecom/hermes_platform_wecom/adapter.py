"""The ``wecom`` adapter: a WeCom (企业微信) self-built application. WeCom checks the callback
URL with a signed, encrypted ``echostr`` (GET) and POSTs each message to it as encrypted XML
(``msg_signature`` over the token, timestamp, nonce and ciphertext; AES-256-CBC with the
EncodingAESKey; the CorpID at its end); answers go out through ``POST /cgi-bin/message/send``
with the application's access token (aiohttp). Settings and session keys are in the plugin's
README. A message is answered 200 only once it is stored; a re-sent ``MsgId`` already stored
is acknowledged, not delivered again.
"""

from __future__ import annotations

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

from .crypto import aes_key
from .messages import event_from_message, opened, xml_fields
from .work_api import send_text, work_api

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("hermes.gateway.wecom")

MESSAGE_BYTES = 2048
"""WeCom's limit of a text message's content, in UTF-8 bytes: longer answers are split."""
UNANSWERED_SECONDS = 5.5
"""A message not stored is not answered before this: WeCom retries what it got no answer for
within five seconds, three times."""
DEFAULTS: Mapping[str, Any] = {
    "api_base": "https://qyapi.weixin.qq.com",
    "host": "127.0.0.1",
    "port": 8649,
    "path": "/wecom/callback",
    "ack_wait_seconds": 2.5,
}


class WeComAdapter:
    """A WeCom application: its callback URL served over aiohttp, answers by the message API."""

    name = "wecom"
    label = "WeCom"
    short_label = "wecom"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._corp_id, self._token, self._key = "", "", b""
        self._api = work_api(str(DEFAULTS["api_base"]), "", "")
        self._agent_id = ""
        self._intake = WebhookIntake(
            "wecom", log, hold_refusals=UNANSWERED_SECONDS, again="sent again", acknowledgement=""
        )
        self._bridge = LoopBridge("wecom")
        self.address: str | None = None

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the server starts in :meth:`start`)."""
        read = SettingsReader("wecom", config, DEFAULTS)
        corp_id = read.text("corp_id", required=True, what="My Company > Company Information")
        secret = read.secret("corp_secret", "the application's Secret (App Management)")
        agent_id = read.values.get("agent_id")
        if isinstance(agent_id, bool) or not str(agent_id or "").strip().isdigit():
            raise read.problem("agent_id", "must be the application's AgentId (a number)")
        self._token = read.secret("token", "the Token of the application's API receiving")
        try:
            self._key = aes_key(read.secret("encoding_aes_key", "beside the Token"))
        except ValueError as error:
            raise read.problem("encoding_aes_key", str(error)) from None
        self._corp_id = str(corp_id)
        self._api = work_api(read.url("api_base"), self._corp_id, secret)
        self._agent_id = str(agent_id).strip()
        read.port()
        read.number("ack_wait_seconds", positive=True)
        self._settings = read.values
        self._intake.ack_wait = float(self._settings["ack_wait_seconds"])

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to the member ``chat_id`` (their UserID; blocking); the last msgid."""

        async def post() -> str | None:
            last: str | None = None
            try:
                for piece in split_text(text, MESSAGE_BYTES, in_bytes=True):
                    last = await send_text(self._api, self._agent_id, chat_id, piece)
            except ApiRefused as error:
                raise UserFacingError(f"wecom: sending to {chat_id} was refused: {error}") from None
            return last

        return self._bridge.call(post)

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a conversation with the application: a DM with the member."""
        return build_session_key("wecom", "dm", chat_id)

    def create_thread(self, chat_id: str, title: str) -> None:
        """WeCom application messages have no threads: the home conversation is used."""
        return None

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Ask for an access token (refused credentials stop here), then serve the callback."""
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
        log.info("wecom callbacks at %s (API %s)", self.address, self._api.base)

    async def stop(self) -> None:
        """Stop serving, then send the answers still going out."""
        await self._intake.stop()
        self._bridge.unbind()
        await self._api.close()

    async def _verify(self, request: web.Request) -> web.StreamResponse:
        """The URL check when the callback is saved: answer the decrypted ``echostr``."""
        from aiohttp import web

        try:
            echo = opened(
                request.query,
                request.query.get("echostr", ""),
                self._token,
                self._key,
                self._corp_id,
            )
        except WebhookRefused as refused:
            return self._intake.refuse(request, refused.status, refused.reason)
        return web.Response(body=echo, content_type="text/plain")

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        return await self._intake.receive(request, self._parse)

    def _parse(self, request: web.Request, body: bytes) -> Incoming | None:
        """A message callback opened (signature, decryption, CorpID) and read."""
        envelope = xml_fields(body)
        inner = opened(
            request.query, envelope.get("Encrypt", ""), self._token, self._key, self._corp_id
        )
        event = event_from_message(xml_fields(inner), self._agent_id)
        if event is None:
            return None  # nothing for the agent
        member = event.chat_id

        async def answer(text: str) -> None:
            for piece in split_text(text, MESSAGE_BYTES, in_bytes=True):
                await send_text(self._api, self._agent_id, member, piece)

        return Incoming(event, str(event.message_id), answer)
