"""The ``feishu`` adapter: a Feishu (or Lark) app bot receiving ``im.message.receive_v1``
through event subscription callbacks over HTTP, replying through the Open API (aiohttp). Its
settings and session keys are in the plugin's README. An event is answered 200 only once it is
stored; Feishu's re-sends of an ``event_id`` already stored are acknowledged, not delivered again.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import ChatType, Deliver, PlatformEvent, UserFacingError, build_session_key
from hermes_hookspecs.adapter_kit import (
    Incoming,
    LoopBridge,
    SettingsReader,
    WebhookIntake,
    split_text,
)

from .events import event_from_message, read_callback
from .open_api import open_api, send_data

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("hermes.gateway.feishu")

MESSAGE_CHARS = 4000
"""Longer answers go out as several replies (a text message may hold far more; this reads)."""
DOMAINS: Mapping[str, str] = {
    "feishu": "https://open.feishu.cn",
    "lark": "https://open.larksuite.com",
}
DEFAULTS: Mapping[str, Any] = {
    "domain": "feishu",
    "host": "127.0.0.1",
    "port": 8647,
    "path": "/feishu/events",
    "ack_wait_seconds": 2.5,
}


class FeishuAdapter:
    """A Feishu / Lark app: the callback URL served over aiohttp, replies through the Open API."""

    name = "feishu"
    label = "Feishu / Lark"
    short_label = "feishu"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._verification = ""
        self._encrypt_key: str | None = None
        self._api = open_api(DOMAINS["feishu"], "", "")
        self._intake = WebhookIntake("feishu", log, again="Feishu sends it again")
        self._bridge = LoopBridge("feishu")
        self.address: str | None = None

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the server starts in :meth:`start`)."""
        read = SettingsReader("feishu", config, DEFAULTS)
        app_id = read.text("app_id", required=True, what="the app's App ID (cli_…)")
        secret = read.secret("app_secret", "the app's App Secret, from the developer console")
        self._verification = read.secret("verification_token", "Events & Callbacks > Encryption")
        self._encrypt_key = read.text("encrypt_key")
        domain = read.text("domain")
        if domain not in DOMAINS:
            raise read.problem("domain", "must be feishu or lark")
        self._api = open_api(read.text("base_url") or DOMAINS[str(domain)], str(app_id), secret)
        read.port()
        read.number("ack_wait_seconds", positive=True)
        self._settings = read.values
        self._intake.ack_wait = float(self._settings["ack_wait_seconds"])

    @property
    def api_base(self) -> str:
        """The Open API root in use (from ``domain``, or ``base_url``)."""
        return self._api.base

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Post ``text`` to a chat (blocking; a thread needs a message to reply to, so
        ``thread_id`` is not used); the last message id."""

        async def post() -> str | None:
            last: str | None = None
            for piece in split_text(text, MESSAGE_CHARS):
                data = await send_data(
                    self._api,
                    "/open-apis/im/v1/messages?receive_id_type=chat_id",
                    {"receive_id": chat_id, "msg_type": "text", "content": _content(piece)},
                )
                last = str(data.get("message_id") or "") or None
            return last

        return self._bridge.call(post)

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a Feishu chat."""
        kind: ChatType = chat_type if chat_type in {"dm", "group", "thread"} else "dm"  # type: ignore[assignment]
        return build_session_key("feishu", kind, chat_id, user_id, thread_id)

    def create_thread(self, chat_id: str, title: str) -> None:
        """Feishu opens a thread only as a reply to a message: the home chat is used."""
        return None

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Ask for a tenant_access_token (refused credentials stop here), then serve."""
        self.connect(config)
        await self._api.open()
        self._bridge.bind()
        try:
            self.address = await self._intake.serve(deliver, self._settings, self._receive)
        except UserFacingError:
            await self._api.close()
            raise
        log.info("feishu event callbacks at %s (Open API %s)", self.address, self._api.base)

    async def stop(self) -> None:
        """Stop serving, then send the answers still going out."""
        await self._intake.stop()
        self._bridge.unbind()
        await self._api.close()

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        return await self._intake.receive(request, self._parse)

    def _parse(self, request: web.Request, body: bytes) -> Incoming | web.StreamResponse | None:
        """A callback checked and read: the URL check answered, a received message taken."""
        from aiohttp import web

        payload = read_callback(body, request.headers, self._verification, self._encrypt_key)
        if payload.get("type") == "url_verification":
            return web.json_response({"challenge": payload.get("challenge")})
        header = payload["header"]
        data = payload.get("event")
        if header.get("event_type") != "im.message.receive_v1" or not isinstance(data, dict):
            return None  # other events: nothing for the agent
        event = event_from_message(data)
        if event is None:
            return None
        return Incoming(event, str(header.get("event_id") or ""), self._replier(event))

    def _replier(self, event: PlatformEvent) -> Callable[[str], Awaitable[None]]:
        """How the answer to ``event`` goes out: replies to its message."""

        async def reply(text: str) -> None:
            if event.message_id is None:
                return
            message = urllib.parse.quote(str(event.message_id), safe="")
            for piece in split_text(text, MESSAGE_CHARS):
                await send_data(
                    self._api,
                    f"/open-apis/im/v1/messages/{message}/reply",
                    {
                        "msg_type": "text",
                        "content": _content(piece),
                        "reply_in_thread": event.thread_id is not None,
                    },
                )

        return reply


def _content(text: str) -> str:
    """A text message's ``content``: the JSON string ``{"text": …}``."""
    return json.dumps({"text": text}, ensure_ascii=False)
