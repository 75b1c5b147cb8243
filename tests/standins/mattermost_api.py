"""A STAND-IN for a Mattermost server — its REST API v4 and its WebSocket — for tests only.

It is not Mattermost: it is written from Mattermost's public API documentation
(https://api.mattermost.com) for what the ``hermes-platform-mattermost`` adapter uses, holds its
users, channels and posts in memory, and binds 127.0.0.1 only. The bot's token is checked as
``Authorization: Bearer`` (HTTP 401 with Mattermost's error body otherwise):

- ``GET /api/v4/users/me`` — the bot's account (``id``, ``username``, ``is_bot``);
- ``POST /api/v4/posts`` (``channel_id``, ``message``, ``root_id``) — HTTP 201 and the post;
  400 for an unknown channel or root, an empty message or one over 16,383 characters. Like
  Mattermost, the new post is then broadcast as a ``posted`` event, to the bot too;
- ``GET /api/v4/channels/{channel_id}/posts?since=<ms>`` — ``{"order": [...], "posts": {...}}``
  with the posts created or changed after ``since``;
- ``GET /api/v4/websocket`` — a WebSocket authenticated by the upgrade's Authorization header
  or an ``authentication_challenge`` action (answered ``{"status": "OK", "seq_reply": n}``),
  then a ``hello`` event, then every ``posted`` event: ``data.post`` is the post as a JSON
  string, ``data.channel_type`` ``D``/``G``/``O``/``P``, ``data.sender_name`` ``@<username>``.

The test side: :meth:`MattermostStandIn.user_says` (a person posts; broadcast unless
``live=False``), :meth:`broadcast_again` (the same event delivered twice), :meth:`drop_sockets`
(the server closes every WebSocket), :meth:`wait_for_posts` (the bot's posts).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from typing import Any

from aiohttp import WSMsgType, web

from standins.threaded import ThreadedStandIn

TOKEN = "mm-standin-bot-token"
BOT_ID = "botuserid0000000000000000a"
BOT_NAME = "hermes"
MAX_MESSAGE = 16383


def _error(status: int, message: str) -> web.Response:
    body = {"id": "api.standin.error", "message": message, "status_code": status}
    return web.json_response(body, status=status)


class MattermostStandIn(ThreadedStandIn):
    """The stand-in server (aiohttp on its own thread) and the people who post on it."""

    thread_name = "mattermost-standin"

    def __init__(self, token: str = TOKEN) -> None:
        super().__init__()
        self.token = token
        self.posted: list[dict[str, Any]] = []
        """Every post the bot made, in order."""
        self.sockets_opened = 0
        self._users = {BOT_ID: BOT_NAME}
        self._channels: dict[str, str] = {}
        self._posts: dict[str, dict[str, Any]] = {}
        self._sockets: set[web.WebSocketResponse] = set()
        self._ids = itertools.count(1)
        self._last_ms = 0
        self._seq = itertools.count(1)
        self._lock = threading.Condition()

    # ------------------------------------------------------------------ test side

    @property
    def url(self) -> str:
        """The server's address, as ``gateway.platforms.mattermost.url`` takes it."""
        return f"http://127.0.0.1:{self._port}"

    def _id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):0{26 - len(prefix)}d}"

    def user(self, name: str) -> str:
        """A new person; their user id."""
        user_id = self._id("u")
        with self._lock:
            self._users[user_id] = name
        return user_id

    def channel(self, channel_type: str) -> str:
        """A new channel of type ``D`` (direct), ``G`` (group), ``O`` (public), ``P``."""
        channel_id = self._id("c")
        with self._lock:
            self._channels[channel_id] = channel_type
        return channel_id

    def user_says(self, channel: str, user: str, text: str, *, root_id: str = "",
                  live: bool = True) -> str:  # fmt: skip
        """``user`` posts ``text`` (in the thread ``root_id``); broadcast to the open sockets
        unless ``live`` is false (as while the bot is away). The post's id."""
        assert self._loop is not None
        post = self._new_post(channel, user, text, root_id)
        if live:
            self._on_loop(self._broadcast(post))
        return str(post["id"])

    def broadcast_again(self, post_id: str) -> None:
        """Deliver the ``posted`` event of ``post_id`` once more."""
        self._on_loop(self._broadcast(self._posts[post_id]))

    def drop_sockets(self) -> None:
        """Close every open WebSocket from the server's side."""
        self._on_loop(self._close_sockets())

    def wait_for_sockets(self, count: int, timeout: float = 30.0) -> None:
        """Wait until ``count`` WebSockets were opened in all."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self.sockets_opened < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{self.sockets_opened} sockets opened, not {count}")
                self._lock.wait(left)

    def wait_for_posts(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """The bot's posts once there are at least ``count``."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.posted) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.posted)} posts, not {count}: {self.posted}")
                self._lock.wait(left)
            return list(self.posted)

    def _on_loop(self, work: Any) -> None:
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(work, self._loop).result(10)

    def _new_post(self, channel: str, user: str, text: str, root_id: str) -> dict[str, Any]:
        with self._lock:
            now = max(int(time.time() * 1000), self._last_ms + 1)
            self._last_ms = now
            post = {"id": self._id("p"), "create_at": now, "update_at": now, "edit_at": 0,
                    "delete_at": 0, "user_id": user, "channel_id": channel, "root_id": root_id,
                    "original_id": "", "message": text, "type": "", "props": {},
                    "hashtags": "", "pending_post_id": "", "metadata": {}}  # fmt: skip
            self._posts[post["id"]] = post
            if user == BOT_ID:
                self.posted.append(post)
                self._lock.notify_all()
        return post

    # ------------------------------------------------------------------ server side

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/api/v4/users/me", self._me)
        app.router.add_post("/api/v4/posts", self._create_post)
        app.router.add_get("/api/v4/channels/{channel_id}/posts", self._channel_posts)
        app.router.add_get("/api/v4/websocket", self._websocket)
        await self._serve_app(app)

    async def _close(self) -> None:
        await self._close_sockets()
        await super()._close()

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {self.token}"

    async def _me(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(401, "Invalid or expired session, please login again.")
        return web.json_response({"id": BOT_ID, "username": BOT_NAME, "is_bot": True})

    async def _create_post(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(401, "Invalid or expired session, please login again.")
        body = await request.json()
        channel, text = body.get("channel_id"), body.get("message")
        root = body.get("root_id") or ""
        if channel not in self._channels:
            return _error(400, "Invalid channel_id parameter.")
        if root and root not in self._posts:
            return _error(400, "Invalid RootId parameter.")
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_MESSAGE:
            return _error(400, "Invalid message parameter.")
        post = self._new_post(channel, BOT_ID, text, root)
        await self._broadcast(post)
        return web.json_response(post, status=201)

    async def _channel_posts(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(401, "Invalid or expired session, please login again.")
        channel = request.match_info["channel_id"]
        if channel not in self._channels:
            return _error(404, "Unable to find the existing channel.")
        since = int(request.query.get("since", "0"))
        with self._lock:
            found = [p for p in self._posts.values()
                     if p["channel_id"] == channel and p["update_at"] > since]  # fmt: skip
        found.sort(key=lambda p: p["create_at"], reverse=True)
        return web.json_response(
            {"order": [p["id"] for p in found], "posts": {p["id"]: p for p in found}}
        )

    async def _websocket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        authenticated = self._authorized(request)
        with self._lock:
            self.sockets_opened += 1
            self._lock.notify_all()
        if authenticated:
            await self._hello(socket)
        async for frame in socket:
            if frame.type != WSMsgType.TEXT:
                continue
            action = json.loads(frame.data)
            if action.get("action") == "authentication_challenge":
                ok = action.get("data", {}).get("token") == self.token
                await socket.send_json(
                    {"status": "OK" if ok else "FAIL", "seq_reply": action.get("seq")}
                )
                if ok and not authenticated:
                    authenticated = True
                    await self._hello(socket)
                elif not ok:
                    await socket.close()
        self._sockets.discard(socket)
        return socket

    async def _hello(self, socket: web.WebSocketResponse) -> None:
        self._sockets.add(socket)
        await socket.send_json({"event": "hello", "data": {"server_version": "standin"},
                                "broadcast": {}, "seq": next(self._seq)})  # fmt: skip

    async def _broadcast(self, post: dict[str, Any]) -> None:
        channel_type = self._channels[post["channel_id"]]
        event = {
            "event": "posted",
            "data": {"channel_type": channel_type, "post": json.dumps(post),
                     "sender_name": "@" + self._users.get(post["user_id"], "someone"),
                     "channel_name": post["channel_id"], "team_id": "standinteam"},
            "broadcast": {"channel_id": post["channel_id"], "user_id": "", "team_id": "",
                          "omit_users": None},
            "seq": next(self._seq),
        }  # fmt: skip
        for socket in list(self._sockets):
            if not socket.closed:
                await socket.send_json(event)

    async def _close_sockets(self) -> None:
        for socket in list(self._sockets):
            await socket.close()
        self._sockets.clear()
