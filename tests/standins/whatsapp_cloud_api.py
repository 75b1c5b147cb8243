"""A STAND-IN for the WhatsApp Business Cloud API (Meta's Graph API and its webhooks), for
tests only.

It is not Meta: it is written from the public Cloud API documentation
(https://developers.facebook.com/docs/whatsapp/cloud-api — "Webhooks", "Messages",
"Get Started") for what the ``hermes-platform-whatsapp`` adapter uses. It binds 127.0.0.1 only.

The Graph API side, under ``/<version>/`` with ``Authorization: Bearer <token>``:

- ``GET /<version>/<phone_number_id>`` — the number (``id``, ``display_phone_number``,
  ``verified_name``);
- ``POST /<version>/<phone_number_id>/messages`` — a text message (``messaging_product``
  ``whatsapp``, ``recipient_type`` ``individual`` or ``group``, ``to``, ``type`` ``text``,
  ``text.body`` of 1–4096 characters, optional ``context.message_id``): answers
  ``{"messaging_product", "contacts": [{"input", "wa_id"}], "messages": [{"id": "wamid…"}]}``;
  or ``{"status": "read", "message_id"}``: ``{"success": true}``.

Errors are ``{"error": {"message", "type", "code", "fbtrace_id"}}``: a wrong token is 401
``OAuthException`` code 190; an unknown number 400 code 100; a bad message 400 code 100 (or
131009 for a text over 4096 characters).

The webhook side plays Meta delivering notifications: :meth:`WhatsAppStandIn.user_says` builds
a ``whatsapp_business_account`` notification (``entry[].changes[].value`` with ``metadata``,
``contacts`` — ``profile.name`` and ``wa_id`` — and ``messages`` — ``from``, ``id``,
``timestamp``, ``type``, ``text.body``, and ``group_id`` in a group) and POSTs it to the
webhook URL signed with ``X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body with the app
secret>``. A notification not answered 200 stays pending, as Meta retries it
(:meth:`retry_pending`).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from aiohttp import web

from standins.callbacks import wait_for_count
from standins.threaded import ThreadedStandIn

TOKEN = "EAAG-standin-access-token"
APP_SECRET = "standin-app-secret"
VERIFY_TOKEN = "standin-verify-token"
PHONE_NUMBER_ID = "106540352242922"
DISPLAY_NUMBER = "+1 555-0100"


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    """The ``X-Hub-Signature-256`` value Meta sends with ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WhatsAppStandIn(ThreadedStandIn):
    """The stand-in Graph API (aiohttp on its own thread) and webhook sender."""

    thread_name = "whatsapp-standin"

    def __init__(self) -> None:
        super().__init__()
        self.token, self.app_secret, self.verify_token = TOKEN, APP_SECRET, VERIFY_TOKEN
        self.phone_number_id = PHONE_NUMBER_ID
        self.webhook_url: str | None = None
        """Where notifications are POSTed (the adapter's address, set by the test)."""
        self.sent: list[dict[str, Any]] = []
        """Every message the business sent (the request bodies, in order)."""
        self.read: list[str] = []
        """The message ids marked read."""
        self.pending: list[bytes] = []
        """Notification bodies not acknowledged with 200 yet (Meta would retry them)."""
        self.deliveries: list[tuple[str, int]] = []
        """Every webhook POST: (message id, HTTP status answered; 0 when it failed)."""
        self._ids = itertools.count(1)
        self._lock = threading.Condition()

    # ------------------------------------------------------------------ test side

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def settings(self, **extra: Any) -> dict[str, Any]:
        """``gateway.platforms.whatsapp`` pointing at this stand-in, on a free port."""
        return {"access_token": self.token, "app_secret": self.app_secret,
                "verify_token": self.verify_token, "phone_number_id": self.phone_number_id,
                "base_url": self.base_url, "port": 0, **extra}  # fmt: skip

    def notification(
        self, wa_id: str, text: str, *, name: str = "Alice", sender: str | None = None,
        group_id: str | None = None, kind: str = "text", content: dict[str, Any] | None = None,
    ) -> tuple[str, bytes]:  # fmt: skip
        """A new message notification: (its ``wamid``, the JSON body Meta would POST).
        ``sender`` is the ``from`` number when it differs from the ``wa_id``; ``content`` the
        object under the message's ``type`` (default: a text body, or a captioned image)."""
        message_id = f"wamid.STANDIN{next(self._ids):06d}"
        message: dict[str, Any] = {"from": sender or wa_id, "id": message_id,
                                   "timestamp": str(int(time.time())), "type": kind}  # fmt: skip
        default = {"body": text} if kind == "text" else {"caption": text, "id": "media1",
                                                         "mime_type": "image/jpeg"}  # fmt: skip
        message[kind] = content if content is not None else default
        if group_id is not None:
            message["group_id"] = group_id
        value = {
            "messaging_product": "whatsapp",
            "metadata": {
                "display_phone_number": "15550100",
                "phone_number_id": self.phone_number_id,
            },
            "contacts": [{"profile": {"name": name}, "wa_id": wa_id}],
            "messages": [message],
        }
        payload = {"object": "whatsapp_business_account",
                   "entry": [{"id": "WABA1", "changes": [{"value": value, "field": "messages"}]}]}  # fmt: skip
        return message_id, json.dumps(payload).encode()

    def user_says(self, wa_id: str, text: str, **fields: Any) -> tuple[str, int]:
        """``wa_id`` writes ``text``: the notification POSTed, signed; (wamid, HTTP status)."""
        message_id, body = self.notification(wa_id, text, **fields)
        return message_id, self.post(body)

    def post(self, body: bytes, *, signature: str | None = None, timeout: float = 60.0) -> int:
        """POST a notification body to the webhook (signed with the app secret unless
        ``signature`` is given); the HTTP status (0: no answer). Kept pending unless 200."""
        assert self.webhook_url is not None, "set webhook_url to the adapter's address first"
        request = urllib.request.Request(self.webhook_url, data=body, method="POST", headers={
            "Content-Type": "application/json",
            "X-Hub-Signature-256": sign(body, self.app_secret) if signature is None else signature,
        })  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status = response.status
        except urllib.error.HTTPError as error:
            status = error.code
        except OSError:
            status = 0
        message_ids = [m["id"] for e in json.loads(body).get("entry", [])
                       for c in e["changes"] for m in c["value"].get("messages", [])]  # fmt: skip
        with self._lock:
            self.deliveries.extend((message_id, status) for message_id in message_ids)
            if status != 200 and body not in self.pending:
                self.pending.append(body)
            elif status == 200 and body in self.pending:
                self.pending.remove(body)
        return status

    def retry_pending(self) -> list[int]:
        """Send every pending notification again, as Meta retries; their statuses."""
        with self._lock:
            bodies = list(self.pending)
        return [self.post(body) for body in bodies]

    def wait_for_sent(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until the business has sent ``count`` messages; all it sent so far."""
        return wait_for_count(self._lock, self.sent, count, timeout)

    # ------------------------------------------------------------------ server side

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/{version}/{number}", self._number)
        app.router.add_post("/{version}/{number}/messages", self._messages)
        await self._serve_app(app)

    def _problem(self, request: web.Request) -> web.Response | None:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return _error(401, "Invalid OAuth access token - Cannot parse access token",
                          "OAuthException", 190)  # fmt: skip
        if request.match_info["number"] != self.phone_number_id:
            return _error(400, f"Unsupported request - object with ID "
                          f"'{request.match_info['number']}' does not exist", "GraphMethodException", 100)  # fmt: skip
        return None

    async def _number(self, request: web.Request) -> web.Response:
        problem = self._problem(request)
        if problem is not None:
            return problem
        return web.json_response({"display_phone_number": DISPLAY_NUMBER,
                                  "verified_name": "Hermes Stand-in", "id": self.phone_number_id})  # fmt: skip

    async def _messages(self, request: web.Request) -> web.Response:
        problem = self._problem(request)
        if problem is not None:
            return problem
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "Invalid JSON", "OAuthException", 100)
        if not isinstance(body, dict) or body.get("messaging_product") != "whatsapp":
            return _error(
                400, "(#100) The parameter messaging_product is required.", "OAuthException", 100
            )
        if body.get("status") == "read":
            with self._lock:
                self.read.append(str(body.get("message_id")))
            return web.json_response({"success": True})
        text = (body.get("text") or {}).get("body") if isinstance(body.get("text"), dict) else None
        if (
            body.get("type") != "text"
            or not isinstance(text, str)
            or not text
            or not body.get("to")
        ):
            return _error(400, "(#100) Invalid parameter", "OAuthException", 100)
        if len(text) > 4096:
            return _error(400, "(#131009) Parameter value is not valid: text body too long",
                          "OAuthException", 131009)  # fmt: skip
        if body.get("recipient_type", "individual") not in {"individual", "group"}:
            return _error(400, "(#100) Invalid parameter recipient_type", "OAuthException", 100)
        message_id = f"wamid.OUT{next(self._ids):06d}"
        with self._lock:
            self.sent.append({**body, "id": message_id})
            self._lock.notify_all()
        return web.json_response({"messaging_product": "whatsapp",
                                  "contacts": [{"input": body["to"], "wa_id": body["to"]}],
                                  "messages": [{"id": message_id}]})  # fmt: skip


def _error(status: int, message: str, kind: str, code: int) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": kind, "code": code, "fbtrace_id": "AbCdStandIn"}},
        status=status,
    )
