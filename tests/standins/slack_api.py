"""A STAND-IN for Slack — its Web API and its Events API deliveries — for tests only.

It is not Slack: it is written from Slack's public API documentation (https://api.slack.com)
for what the ``hermes-platform-slack`` adapter uses, holds its channels and messages in memory,
and binds 127.0.0.1 only.

The Web API half, under ``/api/<method>`` (``POST``; parameters as JSON, form or query string;
the token as ``Authorization: Bearer``; every answer HTTP 200 with ``{"ok": true, …}`` or
``{"ok": false, "error": "<code>"}``):

- ``auth.test`` — the bot's identity (``user_id``, ``bot_id``, ``team_id``…);
- ``chat.postMessage`` (``channel``, ``text``, ``thread_ts``) — posts and answers ``channel``,
  ``ts`` and ``message``; ``channel_not_found``, ``no_text``, ``msg_too_long`` (over 40,000
  characters) and ``thread_not_found`` as Slack names them. Like Slack, the bot's own message
  is then delivered to the Events URL too (with ``bot_id``), which the app must ignore;
- ``conversations.history`` (``channel``, ``oldest``, ``limit``, ``cursor``) — the top-level
  messages after ``oldest``, newest first, paged with ``response_metadata.next_cursor``;
- ``conversations.replies`` (``channel``, ``ts``) — a thread's messages, its parent first.

A wrong token is ``invalid_auth``, an unknown method ``unknown_method``.

The Events API half plays Slack calling the app: :meth:`SlackStandIn.user_says` builds an
``event_callback`` envelope (``message`` event with ``channel_type`` ``im``, ``mpim``,
``channel`` or ``group``; ``thread_ts`` inside a thread) and POSTs it to the app's Request URL
signed as Slack signs (``X-Slack-Request-Timestamp``, ``X-Slack-Signature: v0=`` + hex
HMAC-SHA256 of ``v0:<timestamp>:<body>`` with the signing secret);
:meth:`SlackStandIn.verify_url` sends the ``url_verification`` challenge;
:meth:`SlackStandIn.slash_command` POSTs a form-encoded slash command.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from standins.threaded import ThreadedStandIn

TOKEN = "xoxb-standin-token"
SIGNING_SECRET = "standin-signing-secret"
BOT_USER = "U0HERMES"
BOT_ID = "B0HERMES"
TEAM = "T0STANDIN"
MAX_TEXT = 40_000


class SlackError(Exception):
    """A Web API error code."""


@dataclass
class _Channel:
    id: str
    channel_type: str
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class EventAnswer:
    """How the app answered one Events API delivery."""

    status: int
    body: str


class SlackStandIn(ThreadedStandIn):
    """The stand-in Web API (aiohttp on its own thread) and the Events API sender."""

    thread_name = "slack-standin"

    def __init__(self, token: str = TOKEN, signing_secret: str = SIGNING_SECRET) -> None:
        super().__init__()
        self.token = token
        self.signing_secret = signing_secret
        self.events_url: str | None = None
        """The app's Request URL; bot messages are delivered there too once it is set."""
        self.posted: list[dict[str, Any]] = []
        """Every ``chat.postMessage`` the app made (the messages, in order)."""
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.echoes: list[EventAnswer] = []
        """How the app answered the deliveries of its own messages."""
        self._channels: dict[str, _Channel] = {}
        self._ids = itertools.count(1)
        self._clock = itertools.count(1)
        self._lock = threading.Condition()
        self._client: aiohttp.ClientSession | None = None
        self._echoing: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ test side

    @property
    def base_url(self) -> str:
        """What slack_sdk's ``WebClient(base_url=…)`` takes."""
        return f"http://127.0.0.1:{self._port}/api/"

    def channel(self, channel_type: str) -> str:
        """A new conversation: ``im`` (a DM), ``mpim``, ``channel`` or ``group`` (private)."""
        prefix = {"im": "D", "mpim": "G", "channel": "C", "group": "G"}[channel_type]
        channel_id = f"{prefix}{next(self._ids):08d}"
        with self._lock:
            self._channels[channel_id] = _Channel(channel_id, channel_type)
        return channel_id

    def _ts(self) -> str:
        return f"{int(time.time())}.{next(self._clock):06d}"

    def user_says(
        self,
        channel: str,
        user: str,
        text: str,
        *,
        thread_ts: str | None = None,
        app_reachable: bool = True,
    ) -> tuple[str, EventAnswer]:
        """Slack delivering ``user``'s message to the app; its ``ts`` and the app's answer
        (``app_reachable=False``: the app is down, the message is only in the conversation —
        status 0)."""
        with self._lock:
            room = self._channels[channel]
            ts = self._ts()
            event: dict[str, Any] = {
                "type": "message",
                "channel": channel,
                "channel_type": room.channel_type,
                "user": user,
                "text": text,
                "ts": ts,
                "event_ts": ts,
            }
            if thread_ts is not None:
                event["thread_ts"] = thread_ts
            room.messages.append(dict(event))
        if not app_reachable:
            return ts, EventAnswer(0, "the app was not reachable")
        return ts, self.deliver_event(event)

    def envelope(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """The ``event_callback`` wrapper Slack puts around an event."""
        return {
            "token": "deprecated-verification-token",
            "team_id": TEAM,
            "api_app_id": "A0STANDIN",
            "event": dict(event),
            "type": "event_callback",
            "event_id": f"Ev{next(self._ids):010d}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        }

    def deliver_event(self, event: Mapping[str, Any], **kwargs: Any) -> EventAnswer:
        """POST one event to the Request URL, signed."""
        return self.post_signed(json.dumps(self.envelope(event)).encode(), **kwargs)

    def verify_url(self, challenge: str) -> EventAnswer:
        """The ``url_verification`` request Slack sends when the Request URL is set."""
        body = {"token": "deprecated", "challenge": challenge, "type": "url_verification"}
        return self.post_signed(json.dumps(body).encode())

    def slash_command(self, channel: str, user: str, command: str, text: str) -> EventAnswer:
        """A slash command invocation, form-encoded as Slack sends it."""
        with self._lock:
            kind = self._channels[channel].channel_type
        fields = {
            "command": command,
            "text": text,
            "channel_id": channel,
            "channel_name": "directmessage" if kind == "im" else "general",
            "user_id": user,
            "team_id": TEAM,
            "trigger_id": f"{next(self._ids)}.trigger",
            "response_url": f"http://127.0.0.1:{self._port}/commands/unused",
        }
        body = urllib.parse.urlencode(fields).encode()
        return self.post_signed(body, content_type="application/x-www-form-urlencoded")

    def post_signed(
        self,
        body: bytes,
        *,
        content_type: str = "application/json",
        timestamp: str | None = None,
        secret: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> EventAnswer:
        """POST ``body`` to the Request URL with Slack's signature headers (``timeout``: how
        long to wait for the answer; Slack itself waits three seconds)."""
        assert self.events_url is not None, "set events_url first"
        stamp = timestamp or str(int(time.time()))
        all_headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": sign(secret or self.signing_secret, stamp, body),
            **(headers or {}),
        }
        request = urllib.request.Request(self.events_url, data=body, headers=all_headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return EventAnswer(response.status, response.read().decode())
        except urllib.error.HTTPError as error:
            return EventAnswer(error.code, error.read().decode())

    def wait_for_posts(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until the app posted ``count`` messages; all it posted so far."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.posted) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the app posted {len(self.posted)} messages, not {count}")
                self._lock.wait(left)
            return list(self.posted)

    def wait_for_echoes(self, timeout: float = 30.0) -> list[EventAnswer]:
        """Block until every post was delivered back to the app; how it answered them."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.echoes) < len(self.posted):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.echoes)} echoes of {len(self.posted)} posts")
                self._lock.wait(left)
            return list(self.echoes)

    def messages(self, channel: str) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(m) for m in self._channels[channel].messages]

    # ------------------------------------------------------------------ Web API methods

    def _post_message(self, params: Mapping[str, Any]) -> dict[str, Any]:
        channel_id, text = params.get("channel"), params.get("text")
        with self._lock:
            room = self._channels.get(str(channel_id))
            if room is None:
                raise SlackError("channel_not_found")
            if not isinstance(text, str) or not text.strip():
                raise SlackError("no_text")
            if len(text) > MAX_TEXT:
                raise SlackError("msg_too_long")
            thread_ts = params.get("thread_ts")
            if thread_ts is not None and not any(m["ts"] == thread_ts for m in room.messages):
                raise SlackError("thread_not_found")
            message: dict[str, Any] = {
                "type": "message",
                "subtype": "bot_message",
                "text": text,
                "user": BOT_USER,
                "bot_id": BOT_ID,
                "ts": self._ts(),
            }
            if thread_ts is not None:
                message["thread_ts"] = str(thread_ts)
            room.messages.append(message)
            self.posted.append({"channel": room.id, **message})
            self._lock.notify_all()
            echo = {**message, "channel": room.id, "channel_type": room.channel_type}
        if self.events_url is not None and self._loop is not None:
            task = self._loop.create_task(self._echo(echo))
            self._echoing.add(task)
            task.add_done_callback(self._echoing.discard)
        return {"channel": room.id, "ts": message["ts"], "message": message}

    async def _echo(self, event: dict[str, Any]) -> None:
        """Slack sends the app its own message too; record how the app answered."""
        assert self._client is not None and self.events_url is not None
        body = json.dumps(self.envelope(event)).encode()
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": sign(self.signing_secret, stamp, body),
        }
        try:
            async with self._client.post(self.events_url, data=body, headers=headers) as answer:
                result = EventAnswer(answer.status, await answer.text())
        except aiohttp.ClientError as error:
            result = EventAnswer(0, str(error))
        with self._lock:
            self.echoes.append(result)
            self._lock.notify_all()

    def _history(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``conversations.history``: the conversation's top-level messages newest first,
        after ``oldest`` (exclusive), ``limit`` (default 100) a page, paged by ``cursor``."""
        with self._lock:
            room = self._channels.get(str(params.get("channel")))
            if room is None:
                raise SlackError("channel_not_found")
            oldest = float(params.get("oldest") or 0)
            found = [
                dict(m)
                for m in room.messages
                if float(m["ts"]) > oldest and m.get("thread_ts") in (None, m["ts"])
            ][::-1]
        limit = int(params.get("limit") or 100)
        start = int(params.get("cursor") or 0)
        page = found[start : start + limit]
        more = start + limit < len(found)
        return {
            "messages": page,
            "has_more": more,
            "response_metadata": {"next_cursor": str(start + limit) if more else ""},
        }

    def _replies(self, params: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            room = self._channels.get(str(params.get("channel")))
            if room is None:
                raise SlackError("channel_not_found")
            ts = str(params.get("ts"))
            thread = [m for m in room.messages if m["ts"] == ts or m.get("thread_ts") == ts]
            if not thread:
                raise SlackError("thread_not_found")
            return {"messages": thread, "has_more": False}

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response({"ok": False, "error": "invalid_auth"})
        params: dict[str, Any] = dict(request.query)
        if request.can_read_body:
            if request.content_type == "application/json":
                params.update(await request.json())
            else:
                params.update({k: v for k, v in (await request.post()).items()})
        with self._lock:
            self.calls.append((method, params))
        try:
            if method == "auth.test":
                result: dict[str, Any] = {
                    "url": "https://standin.slack.invalid/",
                    "team": "Stand-in team",
                    "user": "hermes",
                    "team_id": TEAM,
                    "user_id": BOT_USER,
                    "bot_id": BOT_ID,
                }
            elif method == "chat.postMessage":
                result = self._post_message(params)
            elif method == "conversations.history":
                result = self._history(params)
            elif method == "conversations.replies":
                result = self._replies(params)
            else:
                raise SlackError("unknown_method")
        except SlackError as error:
            return web.json_response({"ok": False, "error": str(error)})
        return web.json_response({"ok": True, **result})

    # ------------------------------------------------------------------ serving

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle)
        await self._serve_app(app)
        self._client = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))

    async def _close(self) -> None:
        if self._client is not None:
            await self._client.close()
        await super()._close()


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's request signature: ``v0=`` + hex HMAC-SHA256 of ``v0:<timestamp>:<body>``."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
