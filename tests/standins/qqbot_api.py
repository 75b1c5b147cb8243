"""A STAND-IN for the QQ Bot open platform — its HTTP API and its webhook deliveries — for tests
only.

It is not QQ: it is written from the QQ Bot open platform's public documentation
(https://bot.q.qq.com/wiki/develop/api-v2/) for what the ``hermes-platform-qqbot`` adapter uses,
holds what it is sent in memory, and binds 127.0.0.1 only.

The API half:

- ``POST /app/getAppAccessToken`` (``appId``, ``clientSecret``) — ``{"access_token",
  "expires_in": "7200"}``; wrong credentials are ``{"code": 100016, "message": …}``;
- ``POST /v2/users/{openid}/messages`` and ``POST /v2/groups/{group_openid}/messages``
  (``Authorization: QQBot <token>``; ``content``, ``msg_type``, ``msg_id``, ``msg_seq``) — kept
  in :attr:`QQBotStandIn.sent`; ``401`` for a wrong token; a passive reply repeating a
  ``msg_seq`` for the same ``msg_id`` is refused as QQ refuses it (deduplicated).

The webhook half plays QQ calling the bot: :meth:`QQBotStandIn.user_says` and
:meth:`QQBotStandIn.group_says` POST an op 0 dispatch (``C2C_MESSAGE_CREATE``,
``GROUP_AT_MESSAGE_CREATE``) to the callback URL, signed as QQ signs (Ed25519 over the
timestamp and the body, the key's seed the AppSecret repeated to 32 bytes);
:meth:`QQBotStandIn.deliver_again` sends an event again; :meth:`QQBotStandIn.validate` sends the
op 13 callback-address check.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from aiohttp import web
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from standins.callbacks import wait_for_count
from standins.threaded import ThreadedStandIn

APP_ID = "102000001"
SECRET = "standinAppSecret0123"


def bot_key(secret: str = SECRET) -> Ed25519PrivateKey:
    seed = secret.encode()
    while len(seed) < 32:
        seed = seed * 2
    return Ed25519PrivateKey.from_private_bytes(seed[:32])


class QQBotStandIn(ThreadedStandIn):
    """The QQ Bot API plus the platform's side of the webhook."""

    thread_name = "qqbot-standin"

    def __init__(self) -> None:
        super().__init__()
        self.callback_url = ""
        self.sent: list[dict[str, Any]] = []
        self.events: dict[str, dict[str, Any]] = {}
        self.tokens_issued = 0
        self._ids = itertools.count(1)
        self._replied: set[tuple[str, int]] = set()
        self._condition = threading.Condition()
        self._token = "standin-access-token"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def token_url(self) -> str:
        return f"{self.url}/app/getAppAccessToken"

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/app/getAppAccessToken", self._access_token)
        app.router.add_post("/v2/{where:users|groups}/{openid}/messages", self._message)
        await self._serve_app(app)

    async def _access_token(self, request: web.Request) -> web.StreamResponse:
        data = await request.json()
        if data.get("appId") != APP_ID or data.get("clientSecret") != SECRET:
            return web.json_response({"code": 100016, "message": "invalid appid or secret"})
        self.tokens_issued += 1
        return web.json_response({"access_token": self._token, "expires_in": "7200"})

    async def _message(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"QQBot {self._token}":
            return web.json_response({"code": 11244, "message": "token not exist"}, status=401)
        data = await request.json()
        if not isinstance(data.get("content"), str):
            return web.json_response({"code": 40034006, "message": "content empty"}, status=400)
        if data.get("msg_id") is not None:
            reply = (str(data["msg_id"]), int(data.get("msg_seq") or 1))
            if reply in self._replied:
                body = {"code": 40054005, "message": "msg deduplicated: check msg_seq"}
                return web.json_response(body, status=400)
            self._replied.add(reply)
        kind = "group" if request.match_info["where"] == "groups" else "user"
        with self._condition:
            self.sent.append({"to": (kind, request.match_info["openid"]), **data})
            self._condition.notify_all()
        return web.json_response({"id": f"sent-{next(self._ids)}", "timestamp": "0"})

    def wait_for_sent(self, count: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        return wait_for_count(self._condition, self.sent, count, timeout)

    # ------------------------------------------------------------------ QQ calling the bot

    def user_says(self, openid: str, text: str) -> tuple[str, int]:
        """A private message; (event id, the callback's HTTP status)."""
        data = {"author": {"user_openid": openid}}
        return self._dispatch("C2C_MESSAGE_CREATE", data, text)

    def group_says(self, group: str, member: str, text: str) -> tuple[str, int]:
        """An @-message in a group (QQ puts a space before the text)."""
        data = {"author": {"member_openid": member}, "group_openid": group}
        return self._dispatch("GROUP_AT_MESSAGE_CREATE", data, f" {text}")

    def _dispatch(self, kind: str, data: dict[str, Any], text: str) -> tuple[str, int]:
        number = next(self._ids)
        message = {
            **data,
            "id": f"ROBOT1.0_msg{number}",
            "content": text,
            "timestamp": "2026-12-07T10:00:00+08:00",
        }
        payload = {"id": f"{kind}:event{number}", "op": 0, "t": kind, "d": message}
        self.events[payload["id"]] = payload
        return payload["id"], self.post(payload)[0]

    def deliver_again(self, event_id: str) -> int:
        """The same event again (QQ had no acknowledgement for it); the HTTP status."""
        return self.post(self.events[event_id])[0]

    def validate(self, plain_token: str, event_ts: str) -> dict[str, Any]:
        """The op 13 callback-address check; the bot's answer."""
        status, answer = self.post(
            {"op": 13, "d": {"plain_token": plain_token, "event_ts": event_ts}}
        )
        assert status == 200, answer
        return answer

    def post(self, payload: Any, *, signed_with: str = SECRET) -> tuple[int, dict[str, Any]]:
        """POST ``payload`` to the callback URL, signed; (status, JSON answer)."""
        body = json.dumps(payload).encode()
        stamp = str(int(time.time()))
        signature = bot_key(signed_with).sign(stamp.encode() + body).hex()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "QQBot-Callback",
            "X-Bot-Appid": APP_ID,
            "X-Signature-Method": "Ed25519",
            "X-Signature-Timestamp": stamp,
            "X-Signature-Ed25519": signature,
        }
        request = urllib.request.Request(self.callback_url, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")


def verify(answer: dict[str, Any], event_ts: str) -> bool:
    """True when the op 13 answer's signature is the bot key's over event_ts + plain_token."""
    message = (event_ts + str(answer["plain_token"])).encode()
    try:
        bot_key().public_key().verify(bytes.fromhex(str(answer["signature"])), message)
    except Exception:
        return False
    return True
