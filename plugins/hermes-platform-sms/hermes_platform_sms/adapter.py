"""The ``sms`` adapter: Twilio posts each incoming SMS to a webhook here; the agent's answer
goes back through Twilio's REST API (the ``twilio`` SDK), from the number it was sent to.

Settings (``gateway.platforms.sms`` in config.yaml):

- ``account_sid`` and ``auth_token`` (or ``account_sid_env`` / ``auth_token_env``, the names
  of environment variables holding them) — from the Twilio console; required.
- ``host`` (``127.0.0.1``), ``port`` (``8645``; ``0`` picks a free one), ``path`` (``/sms``).
- ``public_url`` — the webhook URL as configured in Twilio (through a proxy or a tunnel); the
  ``X-Twilio-Signature`` is checked against it. Default: the URL the request came to.
- ``from_number`` — the number ``send`` (a ``/handoff``) sends from; answers to a message go
  out from the number it was sent to.
- ``api_base_url`` (``https://api.twilio.com``) — Twilio's REST API (or a stand-in).
- ``max_body_bytes`` (65536).

One session per sender: the key is the sender's number in E.164. A request without a valid
signature is refused (403) with one log line; no request is answered 200 before its message is
stored (the gateway stopping: 503). The answer is sent with the REST API, not as TwiML in the
webhook's response: a turn may take longer than Twilio waits for a webhook (15 s). Answers over
1600 characters (an SMS's longest) go out as several messages.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    RETRY_AFTER_SECONDS,
    BodyRefused,
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
    SettingsReader,
    answer_text,
    start_http_server,
)

from .form import event_from_form, parse_form
from .numbers import canonical_number
from .rest import check_account, rest_client, said, send_sms, send_sms_retrying

if TYPE_CHECKING:
    from aiohttp import web
    from twilio.rest import Client

log = logging.getLogger("hermes.gateway.sms")

SIGNATURE_HEADER = "X-Twilio-Signature"
EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
"""The webhook's answer: nothing to send from there (the answer goes out by the REST API)."""
DEFAULTS: Mapping[str, Any] = {
    "host": "127.0.0.1",
    "port": 8645,
    "path": "/sms",
    "api_base_url": "https://api.twilio.com",
    "max_body_bytes": 65536,
}


class SmsAdapter:
    """SMS through a Twilio phone number: webhooks in (aiohttp), REST API out (twilio)."""

    name = "sms"
    label = "SMS via Twilio"
    short_label = "sms"
    interactive = True
    gateway = True
    supports_threads = False
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._sid = self._token = ""
        self._client: Client | None = None
        self._server: HttpServer | None = None
        self._replies = AnswerTasks()
        self._deliver: Deliver | None = None
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked) and make the REST client (no request yet)."""
        read = SettingsReader("sms", config, DEFAULTS)
        self._sid = read.secret("account_sid", "the Account SID from the Twilio console")
        self._token = read.secret("auth_token", "the Auth Token from the Twilio console")
        read.port()
        read.number("max_body_bytes", whole=True, positive=True)
        base_url = read.url("api_base_url")
        read.text("public_url")
        read.text("from_number")
        self._settings = read.values
        self._client = rest_client(self._sid, self._token, base_url)

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to a number from ``from_number`` (blocking); the last message's sid."""
        sender = self._settings.get("from_number")
        if self._client is None or not sender:
            raise UserFacingError("gateway.platforms.sms.from_number is not set: it sends from it")
        return send_sms(self._client, canonical_number(chat_id), str(sender), text)

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """One session per sender: ``agent:main:sms:dm:<E.164 number>``."""
        return build_session_key("sms", "dm", canonical_number(chat_id))

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """SMS has no threads."""
        return None

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Check the credentials (fetch the account), then listen for Twilio's webhooks."""
        from aiohttp import web

        self.connect(config)
        assert self._client is not None
        base_url = str(self._settings["api_base_url"])
        await asyncio.to_thread(check_account, self._client, self._sid, base_url)
        settings = self._settings
        app = web.Application(client_max_size=int(settings["max_body_bytes"]) + 1)
        self._deliver = deliver
        app.router.add_post(str(settings["path"]), self._receive)
        server = await start_http_server(app, str(settings["host"]), int(settings["port"]))
        self._server = server
        self.address = f"http://{server.host}:{server.port}{settings['path']}"
        log.info("sms webhook listening at %s", self.address)

    async def stop(self) -> None:
        """Stop listening, then send the answers still going out."""
        if self._server is not None:
            await self._server.stop()
            self._server = None
        await self._replies.wait()

    # ------------------------------------------------------------------ one webhook

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web
        from twilio.request_validator import RequestValidator

        try:
            body = await read_body(request, int(self._settings["max_body_bytes"]))
            form = parse_form(body)
        except BodyRefused as refused:
            return self._refuse(request, refused.status, refused.reason)
        except ValueError:
            return self._refuse(request, 400, "the body is not a form")
        url = self._settings.get("public_url") or str(request.url)
        signature = request.headers.get(SIGNATURE_HEADER, "")
        if not signature or not RequestValidator(self._token).validate(url, form, signature):
            return self._refuse(request, 403, f"missing or wrong {SIGNATURE_HEADER}")
        try:
            event = event_from_form(form)
        except ValueError as error:
            return self._refuse(request, 400, str(error))
        assert self._deliver is not None
        delivery = self._deliver(event)
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            return self._refuse(request, 503, str(error), retry=True)
        self._replies.spawn(self._answer(event, form.first("To"), delivery))
        return web.Response(text=EMPTY_TWIML, content_type="text/xml")

    async def _answer(self, event: PlatformEvent, our_number: str, delivery: Delivery) -> None:
        """Send the answer (or a command's) back to the sender, from the number it came to."""
        try:
            text = answer_text(await delivery.reply())
        except DeliveryRefused as error:
            log.error("sms: no answer for %s: %s", event.chat_id, error)
            return
        sender = our_number or self._settings.get("from_number")
        if not text or self._client is None or not sender:
            return
        try:
            await send_sms_retrying(self._client, event.chat_id, str(sender), text, log)
        except Exception as error:
            log.error("sms: sending to %s failed: %s", event.chat_id, said(error))

    def _refuse(
        self, request: web.Request, status: int, reason: str, *, retry: bool = False
    ) -> web.StreamResponse:
        from aiohttp import web

        peer = request.remote or "?"
        log.warning("sms refused a request from %s (HTTP %d): %s", peer, status, reason)
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if retry else None
        return web.Response(status=status, text=reason, headers=headers)
