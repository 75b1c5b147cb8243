"""A STAND-IN for Feishu / Lark — its Open API and its event subscription callbacks — for tests
only.

It is not Feishu: it is written from the public Open API documentation (open.feishu.cn,
open.larksuite.com) for what the ``hermes-platform-feishu`` adapter uses, keeps its chats in
memory, and binds 127.0.0.1 only. Every answer is JSON ``{"code": 0, "msg": "success", "data":
…}``, or a non-zero ``code`` with its ``msg``:

- ``POST /open-apis/auth/v3/tenant_access_token/internal`` (``app_id``, ``app_secret``) —
  ``tenant_access_token`` and ``expire`` (7200); a wrong secret is code 10014, "app secret
  invalid";
- ``POST /open-apis/im/v1/messages/{message_id}/reply`` (``msg_type``, ``content``,
  ``reply_in_thread``) and ``POST /open-apis/im/v1/messages?receive_id_type=chat_id``
  (``receive_id``, ``msg_type``, ``content``) — the token as ``Authorization: Bearer``
  (otherwise HTTP 400, code 99991663), ``content`` a JSON string (``{"text": …}`` for
  ``text``); an unknown message or chat is code 230001 here. A reply in a thread gets the
  thread's ``thread_id`` (a new one when the message started none).

The callback half plays Feishu calling the app: :meth:`FeishuStandIn.user_says` builds a schema
2.0 ``im.message.receive_v1`` event (``header``: ``event_id``, ``event_type``, ``create_time``,
``token``, ``app_id``; ``event.sender.sender_id.open_id``; ``event.message``: ``message_id``,
``chat_id``, ``chat_type`` ``p2p`` or ``group``, ``message_type``, ``content``, ``thread_id``,
``mentions``) and POSTs it to the app's Request URL — with an Encrypt Key, encrypted as
``{"encrypt": base64(iv + AES-256-CBC(sha256(key), PKCS#7))}`` and signed with
``X-Lark-Request-Timestamp``, ``X-Lark-Request-Nonce`` and ``X-Lark-Signature`` (hex SHA-256
of timestamp + nonce + key + body). :meth:`FeishuStandIn.verify_url` sends the
``url_verification`` challenge.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from standins.callbacks import CallbackAnswer, call_back, wait_for_count
from standins.threaded import ThreadedStandIn

APP_ID = "cli_standin0001"
APP_SECRET = "standin-app-secret"
VERIFICATION_TOKEN = "standin-verification-token"
ENCRYPT_KEY = "standin-encrypt-key"


class FeishuStandIn(ThreadedStandIn):
    """The stand-in Open API (aiohttp on its own thread) and the event sender."""

    thread_name = "feishu-standin"

    def __init__(self, encrypt_key: str | None = None) -> None:
        super().__init__()
        self.encrypt_key = encrypt_key
        self.events_url: str | None = None
        self.posted: list[dict[str, Any]] = []
        """Every message the app sent or replied, in order (``text`` decoded from content)."""
        self.messages: dict[str, dict[str, Any]] = {}
        """Every message by id: what users wrote and what the app posted."""
        self.token_requests = 0
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._tokens: set[str] = set()

    @property
    def base_url(self) -> str:
        """The Open API root the adapter's ``base_url`` takes."""
        return f"http://127.0.0.1:{self._port}"

    # ------------------------------------------------------------------ test side

    def user_says(
        self,
        chat_id: str,
        open_id: str,
        text: str,
        *,
        chat_type: str = "p2p",
        thread_id: str | None = None,
        mention_bot: bool = False,
        message_type: str = "text",
        **delivery: Any,
    ) -> tuple[dict[str, Any], CallbackAnswer]:
        """A user's message delivered to the app: the schema 2.0 envelope and the answer
        (``delivery``: how, as :meth:`deliver` takes it)."""
        number = next(self._ids)
        message_id = f"om_{number:08d}"
        content = {"text": ("@_user_1 " if mention_bot else "") + text}
        message: dict[str, Any] = {
            "message_id": message_id,
            "root_id": "",
            "parent_id": "",
            "create_time": str(int(time.time() * 1000)),
            "chat_id": chat_id,
            "chat_type": chat_type,
            "message_type": message_type,
            "content": json.dumps(content if message_type == "text" else {"image_key": "img_1"}),
            "mentions": [
                {
                    "key": "@_user_1",
                    "id": {"open_id": "ou_bot"},
                    "name": "Hermes",
                    "tenant_key": "t",
                }
            ]
            if mention_bot
            else [],
        }
        if thread_id is not None:
            message["thread_id"] = thread_id
        with self._lock:
            self.messages[message_id] = dict(message)
        envelope = {
            "schema": "2.0",
            "header": {
                "event_id": f"ev{number:08d}{os.urandom(4).hex()}",
                "event_type": "im.message.receive_v1",
                "create_time": message["create_time"],
                "token": VERIFICATION_TOKEN,
                "app_id": APP_ID,
                "tenant_key": "standin-tenant",
            },
            "event": {
                "sender": {
                    "sender_id": {"open_id": open_id, "union_id": f"on_{open_id}"},
                    "sender_type": "user",
                    "tenant_key": "standin-tenant",
                },
                "message": message,
            },
        }
        return envelope, self.deliver(envelope, **delivery)

    def verify_url(self, challenge: str, token: str = VERIFICATION_TOKEN) -> CallbackAnswer:
        """The ``url_verification`` request Feishu sends when the Request URL is saved."""
        return self.deliver({"challenge": challenge, "token": token, "type": "url_verification"})

    def deliver(
        self,
        payload: Mapping[str, Any],
        *,
        encrypt_key: str | None = None,
        signed: bool = True,
        timeout: float = 30.0,
    ) -> CallbackAnswer:
        """POST ``payload`` to the Request URL as Feishu does (encrypted and signed with the
        Encrypt Key when there is one; ``encrypt_key`` signs with another; ``signed=False``
        leaves the signature out)."""
        assert self.events_url is not None, "set events_url first"
        key = encrypt_key or self.encrypt_key
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if key is not None:
            body = json.dumps({"encrypt": encrypt(body, self.encrypt_key or key)}).encode()
            stamp, nonce = str(int(time.time())), os.urandom(8).hex()
            if signed:
                headers.update(
                    {
                        "X-Lark-Request-Timestamp": stamp,
                        "X-Lark-Request-Nonce": nonce,
                        "X-Lark-Signature": hashlib.sha256(
                            (stamp + nonce + key).encode() + body
                        ).hexdigest(),
                    }
                )
        request = urllib.request.Request(self.events_url, data=body, headers=headers)
        return call_back(request, timeout)

    def wait_for_posts(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until the app posted ``count`` messages; all it posted so far."""
        return wait_for_count(self._lock, self.posted, count, timeout)

    def revoke_tokens(self) -> None:
        """Every tenant_access_token given so far stops working (as when one expires)."""
        with self._lock:
            self._tokens.clear()

    # ------------------------------------------------------------------ Open API

    async def _token(self, request: web.Request) -> web.Response:
        body = await request.json()
        if body.get("app_id") != APP_ID or body.get("app_secret") != APP_SECRET:
            return web.json_response({"code": 10014, "msg": "app secret invalid"})
        token = f"t-{os.urandom(8).hex()}"
        with self._lock:
            self._tokens.add(token)
            self.token_requests += 1
        return web.json_response(
            {"code": 0, "msg": "ok", "tenant_access_token": token, "expire": 7200}
        )

    def _authorized(self, request: web.Request) -> bool:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ")
        with self._lock:
            return given in self._tokens

    async def _reply(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _invalid_token()
        body = await request.json()
        with self._lock:
            parent = self.messages.get(request.match_info["message_id"])
            if parent is None:
                return web.json_response({"code": 230001, "msg": "message not found"})
            thread_id = parent.get("thread_id")
            if body.get("reply_in_thread") and not thread_id:
                thread_id = f"omt_{next(self._ids):08d}"
            posted = self._post(
                parent["chat_id"], body, thread_id if body.get("reply_in_thread") else None
            )
            posted["reply_to"] = parent["message_id"]
        return web.json_response({"code": 0, "msg": "success", "data": posted})

    async def _send(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _invalid_token()
        if request.query.get("receive_id_type") != "chat_id":
            return web.json_response({"code": 99992402, "msg": "field validation failed"})
        body = await request.json()
        with self._lock:
            posted = self._post(str(body.get("receive_id")), body, None)
        return web.json_response({"code": 0, "msg": "success", "data": posted})

    def _post(self, chat_id: str, body: Mapping[str, Any], thread_id: str | None) -> dict[str, Any]:
        """Record one message the app sent (the lock is held)."""
        message_id = f"om_{next(self._ids):08d}"
        message: dict[str, Any] = {
            "message_id": message_id,
            "chat_id": chat_id,
            "msg_type": body.get("msg_type"),
            "body": {"content": body.get("content")},
            "text": json.loads(str(body.get("content")))["text"],
            "reply_in_thread": bool(body.get("reply_in_thread")),
        }
        if thread_id is not None:
            message["thread_id"] = thread_id
        self.messages[message_id] = message
        self.posted.append(message)
        self._lock.notify_all()
        return dict(message)

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/open-apis/auth/v3/tenant_access_token/internal", self._token)
        app.router.add_post("/open-apis/im/v1/messages/{message_id}/reply", self._reply)
        app.router.add_post("/open-apis/im/v1/messages", self._send)
        await self._serve_app(app)


def _invalid_token() -> web.Response:
    return web.json_response(
        {"code": 99991663, "msg": "Invalid access token for authorization."}, status=400
    )


def encrypt(body: bytes, encrypt_key: str) -> str:
    """Feishu's encryption of a callback body (see the module docstring)."""
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    key = hashlib.sha256(encrypt_key.encode()).digest()
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(body) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return base64.b64encode(iv + encryptor.update(padded) + encryptor.finalize()).decode()
