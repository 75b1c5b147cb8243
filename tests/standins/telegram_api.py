"""A STAND-IN for the Telegram Bot API, for tests only.

It is not Telegram: it is written from the public Bot API documentation
(https://core.telegram.org/bots/api) for the methods the ``hermes-platform-telegram`` adapter
calls, and holds its chats, topics and pending updates in memory. It binds 127.0.0.1 only.

What it serves, like the real service, under ``/bot<token>/<method>`` (GET or POST; parameters
in the query string, ``application/x-www-form-urlencoded``, ``multipart/form-data`` or JSON;
every answer ``{"ok": true, "result": …}`` or ``{"ok": false, "error_code", "description"}``):

- ``getMe`` — the bot's ``User``;
- ``getUpdates`` (``offset``, ``limit``, ``timeout``, ``allowed_updates``) — long polling: the
  pending updates with ``update_id >= offset``, waiting up to ``timeout`` seconds for one;
  calling it with an ``offset`` confirms (forgets) every update below it;
- ``sendMessage`` (``chat_id``, ``text`` of 1–4096 characters, ``message_thread_id``,
  ``reply_parameters``) — the sent ``Message``; an unknown chat, an unknown topic or a bad
  text is a 400 with Telegram's description;
- ``createForumTopic`` (``chat_id``, ``name`` of 1–128 characters) — a ``ForumTopic``; only
  in a supergroup that is a forum ("Bad Request: the chat is not a forum" otherwise);
- ``deleteWebhook`` — accepted (there is never a webhook here).

A wrong token is a 401 "Unauthorized", an unknown method a 404 "Not Found"; flood control
(``flood``) answers 429 "Too Many Requests: retry after N" with ``parameters.retry_after``. Privacy mode is
not modelled: the bot sees every message of its groups.

In a test::

    with TelegramStandIn() as telegram:
        alice = telegram.user("Alice")
        telegram.user_says(telegram.private_chat(alice), alice, "hello")
        ... point python-telegram-bot at telegram.base_url / telegram.base_file_url ...
        telegram.wait_for_sent(1)        # the messages the bot sent, as dicts
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from standins.threaded import ThreadedStandIn

TOKEN = "123456789:STANDIN-token-for-tests"
BOT_ID = 123456789
INTEGER_FIELDS = frozenset(
    {"offset", "limit", "timeout", "message_thread_id", "icon_color", "reply_to_message_id"}
)
JSON_FIELDS = frozenset({"allowed_updates", "reply_parameters", "entities", "reply_markup"})


class BotAPIError(Exception):
    """An error answer of the Bot API (``retry_after``: flood control's ``parameters``)."""

    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after


@dataclass
class _Chat:
    data: dict[str, Any]
    topics: dict[int, str] = field(default_factory=dict)


class TelegramStandIn(ThreadedStandIn):
    """The stand-in Bot API server (aiohttp on its own thread and event loop)."""

    thread_name = "telegram-standin"

    def __init__(self, token: str = TOKEN, username: str = "hermes_standin_bot") -> None:
        super().__init__()
        self.token = token
        self.bot = {
            "id": BOT_ID,
            "is_bot": True,
            "first_name": "Hermes",
            "username": username,
            "can_join_groups": True,
            "can_read_all_group_messages": True,
            "supports_inline_queries": False,
        }
        self.sent: list[dict[str, Any]] = []
        """Every message the bot sent (the ``Message`` objects, in order)."""
        self.calls: list[tuple[str, float, dict[str, Any]]] = []
        """Every method called, when (``time.monotonic()``), with its decoded parameters."""
        self.seen_updates: list[dict[str, Any]] = []
        """Every update ever queued."""
        self.confirmed_below = 0
        """The highest ``offset`` a ``getUpdates`` call confirmed."""
        self._chats: dict[int, _Chat] = {}
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1000)
        self._message_ids = itertools.count(1)
        self._user_ids = itertools.count(5001)
        self._lock = threading.Condition()
        self._arrived: asyncio.Event | None = None
        self._floods: dict[str, list[int]] = {}

    # ------------------------------------------------------------------ test side

    @property
    def base_url(self) -> str:
        """What python-telegram-bot's ``base_url`` takes (the token is appended to it)."""
        return f"http://127.0.0.1:{self._port}/bot"

    @property
    def base_file_url(self) -> str:
        """What python-telegram-bot's ``base_file_url`` takes."""
        return f"http://127.0.0.1:{self._port}/file/bot"

    def user(self, first_name: str) -> dict[str, Any]:
        """A new Telegram user."""
        return {"id": next(self._user_ids), "is_bot": False, "first_name": first_name}

    def private_chat(self, user: Mapping[str, Any]) -> dict[str, Any]:
        """The bot's private chat with ``user``."""
        chat = {"id": user["id"], "type": "private", "first_name": user["first_name"]}
        with self._lock:
            self._chats.setdefault(int(user["id"]), _Chat(chat))
        return chat

    def supergroup(self, chat_id: int, title: str, *, forum: bool = False) -> dict[str, Any]:
        """A supergroup the bot is in (``forum``: topics enabled). Ids are negative."""
        chat: dict[str, Any] = {"id": chat_id, "type": "supergroup", "title": title}
        if forum:
            chat["is_forum"] = True
        with self._lock:
            self._chats.setdefault(chat_id, _Chat(chat))
        return chat

    def topic(self, chat: Mapping[str, Any], name: str) -> int:
        """A forum topic someone opened in ``chat``; its ``message_thread_id``."""
        return self._create_topic(int(chat["id"]), name)

    def user_says(
        self,
        chat: Mapping[str, Any],
        user: Mapping[str, Any],
        text: str,
        *,
        thread_id: int | None = None,
    ) -> int:
        """Queue the update of ``user`` writing ``text`` in ``chat`` (in a topic with
        ``thread_id``); returns its ``update_id``."""
        message: dict[str, Any] = {
            "message_id": next(self._message_ids),
            "from": dict(user),
            "chat": dict(chat),
            "date": int(time.time()),
            "text": text,
        }
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
        if text.startswith("/"):
            command = text.split()[0]
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
        with self._lock:
            update_id = next(self._update_ids)
            self._updates.append({"update_id": update_id, "message": message})
            self.seen_updates.append(self._updates[-1])
            self._lock.notify_all()
        if self._loop is not None and self._arrived is not None:
            self._loop.call_soon_threadsafe(self._arrived.set)
        return update_id

    def wait_for_sent(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Block until the bot has sent ``count`` messages; all it sent so far."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.sent) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the bot sent {len(self.sent)} messages, not {count}")
                self._lock.wait(left)
            return list(self.sent)

    def send_again(self, update_id: int) -> None:
        """Queue a confirmed update again, as Telegram does when a bot died before a
        ``getUpdates`` confirmed it (the same ``update_id`` and message)."""
        with self._lock:
            (update,) = [u for u in self.seen_updates if u["update_id"] == update_id]
            self._updates.insert(0, dict(update))
            self._lock.notify_all()
        if self._loop is not None and self._arrived is not None:
            self._loop.call_soon_threadsafe(self._arrived.set)

    def flood(self, method: str, times: int, retry_after: int) -> None:
        """The next ``times`` calls of ``method`` are refused by flood control: HTTP 429
        "Too Many Requests: retry after N" with ``parameters.retry_after`` (the Bot API's
        answer when a bot sends too fast)."""
        with self._lock:
            self._floods[method] = [retry_after] * times

    def calls_of(self, method: str) -> list[tuple[float, dict[str, Any]]]:
        """When (``time.monotonic()``) ``method`` was called, with its parameters."""
        with self._lock:
            return [(moment, params) for name, moment, params in self.calls if name == method]

    def pending_updates(self) -> int:
        """Updates not confirmed by a ``getUpdates`` offset yet."""
        with self._lock:
            return len(self._updates)

    def topics(self, chat_id: int) -> dict[int, str]:
        with self._lock:
            return dict(self._chats[chat_id].topics)

    # ------------------------------------------------------------------ the methods

    def _create_topic(self, chat_id: int, name: str) -> int:
        with self._lock:
            chat = self._chats.get(chat_id)
            if chat is None:
                raise BotAPIError(400, "Bad Request: chat not found")
            if not chat.data.get("is_forum"):
                raise BotAPIError(400, "Bad Request: the chat is not a forum")
            if not 1 <= len(name) <= 128:
                raise BotAPIError(400, "Bad Request: invalid forum topic name specified")
            thread_id = next(self._message_ids)
            chat.topics[thread_id] = name
            return thread_id

    async def _get_updates(self, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        offset = params.get("offset")
        limit = max(1, min(100, int(params.get("limit", 100))))
        timeout = max(0, int(params.get("timeout", 0)))
        allowed = params.get("allowed_updates")
        with self._lock:
            if offset is not None:
                self.confirmed_below = max(self.confirmed_below, int(offset))
                self._updates = [u for u in self._updates if u["update_id"] >= int(offset)]
        deadline = time.monotonic() + timeout
        assert self._arrived is not None
        while True:
            with self._lock:
                found = [
                    u for u in self._updates if not allowed or any(kind in u for kind in allowed)
                ][:limit]
            left = deadline - time.monotonic()
            if found or left <= 0:
                return found
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), min(left, 0.5))

    def _send_message(self, params: Mapping[str, Any]) -> dict[str, Any]:
        chat_id = params.get("chat_id")
        text = params.get("text")
        with self._lock:
            chat = self._chats.get(int(chat_id)) if _is_int(chat_id) else None
            if chat is None:
                raise BotAPIError(400, "Bad Request: chat not found")
            if not isinstance(text, str) or not text.strip():
                raise BotAPIError(400, "Bad Request: message text is empty")
            if len(text) > 4096:
                raise BotAPIError(400, "Bad Request: message is too long")
            thread_id = params.get("message_thread_id")
            if thread_id is not None and int(thread_id) not in chat.topics:
                raise BotAPIError(400, "Bad Request: message thread not found")
            message: dict[str, Any] = {
                "message_id": next(self._message_ids),
                "from": {k: self.bot[k] for k in ("id", "is_bot", "first_name", "username")},
                "chat": dict(chat.data),
                "date": int(time.time()),
                "text": text,
            }
            if thread_id is not None:
                message["message_thread_id"] = int(thread_id)
                message["is_topic_message"] = True
            self.sent.append(message)
            self._lock.notify_all()
            return dict(message)

    async def _call(self, method: str, params: dict[str, Any]) -> Any:
        with self._lock:
            self.calls.append((method, time.monotonic(), params))
            flooded = self._floods.get(method)
            if flooded:
                wait = flooded.pop()
                raise BotAPIError(429, f"Too Many Requests: retry after {wait}", wait)
        simple: dict[str, Callable[[], Any]] = {
            "getMe": lambda: dict(self.bot),
            "deleteWebhook": lambda: True,
            "sendMessage": lambda: self._send_message(params),
            "createForumTopic": lambda: {
                "message_thread_id": self._create_topic(
                    int(params.get("chat_id", 0)) if _is_int(params.get("chat_id")) else 0,
                    str(params.get("name", "")),
                ),
                "name": str(params.get("name", "")),
                "icon_color": int(params.get("icon_color", 7322096)),
            },
        }
        if method == "getUpdates":
            return await self._get_updates(params)
        if method not in simple:
            raise BotAPIError(404, "Not Found")
        return simple[method]()

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, request: web.Request) -> web.Response:
        token, method = request.match_info["token"], request.match_info["method"]
        if token != self.token:
            return _error(401, "Unauthorized")
        try:
            params = await _parameters(request)
            result = await self._call(method, params)
        except BotAPIError as error:
            return _error(error.code, error.description, error.retry_after)
        return web.json_response({"ok": True, "result": result})

    async def _serve(self) -> None:
        self._arrived = asyncio.Event()
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        await self._serve_app(app)


