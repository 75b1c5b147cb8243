"""The ``telegram`` adapter: a bot that long-polls the Bot API (``getUpdates``) and answers.

Settings (``gateway.platforms.telegram`` in config.yaml):

- ``token`` (or ``token_env``, the name of an environment variable holding it) — the bot token
  from @BotFather; required.
- ``base_url`` / ``base_file_url`` — a self-hosted Bot API server (python-telegram-bot's
  options of the same names; the token is appended). Default: Telegram's.
- ``poll_timeout_seconds`` (30) — how long one ``getUpdates`` long poll waits.

Chats map to the SPEC G1 keys: a private chat is a DM; in a group or supergroup each user has
their own session; a message in a forum topic (``is_topic_message``) is a thread, one session
shared by the topic. An update is confirmed to Telegram (the next ``getUpdates`` offset) only
once the gateway has stored it, so after a crash Telegram sends again what was not stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
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


def split_text(text: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """``text`` in pieces Telegram accepts, cut at a line break where one is near."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind("\n", limit // 2, limit)
        cut = limit if cut <= 0 else cut + 1
        pieces.append(rest[:cut])
        rest = rest[cut:]
    if rest.strip():
        pieces.append(rest)
    return pieces


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
        self._loop: asyncio.AbstractEventLoop | None = None
        self._poller: asyncio.Task[None] | None = None
        self._polling = False
        self._stopping = False
        self._offset: int | None = None
        self._replies: set[asyncio.Task[None]] = set()
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the bot connects in :meth:`start`)."""
        settings = {**DEFAULTS, **dict(config)}
        token = settings.get("token")
        if not token and settings.get("token_env"):
            token = os.environ.get(str(settings["token_env"]))
        if not isinstance(token, str) or not token:
            raise UserFacingError(
                "gateway.platforms.telegram.token is not set (or token_env names an empty "
                "variable): the bot token from @BotFather"
            )
        timeout = settings["poll_timeout_seconds"]
        if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0:
            raise UserFacingError(
                "gateway.platforms.telegram.poll_timeout_seconds must be a whole number"
            )
        for name in ("base_url", "base_file_url"):
            if not isinstance(settings[name], str) or not settings[name]:
                raise UserFacingError(f"gateway.platforms.telegram.{name} must be a URL")
        self._token = token
        self._settings = settings

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
        self._loop = asyncio.get_running_loop()
        self._stopping = False
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
                f"{_reason(error)}"
            ) from None
        self._bot = bot
        self.address = f"https://t.me/{bot.username}"
        self._poller = asyncio.create_task(self._poll(bot, deliver))
        log.info("telegram bot @%s polling %s", bot.username, self._settings["base_url"])

    async def stop(self) -> None:
        """Stop polling (an update half-delivered is finished), send the answers still going
        out, confirm the stored updates to Telegram, and close the bot."""
        self._stopping = True
        poller, self._poller = self._poller, None
        if poller is not None:
            if self._polling:
                poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller
        if self._replies:
            await asyncio.gather(*list(self._replies), return_exceptions=True)
        bot, self._bot = self._bot, None
        if bot is not None:
            if self._offset is not None:
                # Confirms every stored update (a zero-timeout poll; what it returns stays
                # unconfirmed and comes again on the next start).
                with contextlib.suppress(Exception):
                    await bot.get_updates(offset=self._offset, limit=1, timeout=0)
            with contextlib.suppress(Exception):
                await bot.shutdown()
        self._loop = None

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
        from telegram.error import Forbidden, InvalidToken, TelegramError

        timeout = int(self._settings["poll_timeout_seconds"])
        pause = 1.0
        while not self._stopping:
            self._polling = True
            try:
                updates = await bot.get_updates(
                    offset=self._offset,
                    timeout=timeout,
                    allowed_updates=["message", "channel_post"],
                )
            except (InvalidToken, Forbidden) as error:
                log.error("telegram: polling stopped: %s", _reason(error))
                return
            except TelegramError as error:
                log.warning(
                    "telegram: getUpdates failed (%s); retrying in %.0fs", _reason(error), pause
                )
                await asyncio.sleep(pause)
                pause = min(pause * 2, 30.0)
                continue
            finally:
                self._polling = False
            pause = 1.0
            if not await self._deliver_all(updates, deliver):
                # The gateway refused (it is stopping): nothing after this was confirmed.
                return

    async def _deliver_all(self, updates: tuple[Update, ...], deliver: Deliver) -> bool:
        """Deliver a batch in order; advance the offset past each stored update."""
        pending: list[tuple[Update, PlatformEvent | None, Delivery | None]] = []
        for update in updates:
            message = update.message or update.channel_post
            event = event_from_message(message) if message is not None else None
            pending.append((update, event, deliver(event) if event is not None else None))
        for update, event, delivery in pending:
            if delivery is not None and event is not None:
                try:
                    await delivery.stored()
                except DeliveryRefused as error:
                    log.warning(
                        "telegram: update %d not taken (%s); Telegram will send it again",
                        update.update_id,
                        error,
                    )
                    return False
                task = asyncio.create_task(self._answer(event, delivery))
                self._replies.add(task)
                task.add_done_callback(self._replies.discard)
            self._offset = update.update_id + 1
        return True

    async def _answer(self, event: PlatformEvent, delivery: Delivery) -> None:
        try:
            reply = await delivery.reply()
        except DeliveryRefused as error:
            log.error("telegram: no answer for chat %s: %s", event.chat_id, error)
            return
        text = reply.text if reply.text.strip() else ""
        if not text and reply.error:
            text = f"⚠ The agent could not answer: {reply.error}"
        if not text:
            return
        bot = self._bot
        if bot is None:
            return
        try:
            await self._send(bot, event.chat_id, text, event.thread_id, event.message_id)
        except Exception as error:
            log.error("telegram: sending to chat %s failed: %s", event.chat_id, _reason(error))

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
        for number, piece in enumerate(split_text(text)):
            reply = (
                ReplyParameters(message_id=int(reply_to), allow_sending_without_reply=True)
                if reply_to is not None and number == 0
                else None
            )
            sent = await bot.send_message(
                chat_id=_chat(chat_id),
                text=piece,
                message_thread_id=int(thread_id) if thread_id is not None else None,
                reply_parameters=reply,
            )
            sent_id = str(sent.message_id)
        return sent_id

    def _blocking(self, call: Callable[[Bot], Awaitable[T]]) -> T:
        """Run ``call`` from synchronous code: on the running bot's loop when called from
        another thread, else with a short-lived bot of its own."""
        loop, bot = self._loop, self._bot
        if loop is not None and bot is not None and loop.is_running():
            try:
                asyncio.get_running_loop()
            except RuntimeError:

                async def on_loop() -> T:
                    return await call(bot)

                return asyncio.run_coroutine_threadsafe(on_loop(), loop).result(60)
            raise RuntimeError("TelegramAdapter.send/create_thread block: await them off the loop")
        if not self._token:
            raise UserFacingError("the telegram platform is not configured (connect first)")

        async def once() -> T:
            async with self._new_bot() as own:
                return await call(own)

        return asyncio.run(once())


def _chat(chat_id: str) -> int | str:
    """A chat id as the Bot API takes it: a number, or ``@channelusername``."""
    try:
        return int(chat_id)
    except ValueError:
        return chat_id


def _reason(error: BaseException) -> str:
    text = getattr(error, "message", None) or str(error) or type(error).__name__
    return " ".join(str(text).split())
