"""The ``homeassistant`` adapter: Hermes as a Home Assistant conversation agent.

Home Assistant (a ``rest_command``, a script, a custom conversation integration) POSTs what
its conversation pipeline holds — the fields of its ``/api/conversation/process`` request
(``text``, ``conversation_id``, ``language``) and the ``context`` of the call (``id``,
``user_id``) — and gets the agent's answer back in Home Assistant's own conversation-result
shape (``response.speech.plain.speech``, ``conversation_id``).

Settings (``gateway.platforms.homeassistant`` in config.yaml):

- ``token`` (or ``token_env``) — the bearer token Home Assistant sends
  (``Authorization: Bearer …``); required.
- ``host`` (``127.0.0.1``), ``port`` (``8646``; ``0`` picks a free one), ``path``
  (``/api/conversation/process``), ``max_body_bytes`` (65536), ``language`` (``en``).
- ``ha_url``, ``ha_token`` (or ``ha_token_env``: a long-lived access token) and
  ``notify_target`` (``mobile_app_my_phone``): only for sending without being asked (a
  handoff), through ``POST <ha_url>/api/services/notify/<notify_target>``.

A ``conversation_id`` is one session: a request without one starts a new conversation (its id is
in the answer), a request with one goes on with it. ``context.user_id`` is the speaker;
``context.id`` identifies the call, so a call Home Assistant makes again is stored once.
"""

from __future__ import annotations

import hmac
import json
import logging
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    RETRY_AFTER_SECONDS,
    BodyRefused,
    ChatType,
    Deliver,
    DeliveryRefused,
    GatewayReply,
    PlatformEvent,
    UserFacingError,
    build_session_key,
    read_body,
)
from hermes_hookspecs.adapter_kit import HttpServer, SettingsReader, one_line, start_http_server

if TYPE_CHECKING:
    from aiohttp import web

log = logging.getLogger("hermes.gateway.homeassistant")

DEFAULTS: Mapping[str, Any] = {
    "host": "127.0.0.1",
    "port": 8646,
    "path": "/api/conversation/process",
    "max_body_bytes": 65536,
    "language": "en",
    "notify_timeout_seconds": 30,
}


class BadRequest(ValueError):
    """A request body that is not a conversation input; the message says why."""


def parse_input(body: bytes, language: str) -> tuple[PlatformEvent, str]:
    """The event a request describes, and the language to answer in."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadRequest(f"malformed JSON ({error})") from None
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        raise BadRequest("'text' (a non-empty string) is required")
    context = data.get("context") or {}
    if not isinstance(context, dict):
        raise BadRequest("'context' must be an object")
    conversation = _string(data, "conversation_id") or uuid.uuid4().hex
    event = PlatformEvent(
        platform="homeassistant",
        chat_id=conversation,
        text=text,
        chat_type="dm",
        user_id=_string(context, "user_id", "context.user_id"),
        message_id=_string(context, "id", "context.id"),
    )
    return event, _string(data, "language") or language


def _string(data: Mapping[str, Any], key: str, name: str = "") -> str | None:
    value = data.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadRequest(f"'{name or key}' must be a string")
    return value


def conversation_result(
    conversation_id: str, language: str, speech: str, *, failed: bool = False
) -> dict[str, Any]:
    """Home Assistant's conversation-result JSON (what ``/api/conversation/process`` answers)."""
    return {
        "response": {
            "speech": {"plain": {"speech": speech, "extra_data": None}},
            "card": {},
            "language": language,
            "response_type": "error" if failed else "action_done",
            "data": {"code": "unknown"} if failed else {"targets": [], "success": [], "failed": []},
        },
        "conversation_id": conversation_id,
        "continue_conversation": False,
    }


class HomeAssistantAdapter:
    """An HTTP endpoint Home Assistant's conversation calls go to (aiohttp)."""

    name = "homeassistant"
    label = "Home Assistant"
    short_label = "hass"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._token = ""
        self._server: HttpServer | None = None
        self._deliver: Deliver | None = None
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the endpoint starts in :meth:`start`)."""
        read = SettingsReader("homeassistant", config, DEFAULTS)
        self._token = read.secret("token", "the bearer token Home Assistant sends")
        read.port()
        read.number("max_body_bytes", whole=True, positive=True)
        read.number("notify_timeout_seconds", positive=True)
        for name in ("host", "path", "language", "ha_url", "notify_target"):
            read.text(name)
        read.values["ha_token"] = read.text("ha_token")
        self._settings = read.values

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Notify through Home Assistant's ``notify.<notify_target>`` action (blocking)."""
        settings = self._settings
        url, token, target = (settings.get(k) for k in ("ha_url", "ha_token", "notify_target"))
        if not (url and token and target):
            raise UserFacingError(
                "gateway.platforms.homeassistant needs ha_url, ha_token and notify_target to send"
            )
        body = json.dumps({"message": text, "data": {"conversation_id": chat_id}}).encode()
        request = urllib.request.Request(
            f"{str(url).rstrip('/')}/api/services/notify/{target}",
            data=body,
            method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=float(settings["notify_timeout_seconds"])):
                return None
        except (urllib.error.URLError, OSError) as error:
            raise UserFacingError(f"Home Assistant notify failed: {one_line(error)}") from None

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a Home Assistant conversation (one per ``conversation_id``)."""
        kind: ChatType = chat_type if chat_type in {"dm", "group", "channel", "thread"} else "dm"  # type: ignore[assignment]
        return build_session_key("homeassistant", kind, chat_id, user_id, thread_id)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Home Assistant conversations have no threads."""
        return None

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Listen on ``host:port`` for conversation calls."""
        from aiohttp import web

        self.connect(config)
        settings = self._settings
        app = web.Application(client_max_size=int(settings["max_body_bytes"]) + 1)
        self._deliver = deliver
        app.router.add_post(str(settings["path"]), self._receive)
        self._server = await start_http_server(app, str(settings["host"]), int(settings["port"]))
        self.address = f"http://{self._server.host}:{self._server.port}{settings['path']}"
        log.info("homeassistant listening at %s", self.address)

    async def stop(self) -> None:
        """Stop listening (answers in progress are finished by aiohttp's graceful close)."""
        if self._server is not None:
            await self._server.stop()
            self._server = None

    # ------------------------------------------------------------------ one request

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        given = request.headers.get("Authorization", "").encode()
        if not hmac.compare_digest(given, f"Bearer {self._token}".encode()):
            return _refuse(request, 401, "missing or wrong bearer token")
        try:
            body = await read_body(request, int(self._settings["max_body_bytes"]))
            event, language = parse_input(body, str(self._settings["language"]))
        except BodyRefused as refused:
            return _refuse(request, refused.status, refused.reason)
        except BadRequest as error:
            return _refuse(request, 400, str(error))
        assert self._deliver is not None
        delivery = self._deliver(event)
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
            return _refuse(request, 503, str(error), headers=headers)
        try:
            reply: GatewayReply = await delivery.reply()
        except DeliveryRefused as error:
            reply = GatewayReply(text="", session_id=None, error=str(error))
        failed = not reply.text.strip() and reply.error is not None
        speech = f"The agent could not answer: {reply.error}" if failed else reply.text
        result = conversation_result(event.chat_id, language, speech, failed=failed)
        return web.json_response(result)


def _refuse(
    request: web.Request, status: int, reason: str, *, headers: Mapping[str, str] | None = None
) -> web.StreamResponse:
    from aiohttp import web

    log.warning(
        "homeassistant refused a request from %s (HTTP %d): %s", request.remote, status, reason
    )
    return web.json_response({"message": reason}, status=status, headers=headers)
