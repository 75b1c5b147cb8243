"""A STAND-IN for the Weixin (微信) Official Account platform as an account's server sees it —
the message pushes it sends to the server URL, what it does with the answer, and the two API
calls the server makes — for tests only.

It is not Weixin: it is written from the Official Account platform's public developer
documentation (developers.weixin.qq.com: "access overview" with the URL check, "receiving
ordinary messages", "passive replies", "message encryption and decryption", "get access token",
"customer service messages") for what the ``hermes-platform-weixin`` adapter uses, keeps
everything in memory, and binds 127.0.0.1 only.

The push half plays the platform calling the server: :meth:`WeixinStandIn.verify_url` is the URL
check (GET with ``signature``, ``timestamp``, ``nonce``, ``echostr``); :meth:`WeixinStandIn.
user_says` builds the documented message XML (``ToUserName`` the account's original id,
``FromUserName`` the follower's OpenID, ``CreateTime``, ``MsgType``, ``Content``, ``MsgId``) and
POSTs it with ``signature`` = SHA-1 of the sorted Token, timestamp and nonce, and ``openid``; in
safe mode the body is ``<xml><ToUserName/><Encrypt/></xml>`` and the query adds
``encrypt_type=aes`` and ``msg_signature`` over the Token, timestamp, nonce and ciphertext. It
waits five seconds for the answer, like the platform: ``success`` or an empty body means no
reply; a passive text reply (encrypted and signed in safe mode, checked here) reaches the
follower.

The API half: ``GET /cgi-bin/token?grant_type=client_credential&appid=&secret=`` answers
``access_token`` and ``expires_in`` (errcode 40125 for a wrong secret);
``POST /cgi-bin/message/custom/send?access_token=`` takes ``{"touser", "msgtype": "text",
"text": {"content"}}`` for a follower who wrote in the last 48 hours (errcode 45015 otherwise,
40001 for an unknown token).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from typing import Any

from aiohttp import web

from standins.callbacks import CallbackAnswer, call_back, wait_for_count
from standins.threaded import ThreadedStandIn
from standins.wxbiz_crypto import cdata, seal, sha1_signature, unseal

APP_ID = "wxstandin01234567"
APP_SECRET = "standin-weixin-app-secret"
TOKEN = "standinWeixinToken"
ENCODING_AES_KEY = "ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210zyxwvut"
ACCOUNT = "gh_standin00001"
ANSWER_SECONDS = 5.0
"""How long the platform waits for the server's answer."""


