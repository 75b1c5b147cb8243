"""The ``dingtalk`` adapter: a DingTalk robot in HTTP callback mode. DingTalk POSTs each message
for the robot to the message receiving URL with ``timestamp`` and ``sign`` headers (checked
against the AppSecret); the answer is POSTed to the message's ``sessionWebhook`` (aiohttp).
Settings and session keys are in the plugin's README. A message is answered 200 only once it is
stored; a re-sent ``msgId`` already stored is acknowledged, not delivered again.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import ChatType, Deliver, UserFacingError, build_session_key
from hermes_hookspecs.adapter_kit import (
    Incoming,
    LoopBridge,
    SettingsReader,
    WebhookIntake,
    WebhookRefused,
    split_text,
)

from .events import received, sign_problem

if TYPE_CHECKING:
    import aiohttp
    from aiohttp import web

log = logging.getLogger("hermes.gateway.dingtalk")

MESSAGE_CHARS = 4000
"""Longer answers go out as several messages."""
DEFAULTS: Mapping[str, Any] = {
    "host": "127.0.0.1",
    "port": 8648,
    "path": "/dingtalk/robot",
    "session_webhook_prefix": "https://oapi.dingtalk.com/",
    "ack_wait_seconds": 2.5,
}


class DingTalkError(Exception):
    """A webhook answer whose ``errcode`` is not 0."""


class DingTalkAdapter:
    """A DingTalk robot: its receiving URL served over aiohttp, answers to the sessionWebhook."""

    name = "dingtalk"
    label = "DingTalk"
    short_label = "dingtalk"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._secret = ""
        self._http: aiohttp.ClientSession | None = None
        self._intake = WebhookIntake("dingtalk", log)
        self._webhooks: dict[str, tuple[str, float | None]] = {}
        self._bridge = LoopBridge("dingtalk")
        self.address: str | None = None

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the server starts in :meth:`start`)."""
        read = SettingsReader("dingtalk", config, DEFAULTS)
        self._secret = read.secret("app_secret", "the robot's AppSecret (requests are signed)")
        read.port()
        read.url("session_webhook_prefix")
        read.number("ack_wait_seconds", positive=True)
        self._settings = read.values
        self._intake.ack_wait = float(self._settings["ack_wait_seconds"])

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Post ``text`` to a conversation through the sessionWebhook of its last message
        (blocking; one line when there is none still valid). DingTalk gives no message id."""
        webhook, until = self._webhooks.get(chat_id, ("", None))
        if not webhook or (until is not None and until <= time.time()):
            raise UserFacingError(
                f"dingtalk: no valid sessionWebhook for {chat_id} (its last message is too old)"
            )

        async def post() -> None:
            for piece in split_text(text, MESSAGE_CHARS):
                await self._post(webhook, piece)

        self._bridge.call(post)
        return None

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a DingTalk conversation (a single chat, or per sender in a group)."""
        kind: ChatType = "group" if chat_type == "group" else "dm"
        return build_session_key("dingtalk", kind, chat_id, user_id, None)

    def create_thread(self, chat_id: str, title: str) -> None:
        """DingTalk robot conversations have no threads: the home conversation is used."""
        return None

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Serve the message receiving URL."""
        import aiohttp

        self.connect(config)
        self._bridge.bind()
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        try:
            self.address = await self._intake.serve(deliver, self._settings, self._receive)
        except UserFacingError:
            await self._http.close()
            raise
        log.info("dingtalk robot messages at %s", self.address)

    async def stop(self) -> None:
        """Stop serving, then post the answers still going out."""
        await self._intake.stop()
        self._bridge.unbind()
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        return await self._intake.receive(request, self._parse)

    def _parse(self, request: web.Request, body: bytes) -> Incoming | None:
        """A robot callback checked (its sign, its sessionWebhook) and read."""
        problem = sign_problem(request.headers, self._secret)
        if problem is not None:
            raise WebhookRefused(401, problem)
        try:
            data = json.loads(body)
        except ValueError:
            raise WebhookRefused(400, "a body that is not JSON") from None
        message = received(data) if isinstance(data, dict) else None
        if message is None:
            return None  # nothing for the agent
        if not message.webhook.startswith(str(self._settings["session_webhook_prefix"])):
            raise WebhookRefused(400, "a sessionWebhook outside session_webhook_prefix")
        chat_id = message.event.chat_id

        def remember_webhook() -> None:
            self._webhooks[chat_id] = (message.webhook, message.webhook_until)

        async def answer(text: str) -> None:
            for piece in split_text(text, MESSAGE_CHARS):
                await self._post(message.webhook, piece)

        return Incoming(message.event, str(message.event.message_id), answer, remember_webhook)

    async def _post(self, webhook: str, text: str) -> None:
        """POST one text message to a sessionWebhook."""
        if self._http is None:
            raise DingTalkError("the dingtalk platform is stopped")
        body = {"msgtype": "text", "text": {"content": text}}
        async with self._http.post(webhook, json=body) as answer:
            data = await answer.json(content_type=None)
        if not isinstance(data, dict) or data.get("errcode") != 0:
            found = data if isinstance(data, dict) else {}
            raise DingTalkError(
                f"{found.get('errmsg') or 'no answer'} (errcode {found.get('errcode')})"
            )
