"""The ``qqbot`` adapter: a QQ official bot receiving webhook events and answering through the
QQ Bot open platform's HTTP API.

Settings (``gateway.platforms.qqbot`` in config.yaml):

- ``app_id`` and ``secret`` (or ``secret_env``) — the bot's AppID and AppSecret from
  q.qq.com; both required.
- ``host`` (``127.0.0.1``), ``port`` (``8647``; ``0`` picks a free one), ``path`` (``/qqbot``):
  where QQ's callbacks arrive (the callback address set on q.qq.com).
- ``api_base`` (``https://api.sgroup.qq.com``; ``https://sandbox.api.sgroup.qq.com`` for the
  sandbox), ``token_url`` (``https://bots.qq.com/app/getAppAccessToken``), ``max_body_bytes``.

Every callback is checked against its Ed25519 signature (401 when it does not verify); the
callback-address check (op 13) is answered signed. A private message (``C2C_MESSAGE_CREATE``)
is a DM keyed by the user's openid; an @-message in a group (``GROUP_AT_MESSAGE_CREATE``) is
the group's openid, one session per member. An event is acknowledged (op 12) only once it is
stored — else 503, and QQ sends it again; an event id QQ delivers twice is taken once. The
answer is a passive reply (``msg_id``, ``msg_seq``) to ``/v2/users/{openid}/messages`` or
``/v2/groups/{group_openid}/messages``, in pieces of at most 2,000 characters.
"""

from __future__ import annotations

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
    read_body,
)
from hermes_hookspecs.adapter_kit import (
    AnswerTasks,
    HttpServer,
    LoopBridge,
    RecentIds,
    SettingsReader,
    answer_text,
    one_line,
    start_http_server,
)

from .events import event_from_payload
from .signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, private_key, sign, verified

if TYPE_CHECKING:
    from aiohttp import web
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from .api import QQApi

log = logging.getLogger("hermes.gateway.qqbot")

DEFAULTS: Mapping[str, Any] = {
    "host": "127.0.0.1",
    "port": 8647,
    "path": "/qqbot",
    "api_base": "https://api.sgroup.qq.com",
    "token_url": "https://bots.qq.com/app/getAppAccessToken",
    "max_body_bytes": 65536,
}
ACK = {"op": 12, "d": 0}


