"""A STAND-IN for WeCom (企业微信) as a self-built application sees it — the encrypted message
callbacks WeCom sends, and the two API calls the application makes — for tests only.

It is not WeCom: it is written from WeCom's public developer documentation
(developer.work.weixin.qq.com: "receive messages" with the callback encryption, "get
access_token", "send application messages") for what the ``hermes-platform-wecom`` adapter
uses, keeps everything in memory, and binds 127.0.0.1 only.

The callback half plays WeCom calling the application: :meth:`WeComStandIn.verify_url` is the
URL check (GET with ``msg_signature``, ``timestamp``, ``nonce`` and an encrypted ``echostr``),
:meth:`WeComStandIn.user_says` builds the documented message XML (``ToUserName`` the CorpID,
``FromUserName`` the member's UserID, ``CreateTime``, ``MsgType``, ``Content``, ``MsgId``,
``AgentID``), encrypts it into ``<xml><ToUserName/><AgentID/><Encrypt/></xml>`` and POSTs it
with ``msg_signature`` = SHA-1 of the sorted Token, timestamp, nonce and ciphertext.

The API half: ``GET /cgi-bin/gettoken?corpid=&corpsecret=`` answers ``access_token`` and
``expires_in`` (errcode 40001 for a wrong secret); ``POST /cgi-bin/message/send?access_token=``
takes ``{"touser", "msgtype": "text", "agentid", "text": {"content"}}`` and answers ``errcode`` 0
and a ``msgid`` (40014 for an unknown token, 45002 for content over 2,048 bytes, 40056 for a
wrong agentid).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from aiohttp import web

from standins.callbacks import CallbackAnswer, call_back, wait_for_count
from standins.threaded import ThreadedStandIn
from standins.wxbiz_crypto import cdata, seal, sha1_signature

CORP_ID = "wwstandin0123456789"
CORP_SECRET = "standin-wecom-corp-secret"
AGENT_ID = 1000002
TOKEN = "standinWeComToken"
ENCODING_AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"


class WeComStandIn(ThreadedStandIn):
    """The stand-in WeCom API (aiohttp on its own thread) and the callback sender."""

    thread_name = "wecom-standin"

    def __init__(self) -> None:
        super().__init__()
        self.callback_url: str | None = None
        self.sent: list[dict[str, Any]] = []
        """Every message the application sent (``touser``, ``text``), in order."""
        self.tokens_issued = 0
        self._tokens: set[str] = set()
        self._ids = itertools.count(1)
        self._lock = threading.Condition()

    @property
    def base_url(self) -> str:
        """What the adapter's ``api_base`` takes."""
        return f"http://127.0.0.1:{self._port}"

    def expire_tokens(self) -> None:
        """Every access token issued so far stops working (WeCom's errcode 40014)."""
        with self._lock:
            self._tokens.clear()

    def verify_url(self, echo: str = "echo-1234", *, token: str = TOKEN) -> CallbackAnswer:
        """WeCom's check of the callback URL: the answer should be ``echo``."""
        encrypted = seal(echo.encode(), ENCODING_AES_KEY, CORP_ID)
        query = self._signed_query(encrypted, token)
        return self._request("GET", {**query, "echostr": encrypted}, None)

    def user_says(
        self, user_id: str, text: str, *, msgtype: str = "text", **delivery: Any
    ) -> tuple[bytes, CallbackAnswer]:
        """A member's message to the application: the encrypted body POSTed and the answer
        (``delivery``: how, as :meth:`deliver` takes it)."""
        number = next(self._ids)
        content = (
            f"<Content>{cdata(text)}</Content>"
            if msgtype == "text"
            else f"<PicUrl>{cdata('http://127.0.0.1:9/p.jpg')}</PicUrl><MediaId>{cdata('m1')}</MediaId>"
        )
        inner = (
            f"<xml><ToUserName>{cdata(CORP_ID)}</ToUserName>"
            f"<FromUserName>{cdata(user_id)}</FromUserName>"
            f"<CreateTime>{int(time.time())}</CreateTime><MsgType>{cdata(msgtype)}</MsgType>"
            f"{content}<MsgId>{7_000_000_000_000_000_000 + number}</MsgId>"
            f"<AgentID>{AGENT_ID}</AgentID></xml>"
        )
        return self.envelope(inner), self.deliver(self.envelope(inner), **delivery)

    def envelope(self, inner: str, *, corp_id: str = CORP_ID) -> bytes:
        """The POST body carrying ``inner`` encrypted for ``corp_id``."""
        encrypted = seal(inner.encode(), ENCODING_AES_KEY, corp_id)
        return (
            f"<xml><ToUserName>{cdata(CORP_ID)}</ToUserName><AgentID>{cdata(str(AGENT_ID))}"
            f"</AgentID><Encrypt>{cdata(encrypted)}</Encrypt></xml>"
        ).encode()

    def deliver(
        self, body: bytes, *, token: str = TOKEN, signed: bool = True, timeout: float = 5.0
    ) -> CallbackAnswer:
        """POST ``body`` to the callback URL with a fresh signature (by ``token``), waiting five
        seconds for the answer like WeCom (status 0 past that: WeCom would send it again)."""
        encrypted = body.split(b"<Encrypt><![CDATA[")[-1].split(b"]]>")[0].decode()
        query = self._signed_query(encrypted, token)
        if not signed:
            query.pop("msg_signature")
        return self._request("POST", query, body, timeout)

    def wait_for_sent(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until the application sent ``count`` messages; all it sent so far."""
        return wait_for_count(self._lock, self.sent, count, timeout)

    def _signed_query(self, encrypted: str, token: str) -> dict[str, str]:
        stamp, nonce = str(int(time.time())), os.urandom(5).hex()
        signature = sha1_signature(token, stamp, nonce, encrypted)
        return {"msg_signature": signature, "timestamp": stamp, "nonce": nonce}

    def _request(
        self, method: str, query: dict[str, str], body: bytes | None, timeout: float = 30.0
    ) -> CallbackAnswer:
        assert self.callback_url is not None, "set callback_url first"
        url = f"{self.callback_url}?{urllib.parse.urlencode(query)}"
        request = urllib.request.Request(url, data=body, method=method)
        return call_back(request, timeout)

    async def _gettoken(self, request: web.Request) -> web.Response:
        query = request.query
        if query.get("corpid") != CORP_ID or query.get("corpsecret") != CORP_SECRET:
            return web.json_response({"errcode": 40001, "errmsg": "invalid credential"})
        token = os.urandom(12).hex()
        with self._lock:
            self._tokens.add(token)
            self.tokens_issued += 1
        return web.json_response(
            {"errcode": 0, "errmsg": "ok", "access_token": token, "expires_in": 7200}
        )

    async def _send(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            if request.query.get("access_token") not in self._tokens:
                return web.json_response({"errcode": 40014, "errmsg": "invalid access_token"})
            if body.get("agentid") != AGENT_ID:
                return web.json_response({"errcode": 40056, "errmsg": "invalid agentid"})
            content = (body.get("text") or {}).get("content")
            if body.get("msgtype") != "text" or not isinstance(content, str) or not content:
                return web.json_response({"errcode": 41009, "errmsg": "missing text content"})
            if len(content.encode()) > 2048:
                return web.json_response({"errcode": 45002, "errmsg": "content size out of limit"})
            self.sent.append({"touser": body.get("touser"), "text": content})
            self._lock.notify_all()
            number = len(self.sent)
        return web.json_response(
            {"errcode": 0, "errmsg": "ok", "invaliduser": "", "msgid": f"standin{number}"}
        )

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/cgi-bin/gettoken", self._gettoken)
        app.router.add_post("/cgi-bin/message/send", self._send)
        await self._serve_app(app)