def _is_int(value: Any) -> bool:
    try:
        int(value)
    except (TypeError, ValueError):
        return False
    return True


async def _parameters(request: web.Request) -> dict[str, Any]:
    """The method's parameters, from the query string and the body, typed as the API says."""
    raw: dict[str, Any] = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            body = await request.json()
            if not isinstance(body, dict):
                raise BotAPIError(400, "Bad Request: the request body must be a JSON object")
            raw.update(body)
        else:
            form = await request.post()
            raw.update({k: v for k, v in form.items() if isinstance(v, str)})
    params: dict[str, Any] = {}
    for name, value in raw.items():
        if isinstance(value, str) and name in INTEGER_FIELDS:
            if not _is_int(value):
                raise BotAPIError(400, f'Bad Request: field "{name}" must be a number')
            params[name] = int(value)
        elif isinstance(value, str) and name in JSON_FIELDS:
            try:
                params[name] = json.loads(value)
            except json.JSONDecodeError:
                raise BotAPIError(400, f"Bad Request: can't parse {name} JSON object") from None
        else:
            params[name] = value
    return params


def _error(code: int, description: str, retry_after: int | None = None) -> web.Response:
    answer: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if retry_after is not None:
        answer["parameters"] = {"retry_after": retry_after}
    return web.json_response(answer, status=code)
