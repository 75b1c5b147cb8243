"""A STAND-IN for Discord — its HTTP API and its Gateway (websocket) — for tests only.

It is not Discord: it is written from Discord's public developer documentation
(https://discord.com/developers/docs) for what the ``hermes-platform-discord`` adapter and
discord.py's start-up use, holds one guild, its channels and threads in memory, and binds
127.0.0.1 only.

HTTP, under ``/api/v10`` (``Authorization: Bot <token>``; a wrong token is
``401 {"message": "401: Unauthorized", "code": 0}``; an unknown channel
``404 {"message": "Unknown Channel", "code": 10003}``):

- ``GET /users/@me`` — the bot user; ``GET /oauth2/applications/@me`` — its application;
- ``GET /channels/{id}`` — the channel (a text channel, thread or DM);
- ``GET /channels/{id}/messages`` (``after``, ``before``, ``limit``) — the channel's messages,
  newest first (every message of the channel is kept, also those written while no bot was
  connected: :meth:`DiscordStandIn.user_says` records it, and dispatches it only to a
  connected Gateway session);
- ``POST /channels/{id}/messages`` (``content``, 1–2000 characters, else 400 code 50035) —
  the message; like Discord, it is then dispatched as ``MESSAGE_CREATE`` on the gateway too;
- ``POST /channels/{id}/threads`` (``name``, ``auto_archive_duration`` 60/1440/4320/10080,
  ``type`` 11) — a public thread under a text channel, dispatched as ``THREAD_CREATE``.

Gateway, at ``/gateway`` (``?v=10&encoding=json&compress=zlib-stream``; with zlib-stream
every payload goes out zlib-compressed on one stream, each ending with a ``Z_SYNC_FLUSH``):
``HELLO`` (op 10) on connect; ``IDENTIFY`` (op 2) with the right token → ``READY`` (the guild
unavailable) then ``GUILD_CREATE`` (the whole guild), else close 4004 "Authentication failed";
``HEARTBEAT`` (op 1) → ``HEARTBEAT_ACK`` (op 11). :meth:`DiscordStandIn.user_says` dispatches a
user's ``MESSAGE_CREATE`` (a guild channel, a thread or a DM).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from standins.threaded import ThreadedStandIn

TOKEN = "MTIzNDU2.standin.discord-token"
GUILD_ID = "900000000000000001"
BOT_ID = "900000000000000002"
APP_ID = "900000000000000003"
MAX_CONTENT = 2000


def _json(payload: Any, status: int = 200) -> web.Response:
    """A JSON answer with Discord's exact ``Content-Type`` (no charset parameter)."""
    return web.Response(
        body=json.dumps(payload).encode(), status=status,
        headers={"Content-Type": "application/json"},
    )  # fmt: skip


def _now() -> str:
    return datetime.now(UTC).isoformat()


