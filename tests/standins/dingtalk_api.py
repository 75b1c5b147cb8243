"""A STAND-IN for DingTalk's robot HTTP callback mode — the messages it POSTs to a robot and the
``sessionWebhook`` the robot answers through — for tests only.

It is not DingTalk: it is written from DingTalk's public robot documentation
(open.dingtalk.com, "receive messages" in HTTP mode, and the session webhook) for what the
``hermes-platform-dingtalk`` adapter uses, keeps its conversations in memory, and binds
127.0.0.1 only.

The callback half plays DingTalk calling the robot: :meth:`DingTalkStandIn.user_says` builds the
documented body (``msgtype`` ``text`` with ``text.content``, ``msgId``, ``createAt``,
``conversationType`` ``"1"`` single or ``"2"`` group, ``conversationId``,
``conversationTitle``, ``senderId``, ``senderStaffId``, ``senderNick``, ``chatbotUserId``,
``isInAtList``, ``sessionWebhook``, ``sessionWebhookExpiredTime`` 90 minutes on) and POSTs it
to the robot's URL with the ``timestamp`` header (milliseconds) and ``sign`` = base64 of
HMAC-SHA256 (key: the AppSecret) of ``timestamp + "\\n" + AppSecret``.

The webhook half: ``POST /robot/sendBySession?session=<id>`` with ``{"msgtype": "text", "text":
{"content": …}}`` posts into the conversation the session belongs to and answers ``{"errcode":
0, "errmsg": "ok"}``; an unknown or expired session, or a body without text, gets a non-zero
``errcode`` (the codes here are the stand-in's own).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
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

APP_SECRET = "standin-dingtalk-app-secret"
WEBHOOK_MINUTES = 90


def sign(timestamp: str, secret: str = APP_SECRET) -> str:
    """DingTalk's ``sign`` header for ``timestamp``."""
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256)
    return base64.b64encode(digest.digest()).decode()


class DingTalkStandIn(ThreadedStandIn):
    """The stand-in session webhook (aiohttp on its own thread) and the message sender."""

    thread_name = "dingtalk-standin"

    def __init__(self) -> None:
        super().__init__()
        self.robot_url: str | None = None
        self.posted: list[dict[str, Any]] = []
        """Every message the robot posted (``conversationId``, ``text``), in order."""
        self._sessions: dict[str, tuple[str, float]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Condition()

    @property
    def webhook_prefix(self) -> str:
        """What the adapter's ``session_webhook_prefix`` takes."""
        return f"http://127.0.0.1:{self._port}/robot/"

    def user_says(
        self,
        conversation_id: str,
        staff_id: str,
        text: str,
        *,
        conversation_type: str = "1",
        msgtype: str = "text",
        webhook_minutes: float = WEBHOOK_MINUTES,
        **delivery: Any,
    ) -> tuple[dict[str, Any], CallbackAnswer]:
        """A user's message delivered to the robot: the body and the answer (``delivery``:
        how, as :meth:`deliver` takes it)."""
        number = next(self._ids)
        session = os.urandom(8).hex()
        now_ms = int(time.time() * 1000)
        with self._lock:
            self._sessions[session] = (conversation_id, now_ms / 1000 + webhook_minutes * 60)
        body: dict[str, Any] = {
            "msgtype": msgtype,
            "msgId": f"msg{number:08d}{os.urandom(3).hex()}",
            "createAt": now_ms,
            "conversationType": conversation_type,
            "conversationId": conversation_id,
            "conversationTitle": "Stand-in group" if conversation_type == "2" else "",
            "senderId": f"$:LWCP_v1:${staff_id}",
            "senderStaffId": staff_id,
            "senderNick": f"Nick {staff_id}",
            "senderCorpId": "dingstandin",
            "chatbotUserId": "$:LWCP_v1:$robot",
            "chatbotCorpId": "dingstandin",
            "isAdmin": False,
            "isInAtList": conversation_type == "2",
            "sessionWebhook": f"{self.webhook_prefix}sendBySession?session={session}",
            "sessionWebhookExpiredTime": int(now_ms + webhook_minutes * 60_000),
        }
        if msgtype == "text":
            body["text"] = {"content": f" {text}" if conversation_type == "2" else text}
        else:
            body["content"] = {"downloadCode": "standin-download-code"}
        return body, self.deliver(body, **delivery)

    def deliver(
        self,
        body: Mapping[str, Any],
        *,
        secret: str = APP_SECRET,
        timestamp: str | None = None,
        signed: bool = True,
        timeout: float = 30.0,
    ) -> CallbackAnswer:
        """POST ``body`` to the robot's URL with fresh ``timestamp`` and ``sign`` headers."""
        assert self.robot_url is not None, "set robot_url first"
        stamp = timestamp or str(int(time.time() * 1000))
        headers = {"Content-Type": "application/json; charset=utf-8", "timestamp": stamp}
        if signed:
            headers["sign"] = sign(stamp, secret)
        data = json.dumps(body).encode()
        request = urllib.request.Request(self.robot_url, data=data, headers=headers)
        return call_back(request, timeout)

    def wait_for_posts(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until the robot posted ``count`` messages; all it posted so far."""
        return wait_for_count(self._lock, self.posted, count, timeout)

    async def _send_by_session(self, request: web.Request) -> web.Response:
        body = await request.json()
        with self._lock:
            found = self._sessions.get(request.query.get("session", ""))
            if found is None or found[1] <= time.time():
                return web.json_response({"errcode": 300001, "errmsg": "session expired"})
            text = (
                (body.get("text") or {}).get("content") if body.get("msgtype") == "text" else None
            )
            if not isinstance(text, str) or not text:
                return web.json_response({"errcode": 300002, "errmsg": "no text content"})
            self.posted.append({"conversationId": found[0], "text": text})
            self._lock.notify_all()
        return web.json_response({"errcode": 0, "errmsg": "ok"})

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/robot/sendBySession", self._send_by_session)
        await self._serve_app(app)
