"""The ``telegram`` adapter: a bot that long-polls the Bot API (``getUpdates``) and answers.

Settings (``gateway.platforms.telegram`` in config.yaml):

- ``token`` (or ``token_env``, the name of an environment variable holding it) — the bot token
  from @BotFather; required.
- ``base_url`` / ``base_file_url`` — a self-hosted Bot API server (python-telegram-bot's
  options of the same names; the token is appended). Default: Telegram's.
- ``poll_timeout_seconds`` (30) — how long one ``getUpdates`` long poll waits.
- ``catch_up_max_age`` (unset) — seconds; a message older than that when it arrives (after a
  long outage) is stored but not answered.

Chats map to the SPEC G1 keys: a private chat is a DM; in a group or supergroup each user has
their own session; a message in a forum topic (``is_topic_message``) is a thread, one session
shared by the topic.

Telegram holds the update offset: an update is confirmed (the next ``getUpdates`` offset) only
once it and every update before it are stored, so what was sent while the gateway was down, or
not stored before a crash, comes again on the next start and is answered once. Updates are
delivered as they arrive — one busy chat never holds up the others. An update the store
refuses is tried again after a pause, and skipped with one log line after three refusals;
flood control (``retry_after``) is waited out as Telegram asks, for polls and for each piece
of a long answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

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
    Backoff,
    LoopBridge,
    RecentIds,
    SettingsReader,
    StoredPrefix,
    answer_text,
    as_seconds,
    is_stopping,
    one_line,
    retry_transient,
    sleep_unless,
    split_text,
    store_down,
    unless_too_old,
)

if TYPE_CHECKING:
    from telegram import Bot, Message, Update

log = logging.getLogger("hermes.gateway.telegram")

MAX_MESSAGE_CHARS = 4096
"""Telegram refuses a longer ``sendMessage`` text; longer answers go in several messages."""
DEFAULTS: Mapping[str, Any] = {
    "base_url": "https://api.telegram.org/bot",
    "base_file_url": "https://api.telegram.org/file/bot",
    "poll_timeout_seconds": 30,
}
CHAT_TYPES: Mapping[str, ChatType] = {
    "private": "dm",
    "group": "group",
    "supergroup": "group",
    "channel": "channel",
}
T = TypeVar("T")


def event_from_message(message: Message) -> PlatformEvent | None:
    """The gateway event of one incoming message; None for what is not for the agent (service
    messages, the bot's own, messages with neither text nor media)."""
    user = message.from_user
    if user is not None and user.is_bot:
        return None
    text = message.text or message.caption or ""
    attachments = _attachments(message)
    if not text and not attachments:
        return None
    chat = message.chat
    chat_type: ChatType = CHAT_TYPES.get(chat.type, "group")
    thread_id: str | None = None
    if message.is_topic_message and message.message_thread_id is not None:
        chat_type = "thread"
        thread_id = str(message.message_thread_id)
    return PlatformEvent(
        platform="telegram",
        chat_id=str(chat.id),
        text=text,
        chat_type=chat_type,
        user_id=str(user.id) if user is not None else None,
        thread_id=thread_id,
        message_id=str(message.message_id),
        attachments=attachments,
        sent_at=message.date.timestamp() if message.date is not None else None,
        user_name=user.full_name if user is not None else None,
        chat_name=chat.title or chat.full_name,
    )


def _attachments(message: Message) -> tuple[Attachment, ...]:
    found: list[Attachment] = []
    if message.photo:
        biggest = message.photo[-1]
        found.append(Attachment(f"photo {biggest.width}x{biggest.height}", None, "image/jpeg"))
    if message.document is not None:
        name = message.document.file_name or "unnamed"
        found.append(Attachment(f"document {name}", None, message.document.mime_type))
    if message.voice is not None:
        found.append(
            Attachment(f"voice message ({message.voice.duration} s)", None, message.voice.mime_type)
        )
    return tuple(found)


class TelegramAdapter:
    """A Telegram bot (python-telegram-bot's ``Bot``) receiving by long polling."""

    name = "telegram"
    label = "Telegram"
    short_label = "tele"
    interactive = True
    gateway = True
    supports_threads = True
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._token = ""
        self._bot: Bot | None = None
        self._bridge = LoopBridge("telegram")
        self._poller: asyncio.Task[None] | None = None
        self._polling = False
        self._stopping = asyncio.Event()
        self._progress = asyncio.Event()
        self._offset: int | None = None
        self._batch: StoredPrefix[int] = StoredPrefix()
        self._recent = RecentIds()
        self._refusal_pause = Backoff()
        self._replies = AnswerTasks()
        self._max_age: float | None = None
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the bot connects in :meth:`start`)."""
        read = SettingsReader("telegram", config, DEFAULTS)
        self._token = read.secret("token", "the bot token from @BotFather")
        read.number("poll_timeout_seconds", whole=True)
        read.url("base_url")
        read.url("base_file_url")
        self._max_age = read.optional_seconds("catch_up_max_age")
        self._settings = read.values

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to a chat (a topic with ``thread_id``); the id of its last message."""
        return self._blocking(lambda bot: self._send(bot, chat_id, text, thread_id))

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a Telegram conversation."""
        kind: ChatType = chat_type if chat_type in {"dm", "group", "channel", "thread"} else "dm"  # type: ignore[assignment]
        return build_session_key("telegram", kind, chat_id, user_id, thread_id)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Open a forum topic named ``title`` in a chat (a forum supergroup, or a private chat
        with topics enabled) and return its ``message_thread_id``; None where the chat has no
        topics (the caller falls back to the chat itself)."""
        from telegram.error import BadRequest

        async def create(bot: Bot) -> str | None:
            try:
                topic = await bot.create_forum_topic(chat_id=_chat(chat_id), name=title[:128])
            except BadRequest as error:
                log.warning("telegram: no topic in chat %s: %s", chat_id, error.message)
                return None
            return str(topic.message_thread_id)

        return self._blocking(create)

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Check the token with ``getMe``, then long-poll for updates."""
        self.connect(config)
        self._stopping = asyncio.Event()
        self._progress = asyncio.Event()
        bot = self._new_bot()
        from telegram.error import InvalidToken

        try:
            await bot.initialize()
        except InvalidToken:
            raise UserFacingError(
                "gateway.platforms.telegram.token was refused by the Bot API (Unauthorized)"
            ) from None
        except Exception as error:
            raise UserFacingError(
                f"cannot reach the Telegram Bot API at {self._settings['base_url']}: "
                f"{one_line(error)}"
            ) from None
        self._bot = bot
        self._bridge.bind()
        self.address = f"https://t.me/{bot.username}"
        self._poller = asyncio.create_task(self._poll(bot, deliver))
        log.info("telegram bot @%s polling %s", bot.username, self._settings["base_url"])

    async def stop(self) -> None:
        """Stop polling (an update half-delivered is finished), send the answers still going
        out, confirm the stored updates to Telegram, and close the bot."""
        self._stopping.set()
        poller, self._poller = self._poller, None
        if poller is not None:
            if self._polling:
                poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller
        await self._replies.wait()
        bot, self._bot = self._bot, None
        if bot is not None:
            if self._offset is not None:
                # Confirms every stored update (a zero-timeout poll; what it returns stays
                # unconfirmed and comes again on the next start).
                with contextlib.suppress(Exception):
                    await bot.get_updates(offset=self._offset, limit=1, timeout=0)
            with contextlib.suppress(Exception):
                await bot.shutdown()
        self._bridge.unbind()

    # ------------------------------------------------------------------ receiving

    def _new_bot(self) -> Bot:
        from telegram import Bot
        from telegram.request import HTTPXRequest

        return Bot(
            self._token,
            base_url=str(self._settings["base_url"]),
            base_file_url=str(self._settings["base_file_url"]),
            request=HTTPXRequest(connection_pool_size=8),
            get_updates_request=HTTPXRequest(),
        )

    async def _poll(self, bot: Bot, deliver: Deliver) -> None:
        from telegram.error import Forbidden, InvalidToken, RetryAfter, TelegramError

        timeout = int(self._settings["poll_timeout_seconds"])
        pause = Backoff()
        while not self._stopping.is_set():
            self._polling = True
            try:
                updates = await bot.get_updates(
                    offset=self._offset,
                    timeout=timeout,
                    allowed_updates=["message", "channel_post"],
                )
            except (InvalidToken, Forbidden) as error:
                log.error("telegram: polling stopped: %s", one_line(error))
                return
            except TelegramError as error:
                asked = _retry_after(error) if isinstance(error, RetryAfter) else None
                seconds = pause.next_pause(asked)
                log.warning("telegram: getUpdates failed (%s); retrying in %.0fs",
                            one_line(error), seconds)  # fmt: skip
                await sleep_unless(seconds, self._stopping)
                continue
            finally:
                self._polling = False
            pause.reset()
            self._progress.clear()
            if not self._take(updates, deliver):
                # Everything returned is on its way already (or nothing came): wait for one
                # of them to be stored before asking again, so the poll never spins.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._progress.wait(), 1.0)

    def _take(self, updates: tuple[Update, ...], deliver: Deliver) -> bool:
        """Deliver the updates not taken yet, in order; True when there was one."""
        new = False
        for update in updates:
            update_id = update.update_id
            if self._stopping.is_set():
                break
            if not self._recent.begin(str(update_id)):
                continue
            new = True
            self._batch.add(update_id)
            message = update.message or update.channel_post
            event = event_from_message(message) if message is not None else None
            if event is None:
                self._stored(update_id)
                continue
            delivery = deliver(unless_too_old(event, self._max_age))
            self._replies.spawn(self._follow(update_id, event, delivery))
        return new

    def _stored(self, update_id: int) -> None:
        self._recent.taken(str(update_id))
        if self._batch.done(update_id) and self._batch.confirmable is not None:
            self._offset = self._batch.confirmable + 1
        self._progress.set()

    async def _follow(self, update_id: int, event: PlatformEvent, delivery: Delivery) -> None:
        """Wait until the update is stored (then it may be confirmed), then answer it."""
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            if is_stopping(error):
                self._stopping.set()  # the gateway stops: so does polling
                self._progress.set()
                return
            down = store_down(error)  # not this update's fault: never skipped for it
            if not down and self._batch.refused(update_id):
                log.error("telegram: update %d skipped: it could not be stored three times (%s)",
                          update_id, error)  # fmt: skip
                self._stored(update_id)
                return
            seconds = self._refusal_pause.next_pause()
            if not down:  # the gateway said it once for all of them
                log.warning("telegram: update %d not stored (%s); trying again in %.0fs",
                            update_id, error, seconds)  # fmt: skip
            # The offset stays before it: the next poll returns it, taken again after the pause.
            await sleep_unless(seconds, self._stopping)
            self._recent.dropped(str(update_id))
            self._progress.set()
            return
        self._refusal_pause.reset()
        self._stored(update_id)
        await self._answer(event, delivery)

    async def _answer(self, event: PlatformEvent, delivery: Delivery) -> None:
        try:
            text = answer_text(await delivery.reply())
        except DeliveryRefused as error:
            log.error("telegram: no answer for chat %s: %s", event.chat_id, error)
            return
        bot = self._bot
        if not text or bot is None:
            return
        try:
            await self._send(bot, event.chat_id, text, event.thread_id, event.message_id)
        except Exception as error:
            log.error("telegram: sending to chat %s failed: %s", event.chat_id, one_line(error))

    async def _send(
        self,
        bot: Bot,
        chat_id: str,
        text: str,
        thread_id: str | None,
        reply_to: str | None = None,
    ) -> str | None:
        from telegram import ReplyParameters

        sent_id: str | None = None
        for number, piece in enumerate(split_text(text, MAX_MESSAGE_CHARS)):
            reply = (
                ReplyParameters(message_id=int(reply_to), allow_sending_without_reply=True)
                if reply_to is not None and number == 0
                else None
            )

            def send_piece(piece: str = piece, reply: Any = reply) -> Awaitable[Message]:
                return bot.send_message(
                    chat_id=_chat(chat_id),
                    text=piece,
                    message_thread_id=int(thread_id) if thread_id is not None else None,
                    reply_parameters=reply,
                )

            sent = await retry_transient(send_piece, transient=_transient,
                                         retry_after=_retry_after, log=log,
                                         what=f"telegram: sending to chat {chat_id}")  # fmt: skip
            sent_id = str(sent.message_id)
        return sent_id

    def _blocking(self, call: Callable[[Bot], Awaitable[T]]) -> T:
        """Run ``call`` from synchronous code: on the running bot's loop when the bot runs,
        else with a short-lived bot of its own."""
        bot = self._bot
        if bot is not None and self._bridge.running:
            return self._bridge.call(lambda: call(bot))
        if not self._token:
            raise UserFacingError("the telegram platform is not configured (connect first)")

        async def once() -> T:
            async with self._new_bot() as own:
                return await call(own)

        return asyncio.run(once())


def _transient(error: BaseException) -> bool:
    """Flood control and time-outs are worth another try; a refusal (400, 403) is not."""
    from telegram.error import NetworkError, RetryAfter

    return isinstance(error, RetryAfter | NetworkError)


def _retry_after(error: BaseException) -> float | None:
    with warnings.catch_warnings():  # PTB warns that the number will become a timedelta
        warnings.simplefilter("ignore")
        return as_seconds(getattr(error, "retry_after", None))


def _chat(chat_id: str) -> int | str:
    """A chat id as the Bot API takes it: a number, or ``@channelusername``."""
    try:
        return int(chat_id)
    except ValueError:
        return chat_id
