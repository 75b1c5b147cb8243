"""The ``slack`` adapter: a Slack app receiving through the Events API (signed HTTP requests)
and answering with ``chat.postMessage`` (slack_sdk).

Settings (``gateway.platforms.slack`` in config.yaml):

- ``bot_token`` (or ``bot_token_env``) — the app's ``xoxb-`` token; required.
- ``signing_secret`` (or ``signing_secret_env``) — the app's signing secret; required: every
  request is checked against it (``X-Slack-Signature``, five-minute window).
- ``host`` (``127.0.0.1``), ``port`` (``8646``; ``0`` picks a free one), ``path``
  (``/slack/events``) — where the Request URL (events and slash commands) is served; put it
  behind your HTTPS reverse proxy.
- ``base_url`` — the Web API root (slack_sdk's option; default Slack's).

Conversations map to the SPEC G1 keys: a DM (``im``) is a DM; in a channel, private channel or
group DM each user has their own session; a message inside a thread (its ``thread_ts`` differs
from its ``ts``) belongs to the thread's shared session. An event is answered 2xx only once it
is stored; Slack's retries of an event already stored are acknowledged and not stored twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    Attachment,
    ChatType,
    Deliver,
    Delivery,
    DeliveryRefused,
    PlatformEvent,
    UserFacingError,
    build_session_key,
)
from hermes_hookspecs.adapter_kit import (
    AnswerTasks,
    CursorFile,
    HttpServer,
    RecentIds,
    SettingsReader,
    StoredPrefix,
    answer_text,
    one_line,
    split_text,
    start_http_server,
    unless_too_old,
)

if TYPE_CHECKING:
    from aiohttp import web
    from slack_sdk.signature import SignatureVerifier
    from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger("hermes.gateway.slack")

MESSAGE_CHARS = 4000
"""Slack truncates past 40,000 characters and advises 4,000; longer answers are split."""
THREAD_CATCH_UP_SECONDS = 7 * 24 * 3600
"""Threads whose last stored reply is older than this are not read back at a start (one
``conversations.replies`` call each)."""
MAX_BODY_BYTES = 1 << 20
DEFAULTS: Mapping[str, Any] = {
    "host": "127.0.0.1",
    "port": 8646,
    "path": "/slack/events",
    "base_url": "https://slack.com/api/",
    "ack_wait_seconds": 2.5,
}
CHAT_TYPES: Mapping[str, ChatType] = {
    "im": "dm",
    "mpim": "group",
    "channel": "group",
    "group": "group",
}
TAKEN_SUBTYPES = frozenset({"file_share", "thread_broadcast"})
MENTION = re.compile(r"^\s*<@(?P<user>[A-Z0-9]+)(?:\|[^>]*)?>[\s:,]*")


def event_from_message(event: Mapping[str, Any], bot_user: str | None) -> PlatformEvent | None:
    """The gateway event of a ``message`` or ``app_mention`` event; None for what is not for
    the agent (the bot's own messages, edits, deletions, joins…)."""
    if event.get("type") not in {"message", "app_mention"}:
        return None
    subtype = event.get("subtype")
    if subtype is not None and subtype not in TAKEN_SUBTYPES:
        return None
    user = event.get("user")
    if event.get("bot_id") or not isinstance(user, str) or user == bot_user:
        return None
    text = str(event.get("text") or "")
    mention = MENTION.match(text)
    if mention is not None and mention["user"] == bot_user:
        text = text[mention.end() :]
    attachments = tuple(
        Attachment(f"file {item.get('name') or 'unnamed'}", None, item.get("mimetype"))
        for item in event.get("files") or []
        if isinstance(item, dict)
    )
    if not text.strip() and not attachments:
        return None
    channel = str(event.get("channel", ""))
    kind = event.get("channel_type") or ("im" if channel.startswith("D") else "channel")
    chat_type: ChatType = CHAT_TYPES.get(str(kind), "group")
    ts = str(event.get("ts", ""))
    thread_ts = event.get("thread_ts")
    thread_id: str | None = None
    if isinstance(thread_ts, str) and thread_ts != ts:
        chat_type, thread_id = "thread", thread_ts
    return PlatformEvent(
        platform="slack",
        chat_id=channel,
        text=text,
        chat_type=chat_type,
        user_id=user,
        thread_id=thread_id,
        message_id=ts or None,
        attachments=attachments,
        sent_at=_seconds(ts),
    )


def _seconds(ts: str) -> float | None:
    try:
        return float(ts)
    except ValueError:
        return None


def event_from_command(fields: Mapping[str, str]) -> PlatformEvent | None:
    """The gateway event of a slash command (``/title Trip`` as the user typed it)."""
    command, channel = fields.get("command", ""), fields.get("channel_id", "")
    if not command.startswith("/") or not channel:
        return None
    text = f"{command} {fields.get('text', '')}".strip()
    direct = channel.startswith("D") or fields.get("channel_name") == "directmessage"
    return PlatformEvent(
        platform="slack",
        chat_id=channel,
        text=text,
        chat_type="dm" if direct else "group",
        user_id=fields.get("user_id") or None,
    )


class SlackAdapter:
    """A Slack app: the Events API served over aiohttp, answers through slack_sdk."""

    name = "slack"
    label = "Slack"
    short_label = "slack"
    interactive = True
    gateway = True
    supports_threads = True
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._token = ""
        self._verifier: SignatureVerifier | None = None
        self._client: AsyncWebClient | None = None
        self._server: HttpServer | None = None
        self._bot_user: str | None = None
        self._seen = RecentIds(2048)
        self._on_the_way: dict[str, Delivery] = {}
        self._cursors: CursorFile | None = None
        self._order: dict[str, StoredPrefix[str]] = {}
        self._max_age: float | None = None
        self._replies = AnswerTasks()
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the server starts in :meth:`start`)."""
        from slack_sdk.signature import SignatureVerifier

        read = SettingsReader("slack", config, DEFAULTS)
        self._token = read.secret("bot_token", "the app's xoxb- bot token")
        secret = read.secret("signing_secret", "requests from Slack are checked with it")
        read.port()
        read.url("base_url")
        read.number("ack_wait_seconds", positive=True)
        self._max_age = read.optional_seconds("catch_up_max_age")
        self._verifier = SignatureVerifier(secret)
        self._settings = read.values

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Post ``text`` to a conversation (in the thread ``thread_id``); the last ``ts``."""
        from slack_sdk import WebClient

        client = WebClient(token=self._token, base_url=str(self._settings["base_url"]))
        last: str | None = None
        for piece in split_text(text, MESSAGE_CHARS):
            answer = client.chat_postMessage(channel=chat_id, text=piece, thread_ts=thread_id)
            last = str(answer["ts"])
        return last

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a Slack conversation."""
        kind: ChatType = chat_type if chat_type in {"dm", "group", "channel", "thread"} else "dm"  # type: ignore[assignment]
        return build_session_key("slack", kind, chat_id, user_id, thread_id)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Post a seed message ``title`` in the conversation and return its ``ts``, the
        thread's anchor; None when Slack refuses it (the caller uses the channel itself)."""
        from slack_sdk.errors import SlackApiError

        try:
            return self.send(chat_id, title)
        except SlackApiError as error:
            log.warning("slack: no thread in %s: %s", chat_id, error.response.get("error"))
            return None

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Check the token with ``auth.test``, then serve the Request URL."""
        from aiohttp import web
        from slack_sdk.errors import SlackApiError
        from slack_sdk.web.async_client import AsyncWebClient

        self.connect(config)
        settings = self._settings
        client = AsyncWebClient(token=self._token, base_url=str(settings["base_url"]))
        try:
            identity = await client.auth_test()
        except SlackApiError as error:
            code = error.response.get("error")
            raise UserFacingError(
                f"gateway.platforms.slack.bot_token was refused by Slack ({code})"
            ) from None
        except Exception as error:
            raise UserFacingError(
                f"cannot reach the Slack Web API at {settings['base_url']}: {one_line(error)}"
            ) from None
        self._bot_user = str(identity.get("user_id") or "") or None
        self._client = client
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app["deliver"] = deliver
        app.router.add_post(str(settings["path"]), self._receive)
        server = await start_http_server(app, str(settings["host"]), int(settings["port"]))
        self._server = server
        self.address = f"http://{server.host}:{server.port}{settings['path']}"
        self._cursors = CursorFile.of(config)
        self._replies.spawn(self._catch_up(client, deliver))
        log.info("slack events endpoint at %s (bot user %s)", self.address, self._bot_user)

    async def stop(self) -> None:
        """Stop serving, then post the answers still going out."""
        if self._server is not None:
            await self._server.stop()
            self._server = None
        await self._replies.wait()
        self._client = None

    # ------------------------------------------------------------------ one request

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        body = await request.read()
        assert self._verifier is not None
        if not self._verifier.is_valid(
            body,
            request.headers.get("X-Slack-Request-Timestamp", ""),
            request.headers.get("X-Slack-Signature", ""),
        ):
            return self._refuse(request, 401, "missing, wrong or stale Slack signature")
        if request.content_type == "application/x-www-form-urlencoded":
            fields = dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace")))
            command = event_from_command(fields)
            if command is None:
                return self._refuse(request, 400, "a form body that is not a slash command")
            return await self._take(request, command, None)
        try:
            payload = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._refuse(request, 400, "malformed JSON")
        if not isinstance(payload, dict):
            return self._refuse(request, 400, "the body must be a JSON object")
        if payload.get("type") == "url_verification":
            return web.json_response({"challenge": payload.get("challenge")})
        if payload.get("type") != "event_callback" or not isinstance(payload.get("event"), dict):
            return web.Response(status=200)  # other envelopes: nothing for the agent
        event_data: dict[str, Any] = payload["event"]
        event = event_from_message(event_data, self._bot_user)
        if event is None:
            return web.Response(status=200)
        # A mention arrives as a ``message`` and an ``app_mention``, and Slack retries what it
        # thinks was not acknowledged: one message is taken once.
        identity = f"{event.chat_id}:{event.message_id}"
        on_the_way = self._on_the_way.get(identity)
        if on_the_way is not None:  # Slack's retry of one still being stored: wait for it
            return await self._acknowledge(request, identity, on_the_way)
        if not self._seen.begin(identity):
            return web.Response(status=200)
        return await self._take(request, event, identity)

    async def _catch_up(self, client: AsyncWebClient, deliver: Deliver) -> None:
        """Deliver, oldest first, what each known conversation got after its last stored ts:
        its top-level messages (``conversations.history``), and the replies in each thread
        the gateway took part in (``conversations.replies``: history leaves them out)."""
        cursors = self._cursors
        if cursors is None:
            return
        for key in cursors.keys(prefix="conversation:"):
            channel = key.removeprefix("conversation:")
            found = await self._read_since(
                client.conversations_history, channel, oldest=cursors.get(key)
            )
            self._deliver_caught_up(deliver, channel, found)
        quiet_since = time.time() - THREAD_CATCH_UP_SECONDS
        for key in cursors.keys(prefix="thread:"):
            channel, _, thread_ts = key.removeprefix("thread:").partition(":")
            oldest = float(cursors.get(key) or 0)
            if oldest < quiet_since:
                continue  # a thread quiet for a week: not read at every start
            found = await self._read_since(client.conversations_replies, channel, ts=thread_ts)
            later = [
                m for m in found if float(m.get("ts", 0)) > oldest and m.get("ts") != thread_ts
            ]
            self._deliver_caught_up(deliver, channel, later)

    @staticmethod
    async def _read_since(
        method: Callable[..., Awaitable[Any]], channel: str, **arguments: Any
    ) -> list[dict[str, Any]]:
        """Every message a paged Web API read of ``channel`` gives (empty, with one log line,
        on failure)."""
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        try:
            while True:
                page = await method(channel=channel, limit=200, cursor=cursor, **arguments)
                found.extend(m for m in page.get("messages") or [] if isinstance(m, dict))
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not page.get("has_more") or not cursor:
                    return found
        except Exception as error:
            log.warning("slack: no catch-up in %s: %s", channel, one_line(error))
            return []

    def _deliver_caught_up(
        self, deliver: Deliver, channel: str, messages: list[dict[str, Any]]
    ) -> None:
        for message in sorted(messages, key=lambda m: float(m.get("ts", 0))):
            event = event_from_message({**message, "channel": channel}, self._bot_user)
            identity = f"{channel}:{event.message_id}" if event is not None else ""
            if event is not None and self._seen.begin(identity):
                self._start(deliver, event, identity)

    async def _take(
        self, request: web.Request, event: PlatformEvent, identity: str | None
    ) -> web.StreamResponse:
        deliver: Deliver = request.app["deliver"]
        delivery = self._start(deliver, event, identity)
        return await self._acknowledge(request, identity or f"command:{id(delivery)}", delivery)

    def _start(self, deliver: Deliver, event: PlatformEvent, identity: str | None) -> Delivery:
        """Deliver ``event`` and answer it aside; it is on its way until stored."""
        delivery = deliver(unless_too_old(event, self._max_age))
        if event.message_id is not None:
            self._order.setdefault(event.chat_id, StoredPrefix()).add(event.message_id)
        self._replies.spawn(self._answer(event, delivery))
        self._on_the_way[identity or f"command:{id(delivery)}"] = delivery
        return delivery

    async def _acknowledge(
        self, request: web.Request, identity: str, delivery: Delivery
    ) -> web.StreamResponse:
        """200 once the event is stored, within Slack's three seconds: 503 while it is still
        on its way (Slack retries), or when the gateway refused it."""
        from aiohttp import web

        wait = float(self._settings["ack_wait_seconds"])
        try:
            await asyncio.wait_for(delivery.stored(), wait)
        except TimeoutError:
            return self._refuse(request, 503, f"not stored within {wait:g}s; Slack will retry")
        except DeliveryRefused as error:
            self._forget(identity, taken=False)
            return self._refuse(request, 503, str(error))
        self._forget(identity, taken=True)
        return web.Response(status=200)

    def _remember_stored(self, channel: str, ts: str) -> None:
        """Move the conversation's catch-up point past ``ts`` once all before it are stored."""
        order = self._order.get(channel)
        if order is None or not order.done(ts) or order.confirmable is None or not self._cursors:
            return
        try:
            self._cursors.save(f"conversation:{channel}", order.confirmable)
        except OSError as error:
            log.error("slack: the catch-up position was not saved: %s", one_line(error))

    def _remember_thread(self, channel: str, thread_ts: str, ts: str) -> None:
        """Keep the thread's catch-up point at its newest stored reply (a thread is one chat:
        its replies are stored in order)."""
        if not self._cursors:
            return
        key = f"thread:{channel}:{thread_ts}"
        try:
            if float(ts) > float(self._cursors.get(key) or 0):
                self._cursors.save(key, ts)
        except OSError as error:
            log.error("slack: the catch-up position was not saved: %s", one_line(error))

    def _forget(self, identity: str, *, taken: bool) -> None:
        self._on_the_way.pop(identity, None)
        if taken:
            self._seen.taken(identity)
        else:
            self._seen.dropped(identity)

    async def _answer(self, event: PlatformEvent, delivery: Delivery) -> None:
        identity = f"{event.chat_id}:{event.message_id}" if event.message_id else None
        try:
            await delivery.stored()
        except DeliveryRefused:
            if identity is not None:
                self._forget(identity, taken=False)
            return  # the request was answered 503: Slack sends it again
        if identity is not None:
            self._forget(identity, taken=True)
            self._remember_stored(event.chat_id, str(event.message_id))
            if event.thread_id is not None:
                self._remember_thread(event.chat_id, event.thread_id, str(event.message_id))
        try:
            text = answer_text(await delivery.reply())
        except DeliveryRefused as error:
            log.error("slack: no answer for %s: %s", event.chat_id, error)
            return
        client = self._client
        if not text or client is None:
            return
        try:
            for piece in split_text(text, MESSAGE_CHARS):
                await client.chat_postMessage(
                    channel=event.chat_id, text=piece, thread_ts=event.thread_id
                )
        except Exception as error:
            log.error("slack: posting to %s failed: %s", event.chat_id, one_line(error))

    def _refuse(self, request: web.Request, status: int, reason: str) -> web.StreamResponse:
        from aiohttp import web

        log.warning(
            "slack refused a request from %s (HTTP %d): %s", request.remote or "?", status, reason
        )
        return web.json_response({"error": reason}, status=status)
