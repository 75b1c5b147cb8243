"""The ``webhook`` adapter: signed JSON events in over HTTP, the agent's answer back.

Settings (``gateway.platforms.webhook`` in config.yaml):

- ``secret`` (or ``secret_env``, the name of an environment variable holding it) — the shared
  HMAC secret; required.
- ``host`` (``127.0.0.1``), ``port`` (``8644``; ``0`` picks a free one), ``path``
  (``/webhook``).
- ``callback_url`` — when set, a request is answered ``202`` as soon as its event is stored and
  the reply is POSTed there (signed the same way); otherwise the reply is the response.
- ``max_body_bytes`` (65536), ``replay_window_seconds`` (300), ``callback_timeout_seconds`` (30).

Every refusal is one log line: unsigned, badly signed or replayed → 401; a body over the limit
→ 413 (a declared ``Content-Length`` over it before anything is read); a body that does not
arrive within 30 s → 408; malformed JSON or missing fields → 400; the gateway stopping → 503
with ``Retry-After``. No request is
answered 2xx before its event is stored.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    RETRY_AFTER_SECONDS,
    SHUTDOWN_GRACE_SECONDS,
    Attachment,
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

from .signing import SIGNATURE_HEADER, TIMESTAMP_HEADER, SignatureCheck, signed_headers

if TYPE_CHECKING:
    from aiohttp import ClientSession, web

log = logging.getLogger("hermes.gateway.webhook")

CHAT_TYPES: frozenset[str] = frozenset({"dm", "group", "channel", "thread"})
DEFAULTS: Mapping[str, Any] = {
    "host": "127.0.0.1",
    "port": 8644,
    "path": "/webhook",
    "max_body_bytes": 65536,
    "replay_window_seconds": 300,
    "callback_timeout_seconds": 30,
}


class BadEvent(ValueError):
    """A request body that is not a usable event; the message says why."""


def parse_event(body: bytes) -> PlatformEvent:
    """The event a request body describes (JSON: ``chat_id`` and ``text`` required)."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadEvent(f"malformed JSON ({error})") from None
    if not isinstance(data, dict):
        raise BadEvent("the body must be a JSON object")
    chat_id, text = data.get("chat_id"), data.get("text")
    if not isinstance(chat_id, str | int) or isinstance(chat_id, bool) or str(chat_id) == "":
        raise BadEvent("'chat_id' (a string) is required")
    if not isinstance(text, str):
        raise BadEvent("'text' (a string) is required")
    chat_type = data.get("chat_type", "dm")
    if chat_type not in CHAT_TYPES:
        raise BadEvent(f"'chat_type' must be one of {', '.join(sorted(CHAT_TYPES))}")
    attachments = []
    for item in data.get("attachments") or []:
        if not isinstance(item, dict) or not isinstance(item.get("description"), str):
            raise BadEvent("each attachment needs a 'description' string")
        attachments.append(
            Attachment(
                description=item["description"],
                path=_optional(item, "path"),
                media_type=_optional(item, "media_type"),
            )
        )
    kind: ChatType = chat_type
    return PlatformEvent(
        platform="webhook",
        chat_id=str(chat_id),
        text=text,
        chat_type=kind,
        user_id=_optional(data, "user_id"),
        thread_id=_optional(data, "thread_id"),
        message_id=_optional(data, "message_id"),
        attachments=tuple(attachments),
        user_name=_optional(data, "user_name"),
        chat_name=_optional(data, "chat_name"),
    )


