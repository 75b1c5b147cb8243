"""A STAND-IN for Twilio Programmable Messaging, for tests only.

It is not Twilio: it is written from Twilio's public documentation (the REST API's Message and
Account resources, and "Webhooks security" for incoming-message webhooks) for what the
``hermes-platform-sms`` adapter uses. It binds 127.0.0.1 only.

Its REST side, like ``https://api.twilio.com`` (HTTP Basic auth: the Account SID and the Auth
Token; a wrong pair is a 401 with Twilio's error 20003):

- ``GET /2010-04-01/Accounts/{AccountSid}.json`` — the account;
- ``POST /2010-04-01/Accounts/{AccountSid}/Messages.json`` (form: ``To``, ``From``, ``Body``)
  — the new Message, ``201`` with ``status: queued``; a ``Body`` over 1600 characters is a
  400 with error 21617, a missing ``To``/``From``/``Body`` a 400 with error 21604/21603/21602.

Errors are JSON ``{"code", "message", "more_info", "status"}``. :meth:`TwilioStandIn.fail`
makes the next message requests answer an error (a 429 or a 500, say).

Its phone side: :meth:`TwilioStandIn.text_in` posts an incoming SMS to a webhook URL as Twilio
does — a form (``MessageSid``, ``AccountSid``, ``From``, ``To``, ``Body``, ``NumMedia``…)
signed in ``X-Twilio-Signature``: base64 of the HMAC-SHA1, keyed by the Auth Token, of the
URL followed by each parameter's name and value, sorted by name.

In a test::

    with TwilioStandIn() as twilio:
        ... point the adapter at twilio.base_url (api_base_url) with twilio.account_sid ...
        status, _ = twilio.text_in(webhook_url, "+14155550100", "hello")
        twilio.wait_for_sent(1)          # the messages sent through the REST API, as dicts
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from standins.callbacks import wait_for_count

from .threaded import ThreadedStandIn

ACCOUNT_SID = "AC" + "5" * 32
AUTH_TOKEN = "standin-auth-token-0123456789abcd"
NUMBER = "+15005550006"
MAX_BODY = 1600


def twilio_signature(auth_token: str, url: str, params: Mapping[str, str]) -> str:
    """``X-Twilio-Signature`` of a webhook POST of ``params`` to ``url``."""
    signed = url + "".join(name + params[name] for name in sorted(params))
    digest = hmac.new(auth_token.encode(), signed.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def _error(status: int, code: int, message: str) -> web.Response:
    return web.json_response(
        {
            "code": code,
            "message": message,
            "more_info": f"https://www.twilio.com/docs/errors/{code}",
            "status": status,
        },
        status=status,
    )


class TwilioStandIn(ThreadedStandIn):
    """Twilio's REST API for messages, and phones texting a webhook."""

    thread_name = "twilio-standin"

    def __init__(
        self, account_sid: str = ACCOUNT_SID, auth_token: str = AUTH_TOKEN, number: str = NUMBER
    ) -> None:
        super().__init__()
        self.account_sid = account_sid
        self.auth_token = auth_token
        self.number = number
        self.sent: list[dict[str, Any]] = []
        self._failures: list[tuple[int, int, str]] = []
        self._condition = threading.Condition()
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        """What the adapter's ``api_base_url`` is set to."""
        return f"http://127.0.0.1:{self._port}"

    def fail(self, status: int, times: int = 1, *, code: int = 20500, message: str = "") -> None:
        """The next ``times`` message requests get HTTP ``status`` (Twilio ``code``)."""
        with self._condition:
            self._failures.extend([(status, code, message or f"stand-in error {status}")] * times)

    def wait_for_sent(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until ``count`` messages were sent; all of them, in order."""
        return wait_for_count(self._condition, self.sent, count, timeout)

    def text_in(
        self,
        webhook_url: str,
        sender: str,
        body: str,
        *,
        message_sid: str | None = None,
        signature: str | None = None,
        extra: Mapping[str, str] | None = None,
    ) -> tuple[int, str]:
        """A phone at ``sender`` texts ``body`` to our number: the webhook POST Twilio makes,
        signed (or with ``signature``); the webhook's (status, body)."""
        params = {
            "MessageSid": message_sid or f"SM{next(self._ids):032x}",
            "AccountSid": self.account_sid,
            "From": sender,
            "To": self.number,
            "Body": body,
            "NumMedia": "0",
            "NumSegments": "1",
            **(extra or {}),
        }
        data = urllib.parse.urlencode(params).encode()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Twilio-Signature": signature
            if signature is not None
            else twilio_signature(self.auth_token, webhook_url, params),
        }
        request = urllib.request.Request(webhook_url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    # ------------------------------------------------------------------ the REST API

    def _authorised(self, request: web.Request, account_sid: str) -> bool:
        expected = base64.b64encode(f"{self.account_sid}:{self.auth_token}".encode()).decode()
        given = request.headers.get("Authorization", "")
        return account_sid == self.account_sid and hmac.compare_digest(given, f"Basic {expected}")

    async def _account(self, request: web.Request) -> web.Response:
        sid = request.match_info["sid"]
        if not self._authorised(request, sid):
            return _error(401, 20003, "Authenticate")
        return web.json_response(
            {"sid": sid, "friendly_name": "Stand-in account", "status": "active", "type": "Full"}
        )

    async def _message(self, request: web.Request) -> web.Response:
        sid = request.match_info["sid"]
        if not self._authorised(request, sid):
            return _error(401, 20003, "Authenticate")
        form = await request.post()
        to, sender, body = (str(form.get(name, "")) for name in ("To", "From", "Body"))
        with self._condition:
            if self._failures:
                status, code, message = self._failures.pop(0)
                return _error(status, code, message)
        if not to:
            return _error(400, 21604, "A 'To' phone number is required.")
        if not sender:
            return _error(400, 21603, "A 'From' phone number is required.")
        if not body:
            return _error(400, 21602, "Message body is required.")
        if len(body) > MAX_BODY:
            return _error(
                400, 21617, "The concatenated message body exceeds the 1600 character limit."
            )
        message = {
            "sid": f"SM{next(self._ids):032x}",
            "account_sid": sid,
            "to": to,
            "from": sender,
            "body": body,
            "status": "queued",
            "direction": "outbound-api",
            "num_segments": str(-(-len(body) // 153)),
            "uri": f"/2010-04-01/Accounts/{sid}/Messages.json",
        }
        with self._condition:
            self.sent.append(message)
            self._condition.notify_all()
        return web.json_response(message, status=201)

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/2010-04-01/Accounts/{sid}.json", self._account)
        app.router.add_post("/2010-04-01/Accounts/{sid}/Messages.json", self._message)
        await self._serve_app(app)