class QQBotAdapter:
    """A QQ official bot: webhook events in (aiohttp), HTTP API replies out."""

    name = "qqbot"
    label = "QQ Bot"
    short_label = "qq"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._app_id = self._secret = ""
        self._key: Ed25519PrivateKey | None = None
        self._deliver: Deliver | None = None
        self._server: HttpServer | None = None
        self._api: QQApi | None = None
        self._bridge = LoopBridge("qqbot")
        self._recent = RecentIds()
        self._storing: set[str] = set()
        self._replies = AnswerTasks()
        self._groups: set[str] = set()
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the endpoint starts in :meth:`start`)."""
        read = SettingsReader("qqbot", config, DEFAULTS)
        self._app_id = str(read.text("app_id", required=True, what="the bot's AppID (q.qq.com)"))
        self._secret = read.secret("secret", "the bot's AppSecret (q.qq.com)")
        read.port()
        read.number("max_body_bytes", whole=True, positive=True)
        for name in ("api_base", "token_url", "host", "path"):
            read.url(name)
        self._settings = read.values

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to a user or group openid, unasked (an active message; blocking)."""
        kind: ChatType = "group" if chat_id in self._groups else "dm"
        api = self._api
        if api is None:
            raise UserFacingError("the qqbot platform is not running (start it first)")
        self._bridge.call(lambda: api.post_text(kind, chat_id, text, None))
        return None

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a QQ conversation (a user's openid, or a group's openid and member)."""
        kind: ChatType = chat_type if chat_type in {"dm", "group", "channel", "thread"} else "dm"  # type: ignore[assignment]
        return build_session_key("qqbot", kind, chat_id, user_id, thread_id)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """QQ chats have no threads."""
        return None

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Check the credentials (an app access token), then listen for callbacks."""
        from aiohttp import web

        from .api import QQApi

        self.connect(config)
        settings = self._settings
        self._key, self._deliver = private_key(self._secret), deliver
        self._api = QQApi(self._app_id, self._secret, settings["api_base"], settings["token_url"])
        try:
            await self._api.access_token()
            app = web.Application(client_max_size=int(settings["max_body_bytes"]) + 1)
            app.router.add_post(str(settings["path"]), self._receive)
            self._server = await start_http_server(app, str(settings["host"]), settings["port"])
        except BaseException:
            await self._api.close()
            raise
        self._bridge.bind()
        self.address = f"http://{self._server.host}:{self._server.port}{settings['path']}"
        log.info("qqbot listening at %s", self.address)

    async def stop(self) -> None:
        """Stop listening; the answers going out are sent first."""
        if self._server is not None:
            await self._server.stop()
            self._server = None
        await self._replies.wait()
        self._bridge.unbind()
        if self._api is not None:
            await self._api.close()
            self._api = None

    # ------------------------------------------------------------------ callbacks

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        try:
            body = await read_body(request, int(self._settings["max_body_bytes"]))
        except BodyRefused as refused:
            return _refuse(request, refused.status, refused.reason)
        assert self._key is not None and self._deliver is not None
        headers = request.headers
        if not verified(
            self._key, headers.get(TIMESTAMP_HEADER), headers.get(SIGNATURE_HEADER), body
        ):
            return _refuse(request, 401, "the Ed25519 signature does not verify")
        try:
            payload = json.loads(body)
        except (UnicodeDecodeError, ValueError) as error:
            return _refuse(request, 400, f"malformed JSON ({one_line(error)})")
        if not isinstance(payload, dict):
            return _refuse(request, 400, "the body must be a JSON object")
        data = payload.get("d")
        if payload.get("op") == 13 and isinstance(data, dict):
            plain, stamp = str(data.get("plain_token", "")), str(data.get("event_ts", ""))
            signature = sign(self._key, (stamp + plain).encode())
            return web.json_response({"plain_token": plain, "signature": signature})
        event = event_from_payload(payload) if payload.get("op") == 0 else None
        if event is None or event.message_id is None:
            return web.json_response(ACK)
        event_id = str(payload.get("id") or event.message_id)
        retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        if event_id in self._storing:  # the first copy is not stored yet: not acknowledged
            return _refuse(request, 503, f"event {event_id} is being stored", headers=retry)
        if not self._recent.begin(event_id):
            log.info("qqbot: event %s came again; taken once", event_id)
            return web.json_response(ACK)
        delivery = self._deliver(event)
        self._storing.add(event_id)
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            self._recent.dropped(event_id)
            return _refuse(request, 503, str(error), headers=retry)
        finally:
            self._storing.discard(event_id)
        self._recent.taken(event_id)
        if event.chat_type == "group":
            self._groups.add(event.chat_id)
        self._replies.spawn(self._answer(event, delivery))
        return web.json_response(ACK)

    async def _answer(self, event: PlatformEvent, delivery: Delivery) -> None:
        try:
            text = answer_text(await delivery.reply())
        except DeliveryRefused:
            return
        assert self._api is not None
        try:
            await self._api.post_text(event.chat_type, event.chat_id, text, event.message_id)
        except Exception as error:
            log.error("qqbot: the answer to %s was not sent: %s", event.chat_id, one_line(error))


def _refuse(
    request: web.Request, status: int, reason: str, *, headers: Mapping[str, str] | None = None
) -> web.StreamResponse:
    from aiohttp import web

    log.warning("qqbot refused a request from %s (HTTP %d): %s", request.remote, status, reason)
    return web.json_response({"error": reason}, status=status, headers=headers)