class DiscordStandIn(ThreadedStandIn):
    """The stand-in HTTP API and Gateway (aiohttp on its own thread and event loop)."""

    thread_name = "discord-standin"

    def __init__(self, token: str = TOKEN) -> None:
        super().__init__()
        self.token = token
        self.bot = {"id": BOT_ID, "username": "hermes", "discriminator": "0",
                    "global_name": "Hermes", "avatar": None, "bot": True}  # fmt: skip
        self.posted: list[dict[str, Any]] = []
        """Every message the bot sent (the message objects, in order)."""
        self.threads: dict[str, dict[str, Any]] = {}
        self.identified = threading.Event()
        self._channels: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(910000000000000000)
        self._sequence = itertools.count(1)
        self._sockets: list[tuple[web.WebSocketResponse, Any]] = []
        self._lock = threading.Condition()
        self._history: dict[str, list[dict[str, Any]]] = {}

    # ------------------------------------------------------------------ test side

    @property
    def api_base(self) -> str:
        """The HTTP API root (discord.py's ``Route.BASE``)."""
        return f"http://127.0.0.1:{self._port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The Gateway's websocket URL."""
        return f"ws://127.0.0.1:{self._port}/gateway"

    def _id(self) -> str:
        return str(next(self._ids))

    def user(self, name: str) -> dict[str, Any]:
        """A new Discord user."""
        return {"id": self._id(), "username": name.lower(), "discriminator": "0",
                "global_name": name, "avatar": None}  # fmt: skip

    def text_channel(self, name: str) -> str:
        """A text channel of the guild (before the bot connects); its id."""
        channel_id = self._id()
        with self._lock:
            self._channels[channel_id] = {"id": channel_id, "type": 0, "name": name,
                                          "guild_id": GUILD_ID, "position": len(self._channels),
                                          "permission_overwrites": [], "nsfw": False,
                                          "parent_id": None, "topic": None,
                                          "last_message_id": None, "rate_limit_per_user": 0}  # fmt: skip
        return channel_id

    def dm_channel(self, user: dict[str, Any]) -> str:
        """The DM channel between ``user`` and the bot; its id."""
        channel_id = self._id()
        with self._lock:
            self._channels[channel_id] = {"id": channel_id, "type": 1, "recipients": [user],
                                          "last_message_id": None}  # fmt: skip
        return channel_id

    def user_says(self, channel_id: str, user: dict[str, Any], content: str) -> str:
        """Dispatch ``user``'s message in a channel, thread or DM; the message id."""
        with self._lock:
            channel = self._channels[channel_id]
        message = self._message(channel, user, content)
        if channel["type"] != 1:
            message["member"] = {"roles": [], "joined_at": _now(), "deaf": False, "mute": False}
        self._dispatch_threadsafe("MESSAGE_CREATE", message)
        return str(message["id"])

    def open_thread(self, channel_id: str, name: str, *, by: dict[str, Any]) -> str:
        """A user opening a public thread under a text channel (``THREAD_CREATE``); its id."""
        thread = self._new_thread(channel_id, name, str(by["id"]), 1440, 11)
        self._dispatch_threadsafe("THREAD_CREATE", {**thread, "newly_created": True})
        return str(thread["id"])

    def _new_thread(
        self, channel_id: str, name: str, owner: str, duration: int, kind: int
    ) -> dict[str, Any]:
        thread_id = self._id()
        thread = {
            "id": thread_id, "type": kind, "guild_id": GUILD_ID, "parent_id": channel_id,
            "name": name, "owner_id": owner, "last_message_id": None,
            "rate_limit_per_user": 0, "message_count": 0, "member_count": 1, "flags": 0,
            "thread_metadata": {"archived": False, "auto_archive_duration": duration,
                                "archive_timestamp": _now(), "locked": False},
        }  # fmt: skip
        with self._lock:
            self.threads[thread_id] = thread
            self._channels[thread_id] = thread
        return thread

    def wait_for_posts(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until the bot has posted ``count`` messages; all it posted so far."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.posted) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the bot posted {len(self.posted)} messages, not {count}")
                self._lock.wait(left)
            return list(self.posted)

    # ------------------------------------------------------------------ objects

    def _message(
        self, channel: dict[str, Any], author: dict[str, Any], content: str
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": self._id(), "channel_id": channel["id"], "author": dict(author),
            "content": content, "timestamp": _now(), "edited_timestamp": None, "tts": False,
            "mention_everyone": False, "mentions": [], "mention_roles": [], "attachments": [],
            "embeds": [], "pinned": False, "type": 0, "flags": 0, "components": [],
        }  # fmt: skip
        if channel["type"] != 1:
            message["guild_id"] = GUILD_ID
        with self._lock:
            self._history.setdefault(str(channel["id"]), []).append(message)
        return message

    def _guild(self) -> dict[str, Any]:
        with self._lock:
            channels = [c for c in self._channels.values() if c["type"] == 0]
            threads = list(self.threads.values())
        return {
            "id": GUILD_ID, "name": "Stand-in guild", "icon": None, "splash": None,
            "discovery_splash": None, "owner_id": BOT_ID, "afk_channel_id": None,
            "afk_timeout": 300, "verification_level": 0, "default_message_notifications": 0,
            "explicit_content_filter": 0, "mfa_level": 0, "system_channel_id": None,
            "system_channel_flags": 0, "rules_channel_id": None, "vanity_url_code": None,
            "description": None, "banner": None, "premium_tier": 0,
            "preferred_locale": "en-US", "public_updates_channel_id": None,
            "nsfw_level": 0, "premium_progress_bar_enabled": False,
            "features": [], "emojis": [], "stickers": [], "soundboard_sounds": [],
            "roles": [{"id": GUILD_ID, "name": "@everyone", "permissions": "68608",
                       "position": 0, "color": 0, "hoist": False, "managed": False,
                       "mentionable": False, "flags": 0}],
            "joined_at": _now(), "large": False, "unavailable": False, "member_count": 3,
            "voice_states": [], "members": [], "channels": channels, "threads": threads,
            "presences": [], "stage_instances": [], "guild_scheduled_events": [],
        }  # fmt: skip

    # ------------------------------------------------------------------ gateway

    async def _send(self, socket: web.WebSocketResponse, compressor: Any, payload: Any) -> None:
        data = json.dumps(payload).encode()
        if compressor is None:
            await socket.send_str(data.decode())
        else:
            await socket.send_bytes(compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH))

    async def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        for socket, compressor in list(self._sockets):
            if not socket.closed:
                payload = {"op": 0, "t": event, "s": next(self._sequence), "d": data}
                await self._send(socket, compressor, payload)

    def _dispatch_threadsafe(self, event: str, data: dict[str, Any]) -> None:
        assert self._loop is not None
        asyncio.run_coroutine_threadsafe(self._dispatch(event, data), self._loop).result(10)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        compress = request.query.get("compress") == "zlib-stream"
        compressor = zlib.compressobj() if compress else None
        await self._send(socket, compressor, {"op": 10, "s": None, "t": None,
                                              "d": {"heartbeat_interval": 41250}})  # fmt: skip
        async for frame in socket:
            if frame.type != WSMsgType.TEXT:
                continue
            payload = json.loads(frame.data)
            op = payload.get("op")
            if op == 1:
                await self._send(socket, compressor, {"op": 11, "s": None, "t": None, "d": None})
            elif op == 2:
                if payload["d"].get("token") != self.token:
                    await socket.close(code=4004, message=b"Authentication failed.")
                    break
                self._sockets.append((socket, compressor))
                ready = {
                    "v": 10, "user": dict(self.bot), "guilds": [{"id": GUILD_ID, "unavailable": True}],
                    "session_id": "standin-session", "resume_gateway_url": self.gateway_url,
                    "application": {"id": APP_ID, "flags": 0}, "private_channels": [],
                    "relationships": [], "user_settings": {},
                }  # fmt: skip
                await self._send(socket, compressor, {"op": 0, "t": "READY",
                                                      "s": next(self._sequence), "d": ready})  # fmt: skip
                await self._send(socket, compressor, {"op": 0, "t": "GUILD_CREATE",
                                                      "s": next(self._sequence), "d": self._guild()})  # fmt: skip
                self.identified.set()
        self._sockets = [(s, c) for s, c in self._sockets if s is not socket]
        return socket

    # ------------------------------------------------------------------ HTTP

    def _authorised(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bot {self.token}"

    async def _http(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        path = request.match_info["path"]
        parts = path.strip("/").split("/")
        if request.method == "GET" and path == "users/@me":
            return _json({**self.bot, "flags": 0, "verified": True})
        if request.method == "GET" and path == "oauth2/applications/@me":
            return _json({
                "id": APP_ID, "name": "Hermes", "description": "", "icon": None,
                "bot_public": False, "bot_require_code_grant": False, "owner": dict(self.bot),
                "verify_key": "0" * 64, "flags": 0, "team": None, "summary": "",
                "rpc_origins": [], "interactions_endpoint_url": None,
            })  # fmt: skip
        if request.method == "GET" and len(parts) == 2 and parts[0] == "channels":
            with self._lock:
                known = self._channels.get(parts[1]) or self.threads.get(parts[1])
            if known is None:
                return _json({"message": "Unknown Channel", "code": 10003}, status=404)
            return _json(known)
        if (
            request.method == "GET"
            and len(parts) == 3
            and parts[:1] + parts[2:]
            == [
                "channels",
                "messages",
            ]
        ):
            return self._channel_history(parts[1], request.query)
        if request.method == "POST" and len(parts) == 3 and parts[0] == "channels":
            with self._lock:
                channel = self._channels.get(parts[1])
            if channel is None:
                return _json({"message": "Unknown Channel", "code": 10003}, status=404)
            body = await request.json()
            if parts[2] == "messages":
                return await self._post_message(channel, body)
            if parts[2] == "threads":
                return await self._create_thread(channel, body)
        return _json({"message": "404: Not Found", "code": 0}, status=404)

    def _channel_history(self, channel_id: str, query: Mapping[str, str]) -> web.Response:
        """``GET /channels/{id}/messages`` (``after``, ``before``, ``limit`` 1–100, default
        50): the channel's messages, newest first, as Discord returns them."""
        with self._lock:
            if channel_id not in self._channels and channel_id not in self.threads:
                return _json({"message": "Unknown Channel", "code": 10003}, status=404)
            found = list(self._history.get(channel_id, []))
        limit = max(1, min(100, int(query.get("limit", "50"))))
        if "after" in query:
            found = [m for m in found if int(m["id"]) > int(query["after"])][:limit]
        elif "before" in query:
            found = [m for m in found if int(m["id"]) < int(query["before"])][-limit:]
        else:
            found = found[-limit:]
        return _json(found[::-1])

    async def _post_message(self, channel: dict[str, Any], body: dict[str, Any]) -> web.Response:
        content = body.get("content")
        if not isinstance(content, str) or not content.strip() or len(content) > MAX_CONTENT:
            return _json(
                {"message": "Invalid Form Body", "code": 50035,
                 "errors": {"content": {"_errors": [{"code": "BASE_TYPE_BAD_LENGTH",
                                                     "message": "Must be 1-2000 in length."}]}}},
                status=400,
            )  # fmt: skip
        message = self._message(channel, self.bot, content)
        with self._lock:
            self.posted.append(message)
            self._lock.notify_all()
        await self._dispatch("MESSAGE_CREATE", message)
        return _json(message)

    async def _create_thread(self, channel: dict[str, Any], body: dict[str, Any]) -> web.Response:
        name = body.get("name")
        duration = body.get("auto_archive_duration", 4320)
        if channel["type"] != 0:
            return _json(
                {"message": "Cannot execute action on this channel type", "code": 50024},
                status=400,
            )
        if (
            not isinstance(name, str)
            or not 1 <= len(name) <= 100
            or duration not in {60, 1440, 4320, 10080}
        ):
            return _json({"message": "Invalid Form Body", "code": 50035}, status=400)
        thread = self._new_thread(
            channel["id"], name, BOT_ID, int(duration), int(body.get("type", 11))
        )
        await self._dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return _json(thread, status=201)

    # ------------------------------------------------------------------ serving

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{path:.*}", self._http)
        await self._serve_app(app)

    async def _close(self) -> None:
        for socket, _ in list(self._sockets):
            await socket.close()
        await super()._close()
