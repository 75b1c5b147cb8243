"""The ``mattermost`` adapter: a bot account that listens on the server's WebSocket (event
``posted``) and answers with ``POST /api/v4/posts``, through aiohttp (REST API v4, no SDK).

Settings (``gateway.platforms.mattermost``): ``url`` and ``token`` (or ``token_env``),
required; ``catch_up_max_age`` (seconds, optional). A direct message is a DM, a group message a
group, a channel a channel (each per user); a post in a thread (``root_id``) belongs to the
thread's shared session and is answered in it. Each channel's last stored ``create_at`` is kept
between runs: at every (re)connection the posts after it are read first (catch-up).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from hermes_hookspecs import (
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
    Backoff,
    CursorFile,
    LoopBridge,
    RecentIds,
    SettingsReader,
    StoredPrefix,
    answer_text,
    is_stopping,
    one_line,
    sleep_unless,
    unless_too_old,
)

from .posts import created_ms, event_from_post, posted_of_frame
from .rest import MESSAGE_CHARS, ApiError, MattermostRest

__all__ = ["MESSAGE_CHARS", "MattermostAdapter", "event_from_post"]

log = logging.getLogger("hermes.gateway.mattermost")

CURSOR_PREFIX = "channel:"
Place = tuple[int, str]  # a post's place in its channel: its create_at and id


class MattermostAdapter:
    """A Mattermost bot: WebSocket events in, REST posts out (aiohttp)."""

    name = "mattermost"
    label = "Mattermost"
    short_label = "mm"
    interactive = True
    gateway = True
    supports_threads = True
    reapable = False

    def __init__(self) -> None:
        self._rest: MattermostRest | None = None
        self._max_age: float | None = None
        self._bot_id, self._bot_name = "", ""
        self._deliver: Deliver | None = None
        self._bridge = LoopBridge("mattermost")
        self._listening: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._connected = asyncio.Event()
        self._seen = RecentIds()
        self._retry = Backoff(first=1.0, ceiling=30.0)
        self._order: dict[str, StoredPrefix[Place]] = {}
        self._kinds: dict[str, str] = {}
        self._cursors: CursorFile | None = None
        self._answers = AnswerTasks()
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take and check the settings (the connection opens in :meth:`start`)."""
        read = SettingsReader("mattermost", config)
        url = read.text("url", required=True, what="the server's address, https://chat.example.com")
        if not url or not url.startswith(("http://", "https://")):
            raise read.problem("url", "must start with http:// or https://")
        self._rest = MattermostRest(url, read.secret("token", "the bot account's access token"))
        self._max_age = read.optional_seconds("catch_up_max_age")

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Post ``text`` to channel ``chat_id`` (in the thread ``thread_id``); the last post's
        id. Blocking: call it off the gateway's loop while the adapter runs."""
        rest = self._rest
        if rest is None:
            raise UserFacingError("the mattermost platform is not running")
        return self._bridge.call(lambda: rest.post(chat_id, text, thread_id))

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a Mattermost conversation."""
        kinds: dict[str, ChatType] = {"dm": "dm", "group": "group", "thread": "thread"}
        kind = kinds.get(chat_type, "channel")
        return build_session_key("mattermost", kind, chat_id, user_id, thread_id)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Post ``title`` in the channel; its id is the thread's root (replies carry it as
        ``root_id``). None when Mattermost refuses the post."""
        try:
            return self.send(chat_id, title)
        except ApiError as error:
            log.warning("mattermost: no thread in %s: %s", chat_id, error)
            return None

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Check the token (``GET /users/me``), then listen on the WebSocket."""
        self.connect(config)
        rest = self._rest
        assert rest is not None
        self._bot_id, self._bot_name = await rest.me()
        self._deliver, self._cursors = deliver, CursorFile.of(config)
        self._stop.clear()
        self._connected.clear()
        self._bridge.bind()
        self._listening = asyncio.ensure_future(self._listen())
        with contextlib.suppress(TimeoutError):  # the first connection and its catch-up
            await asyncio.wait_for(self._connected.wait(), 15)
        self.address = f"@{self._bot_name} on {rest.url}"
        log.info("mattermost: listening as @%s on %s", self._bot_name, rest.url)

    async def stop(self) -> None:
        """Stop listening, finish the answers going out, close the connection."""
        self._stop.set()
        if self._listening is not None:
            self._listening.cancel()
            await asyncio.gather(self._listening, return_exceptions=True)
            self._listening = None
        await self._answers.wait()
        if self._rest is not None:
            await self._rest.close()
        self._bridge.unbind()

    # ------------------------------------------------------------------ receiving

    async def _listen(self) -> None:
        """Connect, catch up, read ``posted`` events; reconnect with a growing pause."""
        import aiohttp

        rest = self._rest
        assert rest is not None
        pause = Backoff(first=1.0, ceiling=30.0)
        while not self._stop.is_set():
            try:
                async with rest.open().ws_connect(rest.socket_url, heartbeat=30) as socket:
                    await rest.authenticate(socket)
                    await self._catch_up()  # live events wait in the socket meanwhile
                    if pause.failures:
                        log.info("mattermost: connected again to %s", rest.url)
                    pause.reset()
                    self._connected.set()
                    async for frame in socket:
                        if frame.type == aiohttp.WSMsgType.TEXT:
                            posted = posted_of_frame(str(frame.data))
                            if posted is not None:
                                self._take(*posted)
                problem = "the server closed the connection"
            except asyncio.CancelledError:
                raise
            except Exception as error:
                problem = one_line(error)
            if self._stop.is_set():
                return
            wait = pause.next_pause()
            log.warning("mattermost: WebSocket lost (%s); reconnecting in %.0fs", problem, wait)
            await sleep_unless(wait, self._stop)

    async def _catch_up(self) -> None:
        """Deliver, oldest first, what each known channel got since its last stored post."""
        cursors, rest = self._cursors, self._rest
        if cursors is None or rest is None:
            return
        for key in cursors.keys(CURSOR_PREFIX):
            channel = key.removeprefix(CURSOR_PREFIX)
            since, kind, last = [*str(cursors.get(key)).split(":"), "", ""][:3]
            try:  # from the last stored post's millisecond on, that post excepted
                found = await rest.posts_since(channel, int(since or 0), but=last)
            except Exception as error:
                log.warning("mattermost: no catch-up in %s: %s", channel, one_line(error))
                continue
            for post in found:
                self._take(post, kind)

    def _take(self, post: Mapping[str, Any], channel_type: str, sender: str | None = None) -> None:
        event = event_from_post(post, channel_type, self._bot_id, self._bot_name, sender)
        deliver = self._deliver
        if event is None or event.message_id is None or deliver is None or self._stop.is_set():
            return
        if not self._seen.begin(event.message_id):
            return  # delivered twice (a reconnection's catch-up, a repeated event)
        self._kinds[event.chat_id] = channel_type
        place = (created_ms(post), event.message_id)
        if self._cursors is not None and self._cursors.get(CURSOR_PREFIX + event.chat_id) is None:
            self._save(event.chat_id, (place[0] - 1, ""))  # a new channel: read from this post on
        self._order.setdefault(event.chat_id, StoredPrefix()).add(place)
        delivery = deliver(unless_too_old(event, self._max_age))
        self._answers.spawn(self._answer(event, place, delivery))

    # ------------------------------------------------------------------ answering

    async def _answer(self, event: PlatformEvent, place: Place, delivery: Delivery) -> None:
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            self._seen.dropped(place[1])
            log.warning("mattermost: a post in %s was not taken (%s)", event.chat_id, error)
            if not is_stopping(error):  # read again after a pause (else at the next start)
                await sleep_unless(self._retry.next_pause(), self._stop)
                await self._catch_up()
            return
        self._retry.reset()
        self._seen.taken(place[1])
        self._remember(event.chat_id, place)
        try:
            text = answer_text(await delivery.reply())
            if text:
                assert self._rest is not None
                await self._rest.post(event.chat_id, text, event.thread_id)
        except Exception as error:
            log.error("mattermost: no answer in %s: %s", event.chat_id, one_line(error))

    def _remember(self, channel: str, place: Place) -> None:
        """Move the channel's catch-up point once every post before ``place`` is stored."""
        order = self._order.get(channel)
        if order is not None and order.done(place) and order.confirmable is not None:
            self._save(channel, order.confirmable)

    def _save(self, channel: str, place: Place) -> None:
        value = f"{place[0]}:{self._kinds[channel]}:{place[1]}"  # create_at, type, post id
        try:
            if self._cursors is not None:
                self._cursors.save(CURSOR_PREFIX + channel, value)
        except OSError as error:
            log.error("mattermost: the catch-up position was not saved: %s", one_line(error))
