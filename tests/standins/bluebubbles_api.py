"""A STAND-IN for a BlueBubbles server — its REST API and its webhooks — for tests only.

It is not BlueBubbles: it is written from BlueBubbles' public documentation
(https://docs.bluebubbles.app, "REST API & Webhooks") and its server's published request rules
for what the ``hermes-platform-bluebubbles`` adapter uses. It holds chats and messages in
memory and binds 127.0.0.1 only. Every call carries the server password as the ``password``
query parameter (aliases ``guid``, ``token``); answers are ``{"status", "message", "data"}``,
errors ``{"status", "message", "error": {"type", "error"}}`` (401 for a wrong password):

- ``GET /api/v1/ping`` — ``data: "pong"``;
- ``POST /api/v1/message/text`` (``chatGuid``, ``tempGuid``, ``message``, ``method``) — the
  sent message (``isFromMe: true``); 400 without a ``tempGuid`` or ``message`` for
  AppleScript, for an unknown chat, or for a ``tempGuid`` already queued. Like the server, the
  new message is then sent to the webhook too (the app must ignore it);
- ``POST /api/v1/message/query`` (``after``, ``sort``, ``limit``, ``offset``, ``with``) — the
  messages created after ``after`` (ms), with their ``chats`` and ``handle``.

Webhooks: :meth:`BlueBubblesStandIn.user_says` records a received message and POSTs
``{"type": "new-message", "data": <message>}`` to :attr:`webhook_url` (unless
``deliver=False``, as while the app is down); :meth:`deliver_again` repeats a delivery.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import aiohttp
from aiohttp import web

from standins.callbacks import wait_for_count
from standins.threaded import ThreadedStandIn

PASSWORD = "bb-standin-password"
GROUP_STYLE, DIRECT_STYLE = 43, 45


def _answer(data: Any, message: str = "Success") -> web.Response:
    return web.json_response({"status": 200, "message": message, "data": data})


def _error(status: int, message: str, kind: str, detail: str) -> web.Response:
    body = {"status": status, "message": message, "error": {"type": kind, "error": detail}}
    return web.json_response(body, status=status)


class BlueBubblesStandIn(ThreadedStandIn):
    """The stand-in server (aiohttp on its own thread) and the people who write to it."""

    thread_name = "bluebubbles-standin"

    def __init__(self, password: str = PASSWORD) -> None:
        super().__init__()
        self.password = password
        self.webhook_url: str | None = None
        """Where new messages are POSTed (the app's endpoint, with its ``?password=``)."""
        self.sent: list[dict[str, Any]] = []
        """Every message the app sent, in order (its chat guid as ``chatGuid``)."""
        self.echoes: list[int] = []
        """The app's statuses for the webhooks of its own messages."""
        self._chats: dict[str, dict[str, Any]] = {}
        self._messages: dict[str, dict[str, Any]] = {}
        self._temp_guids: set[str] = set()
        self._rows = itertools.count(1)
        self._last_ms = 0
        self._lock = threading.Condition()
        self._echoing: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        """The server's address, as ``gateway.platforms.bluebubbles.url`` takes it."""
        return f"http://127.0.0.1:{self._port}"

    # ------------------------------------------------------------------ test side

    def dm(self, address: str) -> str:
        """The one-to-one chat with ``address``; its guid."""
        guid = f"iMessage;-;{address}"
        with self._lock:
            self._chats[guid] = {"guid": guid, "style": DIRECT_STYLE, "chatIdentifier": address,
                                 "displayName": ""}  # fmt: skip
        return guid

    def group(self, name: str) -> str:
        """A new group chat called ``name``; its guid."""
        identifier = f"chat{next(self._rows):09d}"
        guid = f"iMessage;+;{identifier}"
        with self._lock:
            self._chats[guid] = {"guid": guid, "style": GROUP_STYLE,
                                 "chatIdentifier": identifier, "displayName": name}  # fmt: skip
        return guid

    def user_says(self, chat: str, address: str, text: str, *,
                  deliver: bool = True) -> tuple[str, int | None]:  # fmt: skip
        """``address`` writes ``text`` in ``chat``: the message's guid, and the status the app
        answered its webhook with (None when not delivered or the app is unreachable)."""
        message = self._new_message(chat, address, text, from_me=False)
        status = self.deliver_again(message["guid"]) if deliver else None
        return message["guid"], status

    def deliver_again(self, guid: str) -> int | None:
        """POST the ``new-message`` webhook of message ``guid``; the app's status."""
        if self.webhook_url is None:
            return None
        body = json.dumps({"type": "new-message", "data": self._messages[guid]}).encode()
        request = urllib.request.Request(self.webhook_url, data=body, method="POST",
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return int(error.code)
        except OSError:
            return None

    def post_raw(self, body: bytes, password: str | None = None) -> int:
        """POST ``body`` to the app's endpoint (with another ``password`` when given)."""
        assert self.webhook_url is not None
        url = self.webhook_url.split("?")[0] + (f"?password={password}" if password else "")
        request = urllib.request.Request(url, data=body, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return int(error.code)

    def wait_for_sent(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """The app's sent messages once there are at least ``count``."""
        return wait_for_count(self._lock, self.sent, count, timeout)

    def _new_message(self, chat: str, address: str | None, text: str,
                     *, from_me: bool) -> dict[str, Any]:  # fmt: skip
        with self._lock:
            now = max(int(time.time() * 1000), self._last_ms + 1)
            self._last_ms = now
            row = next(self._rows)
            handle = None if from_me else {"originalROWID": row, "address": address,
                                           "service": "iMessage", "country": "us"}  # fmt: skip
            message = {
                "originalROWID": row, "guid": str(uuid.uuid4()).upper(), "text": text,
                "handle": handle, "handleId": 0 if from_me else row, "isFromMe": from_me,
                "dateCreated": now, "dateRead": None, "dateDelivered": None,
                "itemType": 0, "associatedMessageGuid": None, "associatedMessageType": None,
                "threadOriginatorGuid": None, "attachments": [], "subject": None,
                "chats": [dict(self._chats[chat])],
            }  # fmt: skip
            self._messages[message["guid"]] = message
            if from_me:
                self.sent.append({"chatGuid": chat, **message})
                self._lock.notify_all()
        return message

    # ------------------------------------------------------------------ server side

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/api/v1/ping", self._ping)
        app.router.add_post("/api/v1/message/text", self._send_text)
        app.router.add_post("/api/v1/message/query", self._query)
        await self._serve_app(app)

    async def _close(self) -> None:
        for task in list(self._echoing):
            task.cancel()
        await asyncio.gather(*self._echoing, return_exceptions=True)
        await super()._close()

    def _authorized(self, request: web.Request) -> bool:
        given = [request.query.get(name) for name in ("guid", "password", "token")]
        return self.password in given

    @staticmethod
    def _unauthorized() -> web.Response:
        return _error(401, "You are not authorized to access this resource",
                      "Authentication Error", "Invalid password")  # fmt: skip

    async def _ping(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        return _answer("pong", "Ping received!")

    async def _send_text(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        body = await request.json()
        chat, temp, text = body.get("chatGuid"), body.get("tempGuid"), body.get("message")
        if body.get("method", "apple-script") == "apple-script" and not temp:
            return _error(400, "Bad Request", "Validation Error",
                          "A 'tempGuid' is required when sending via AppleScript")  # fmt: skip
        if not isinstance(text, str) or not text:
            return _error(400, "Bad Request", "Validation Error", "A 'message' is required")
        if temp in self._temp_guids:
            return _error(400, "Bad Request", "Validation Error", "Message is already queued")
        if chat not in self._chats:
            if not str(chat).startswith("iMessage;-;"):
                return _error(400, "Bad Request", "Validation Error", "Chat does not exist")
            self.dm(str(chat).removeprefix("iMessage;-;"))
        self._temp_guids.add(temp)
        message = self._new_message(chat, None, text, from_me=True)
        task = asyncio.ensure_future(self._echo(message))
        self._echoing.add(task)
        task.add_done_callback(self._echoing.discard)
        return _answer({**message, "tempGuid": temp}, "Message sent!")

    async def _echo(self, message: dict[str, Any]) -> None:
        if self.webhook_url is None:
            return
        body = {"type": "new-message", "data": message}
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.post(self.webhook_url, json=body) as response,
            ):
                self.echoes.append(response.status)
        except aiohttp.ClientError:
            pass

    async def _query(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        body = await request.json()
        after = int(body.get("after") or 0)
        limit, offset = int(body.get("limit") or 100), int(body.get("offset") or 0)
        with self._lock:
            found = sorted((m for m in self._messages.values() if m["dateCreated"] > after),
                           key=lambda m: m["dateCreated"],
                           reverse=body.get("sort", "DESC") == "DESC")  # fmt: skip
        wanted = set(body.get("with") or [])
        page = [
            {k: v for k, v in m.items()
             if (k != "chats" or wanted & {"chat", "chats"}) and (k != "handle" or "handle" in wanted)}
            for m in found[offset : offset + limit]
        ]  # fmt: skip
        return _answer(page)