class WeixinStandIn(ThreadedStandIn):
    """The stand-in Official Account API (aiohttp on its own thread) and the message pusher."""

    thread_name = "weixin-standin"

    def __init__(self) -> None:
        super().__init__()
        self.server_url: str | None = None
        self.received: list[dict[str, Any]] = []
        """Every message a follower got (``touser``, ``text``, ``via`` passive or custom)."""
        self.tokens_issued = 0
        self._tokens: set[str] = set()
        self._last_written: dict[str, float] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Condition()

    @property
    def base_url(self) -> str:
        """What the adapter's ``api_base`` takes."""
        return f"http://127.0.0.1:{self._port}"

    def verify_url(self, echo: str = "7259358112223458", *, token: str = TOKEN) -> CallbackAnswer:
        """The platform's check of the server URL: the answer should be ``echo``."""
        return self._request("GET", {**self._signed_query(token), "echostr": echo}, None)

    def user_says(
        self, open_id: str, text: str, *, msgtype: str = "text", **delivery: Any
    ) -> tuple[bytes, CallbackAnswer]:
        """A follower's message pushed to the server: the (plaintext) message XML and the
        answer (``delivery``: how, as :meth:`deliver` takes it)."""
        content = (
            f"<Content>{cdata(text)}</Content>"
            if msgtype == "text"
            else f"<PicUrl>{cdata('http://127.0.0.1:9/p.jpg')}</PicUrl><MediaId>{cdata('m')}</MediaId>"
        )
        message = (
            f"<xml><ToUserName>{cdata(ACCOUNT)}</ToUserName>"
            f"<FromUserName>{cdata(open_id)}</FromUserName>"
            f"<CreateTime>{int(time.time())}</CreateTime><MsgType>{cdata(msgtype)}</MsgType>"
            f"{content}<MsgId>{24_000_000_000_000_000 + next(self._ids)}</MsgId></xml>"
        ).encode()
        with self._lock:
            self._last_written[open_id] = time.time()
        return message, self.deliver(message, **delivery)

    def deliver(
        self,
        message: bytes,
        *,
        safe: bool = False,
        token: str = TOKEN,
        app_id: str = APP_ID,
        signed: bool = True,
        timeout: float = ANSWER_SECONDS,
    ) -> CallbackAnswer:
        """Push ``message`` (plaintext, or encrypted for ``app_id`` when ``safe``) with a fresh
        signature by ``token``; a passive reply in the answer reaches the follower."""
        query = self._signed_query(token)
        body = message
        if safe:
            encrypted = seal(message, ENCODING_AES_KEY, app_id)
            body = f"<xml><ToUserName>{cdata(ACCOUNT)}</ToUserName><Encrypt>{cdata(encrypted)}</Encrypt></xml>".encode()
            signature = sha1_signature(token, query["timestamp"], query["nonce"], encrypted)
            query.update(encrypt_type="aes", msg_signature=signature)
        if not signed:
            query.pop("signature")
        query["openid"] = _field(message, "FromUserName")
        answer = self._request("POST", query, body, timeout)
        if answer.status == 200 and answer.body not in {"", "success"}:
            self._take_passive_reply(answer.body.encode(), query["openid"], safe)
        return answer

    def expire_tokens(self) -> None:
        """Every access token issued so far stops working (errcode 40001 from then on)."""
        with self._lock:
            self._tokens.clear()

    def wait_for_received(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until followers got ``count`` messages; all they got so far."""
        return wait_for_count(self._lock, self.received, count, timeout)

    def _take_passive_reply(self, body: bytes, open_id: str, safe: bool) -> None:
        if safe:
            encrypted = _field(body, "Encrypt")
            stamp, nonce = _field(body, "TimeStamp"), _field(body, "Nonce")
            expected = sha1_signature(TOKEN, stamp, nonce, encrypted)
            assert _field(body, "MsgSignature") == expected, "a reply with a wrong MsgSignature"
            body, receiver = unseal(encrypted, ENCODING_AES_KEY)
            assert receiver == APP_ID, "a reply encrypted for another AppID"
        assert _field(body, "ToUserName") == open_id and _field(body, "FromUserName") == ACCOUNT
        assert _field(body, "MsgType") == "text", body
        text = _field(body, "Content")
        assert 0 < len(text.encode()) <= 2048, "a passive reply of the wrong size"
        self._record(open_id, text, "passive")

    def _record(self, open_id: str, text: str, via: str) -> None:
        with self._lock:
            self.received.append({"touser": open_id, "text": text, "via": via})
            self._lock.notify_all()

    def _signed_query(self, token: str) -> dict[str, str]:
        stamp, nonce = str(int(time.time())), str(int.from_bytes(os.urandom(4), "big"))
        return {
            "signature": sha1_signature(token, stamp, nonce),
            "timestamp": stamp,
            "nonce": nonce,
        }

    def _request(
        self, method: str, query: dict[str, str], body: bytes | None, timeout: float = 30.0
    ) -> CallbackAnswer:
        assert self.server_url is not None, "set server_url first"
        url = f"{self.server_url}?{urllib.parse.urlencode(query)}"
        request = urllib.request.Request(url, data=body, method=method)
        return call_back(request, timeout)

    async def _token(self, request: web.Request) -> web.Response:
        query = request.query
        if query.get("grant_type") != "client_credential" or query.get("appid") != APP_ID:
            return web.json_response({"errcode": 40013, "errmsg": "invalid appid"})
        if query.get("secret") != APP_SECRET:
            return web.json_response({"errcode": 40125, "errmsg": "invalid appsecret"})
        token = os.urandom(12).hex()
        with self._lock:
            self._tokens.add(token)
            self.tokens_issued += 1
        return web.json_response({"access_token": token, "expires_in": 7200})

    async def _custom_send(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            if request.query.get("access_token") not in self._tokens:
                return web.json_response({"errcode": 40001, "errmsg": "invalid credential"})
            open_id = str(body.get("touser") or "")
            if time.time() - self._last_written.get(open_id, 0.0) > 48 * 3600:
                return web.json_response({"errcode": 45015, "errmsg": "response out of time limit"})
            content = (body.get("text") or {}).get("content")
            if body.get("msgtype") != "text" or not isinstance(content, str) or not content:
                return web.json_response({"errcode": 44002, "errmsg": "empty post data"})
        self._record(open_id, content, "custom")
        return web.json_response({"errcode": 0, "errmsg": "ok"})

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/cgi-bin/token", self._token)
        app.router.add_post("/cgi-bin/message/custom/send", self._custom_send)
        await self._serve_app(app)


def _field(document: bytes, name: str) -> str:
    """The text of the child ``name`` of an ``<xml>`` document ("" when absent)."""
    found = ElementTree.fromstring(document).find(name)
    return "" if found is None else found.text or ""