def _optional(data: Mapping[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise BadEvent(f"'{name}' must be a string")
    return str(value)


class WebhookAdapter:
    """Receives signed events over HTTP (aiohttp) and answers them."""

    name = "webhook"
    label = "Incoming webhooks"
    short_label = "hook"
    interactive = False
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._runner: web.AppRunner | None = None
        self._client: ClientSession | None = None
        self._check: SignatureCheck | None = None
        self._secret = ""
        self._callbacks: set[asyncio.Future[None]] = set()
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the server starts in :meth:`start`)."""
        settings = {**DEFAULTS, **dict(config)}
        secret = settings.get("secret")
        if not secret and settings.get("secret_env"):
            secret = os.environ.get(str(settings["secret_env"]))
        if not isinstance(secret, str) or not secret:
            raise UserFacingError(
                "gateway.platforms.webhook.secret is not set (or secret_env names an empty "
                "variable): requests are signed with it"
            )
        for name in ("port", "max_body_bytes", "replay_window_seconds"):
            value = settings[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UserFacingError(f"gateway.platforms.webhook.{name} must be a whole number")
        self._secret = secret
        self._settings = settings
        self._check = SignatureCheck(secret, float(settings["replay_window_seconds"]))

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Post a message to ``callback_url`` (blocking; for messages nobody asked for)."""
        import urllib.request

        url = self._settings.get("callback_url")
        if not url:
            raise UserFacingError("the webhook platform can only send with a callback_url")
        body = json.dumps({"chat_id": chat_id, "thread_id": thread_id, "reply": text}).encode()
        headers = {
            "Content-Type": "application/json",
            **signed_headers(self._secret, body, time.time()),
        }
        request = urllib.request.Request(str(url), data=body, headers=headers, method="POST")
        with urllib.request.urlopen(
            request, timeout=float(self._settings["callback_timeout_seconds"])
        ):
            return None

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a webhook conversation."""
        kind: ChatType = chat_type if chat_type in CHAT_TYPES else "dm"  # type: ignore[assignment]
        return build_session_key("webhook", kind, chat_id, user_id, thread_id)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Webhooks have no threads."""
        return None

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Listen on ``host:port`` for signed events."""
        import aiohttp
        from aiohttp import web

        self.connect(config)
        settings = self._settings
        app = web.Application(client_max_size=int(settings["max_body_bytes"]) + 1)
        app["deliver"] = deliver
        app.router.add_post(str(settings["path"]), self._receive)
        runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=SHUTDOWN_GRACE_SECONDS
        )
        await runner.setup()
        site = web.TCPSite(runner, str(settings["host"]), int(settings["port"]))
        try:
            await site.start()
        except OSError as error:
            await runner.cleanup()
            raise UserFacingError(
                f"cannot listen on {settings['host']}:{settings['port']} ({error.strerror or error})"
            ) from None
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self.address = f"http://{host}:{port}{settings['path']}"
        if settings.get("callback_url"):
            timeout = aiohttp.ClientTimeout(total=float(settings["callback_timeout_seconds"]))
            self._client = aiohttp.ClientSession(timeout=timeout)
        log.info("webhook listening at %s", self.address)

    async def stop(self) -> None:
        """Stop listening (answers in progress are finished by aiohttp's graceful close)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._callbacks:
            # Replies already promised to the callback URL are still delivered.
            await asyncio.gather(*list(self._callbacks), return_exceptions=True)
        if self._client is not None:
            await self._client.close()
            self._client = None

    # ------------------------------------------------------------------ one request

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        try:
            body = await read_body(request, int(self._settings["max_body_bytes"]))
        except BodyRefused as refused:
            return self._refuse(request, refused.status, refused.reason)
        assert self._check is not None
        signature = request.headers.get(SIGNATURE_HEADER)
        problem = self._check.problem(
            request.headers.get(TIMESTAMP_HEADER), signature, body, time.time()
        )
        if problem is not None:
            return self._refuse(request, 401, problem)
        try:
            event = parse_event(body)
        except BadEvent as error:
            return self._refuse(request, 400, str(error))
        deliver: Deliver = request.app["deliver"]
        delivery = deliver(event)
        try:
            session_id = await delivery.stored()
        except DeliveryRefused as error:
            self._check.forget(signature or "")
            return self._refuse(
                request, 503, str(error), headers={"Retry-After": str(RETRY_AFTER_SECONDS)}
            )
        if self._client is not None:
            task = asyncio.ensure_future(self._call_back(event, delivery.reply()))
            self._callbacks.add(task)
            task.add_done_callback(self._callbacks.discard)
            return web.json_response({"accepted": True, "session_id": session_id}, status=202)
        try:
            reply = await delivery.reply()
        except DeliveryRefused as error:
            # Stored, then broke off: the event is safe; say what happened.
            return web.json_response({"session_id": session_id, "reply": None, "error": str(error)})
        return web.json_response(_reply_json(reply))

    async def _call_back(self, event: PlatformEvent, pending: Any) -> None:
        try:
            reply: GatewayReply = await pending
        except DeliveryRefused as error:
            reply = GatewayReply(text="", session_id=None, error=str(error))
        payload = {
            "chat_id": event.chat_id,
            "thread_id": event.thread_id,
            "in_reply_to": event.message_id,
            **_reply_json(reply),
        }
        body = json.dumps(payload).encode("utf-8")
        headers = {
            "Content-Type": "application/json",
            **signed_headers(self._secret, body, time.time()),
        }
        assert self._client is not None
        url = str(self._settings["callback_url"])
        try:
            async with self._client.post(url, data=body, headers=headers) as response:
                if response.status >= 300:
                    log.error("webhook callback to %s answered HTTP %d", url, response.status)
        except Exception as error:
            log.error(
                "webhook callback to %s failed: %s",
                url,
                " ".join(str(error).split()) or type(error).__name__,
            )

    def _refuse(
        self,
        request: web.Request,
        status: int,
        reason: str,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> web.StreamResponse:
        from aiohttp import web

        peer = request.remote or "?"
        log.warning("webhook refused a request from %s (HTTP %d): %s", peer, status, reason)
        return web.json_response({"error": reason}, status=status, headers=headers)


def _reply_json(reply: GatewayReply) -> dict[str, Any]:
    return {
        "session_id": reply.session_id,
        "reply": reply.text,
        "error": reply.error,
        "command": reply.command,
    }
