"""The ``dingtalk`` adapter: a DingTalk robot in HTTP callback mode. DingTalk POSTs each message
for the robot to the message receiving URL with ``timestamp`` and ``sign`` headers (checked
against the AppSecret); the answer is POSTed to the message's ``sessionWebhook`` (aiohttp).
Settings and session keys are in the plugin's README. A message is answered 200 only once it is
stored; a re-sent ``msgId`` already stored is acknowledged, not delivered again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
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
    HttpServer,
    LoopBridge,
    RecentIds,
    SettingsReader,
    answer_text,
    one_line,
    split_text,
    start_http_server,
)

from .events import Received, received, sign_problem

if TYPE_CHECKING:
    import aiohttp
    from aiohttp import web

log = logging.getLogger("hermes.gateway.dingtalk")

MESSAGE_CHARS = 4000
"""Longer answers go out as several messages."""
MAX_BODY_BYTES = 1 << 20
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
        self._server: HttpServer | None = None
        self._deliver: Deliver = _not_started
        self._seen = RecentIds(4096)
        self._on_the_way: dict[str, Delivery] = {}
        self._webhooks: dict[str, tuple[str, float | None]] = {}
        self._replies = AnswerTasks()
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
        from aiohttp import web

        self.connect(config)
        self._deliver = deliver
        self._bridge.bind()
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_post(str(self._settings["path"]), self._receive)
        host, port = str(self._settings["host"]), int(self._settings["port"])
        try:
            self._server = await start_http_server(app, host, port)
        except UserFacingError:
            await self._http.close()
            raise
        self.address = f"http://{self._server.host}:{self._server.port}{self._settings['path']}"
        log.info("dingtalk robot messages at %s", self.address)

    async def stop(self) -> None:
        """Stop serving, then post the answers still going out."""
        if self._server is not None:
            await self._server.stop()
            self._server = None
        await self._replies.wait()
        self._bridge.unbind()
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        problem = sign_problem(request.headers, self._secret)
        if problem is not None:
            return self._refuse(request, 401, problem)
        try:
            body = json.loads(await request.read())
        except ValueError:
            return self._refuse(request, 400, "a body that is not JSON")
        message = received(body) if isinstance(body, dict) else None
        if message is None:
            return web.json_response({})  # nothing for the agent
        if not message.webhook.startswith(str(self._settings["session_webhook_prefix"])):
            return self._refuse(request, 400, "a sessionWebhook outside session_webhook_prefix")
        event, message_id = message.event, str(message.event.message_id)
        delivery = self._on_the_way.get(message_id)
        if delivery is None:
            if not self._seen.begin(message_id):
                return web.json_response({})  # a re-send of a message stored before
            delivery = self._on_the_way[message_id] = self._deliver(event)
            self._replies.spawn(self._answer(message, delivery))
        wait = float(self._settings["ack_wait_seconds"])
        try:
            await asyncio.wait_for(delivery.stored(), wait)
        except TimeoutError:
            return self._refuse(request, 503, f"not stored within {wait:g}s")
        except DeliveryRefused as error:
            return self._refuse(request, 503, str(error))
        return web.json_response({})

    async def _answer(self, message: Received, delivery: Delivery) -> None:
        event, message_id = message.event, str(message.event.message_id)
        try:
            await delivery.stored()
        except DeliveryRefused:
            self._on_the_way.pop(message_id, None)
            self._seen.dropped(message_id)
            return  # answered 503: the message may come again
        self._on_the_way.pop(message_id, None)
        self._seen.taken(message_id)
        self._webhooks[event.chat_id] = (message.webhook, message.webhook_until)
        try:
            text = answer_text(await delivery.reply())
        except DeliveryRefused as error:
            log.error("dingtalk: no answer for %s: %s", event.chat_id, error)
            return
        try:
            for piece in split_text(text, MESSAGE_CHARS):
                await self._post(message.webhook, piece)
        except Exception as error:
            log.error("dingtalk: answering in %s failed: %s", event.chat_id, one_line(error))

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

    def _refuse(self, request: web.Request, status: int, reason: str) -> web.StreamResponse:
        from aiohttp import web

        log.warning(
            "dingtalk refused a request from %s (HTTP %d): %s",
            request.remote or "?",
            status,
            reason,
        )
        return web.json_response({"error": reason}, status=status)


def _not_started(event: PlatformEvent) -> Delivery:
    raise DeliveryRefused("the dingtalk platform is not started", stopping=True)
