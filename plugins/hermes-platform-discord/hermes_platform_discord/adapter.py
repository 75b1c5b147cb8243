"""The ``discord`` adapter: a Discord bot (discord.py) on the Gateway websocket, answering in
the channel, thread or DM a message came from.

Settings (``gateway.platforms.discord`` in config.yaml):

- ``token`` (or ``token_env``) — the bot token from the Developer Portal; required. The bot
  needs the privileged **Message Content** intent to read what people write.
- ``api_base`` / ``gateway_url`` — another HTTP API root and Gateway websocket (a proxy, a
  test stand-in). discord.py keeps these process-wide (``Route.BASE``,
  ``DiscordWebSocket.DEFAULT_GATEWAY``): set them only when this is the one Discord client of
  the gateway process.
- ``ready_timeout_seconds`` (60) — how long start-up waits for the Gateway's READY.

Conversations map to the SPEC G1 keys: a DM is a DM; in a guild text channel each user has
their own session; a thread is one session shared by its participants (chat id: the parent
channel, thread id: the thread). A leading mention of the bot is removed from the text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

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
    import discord

log = logging.getLogger("hermes.gateway.discord")

MESSAGE_CHARS = 2000
"""Discord refuses a longer message; longer answers go in several."""
THREAD_ARCHIVE_MINUTES: Final[Literal[1440]] = 1440
DEFAULTS: Mapping[str, Any] = {"ready_timeout_seconds": 60}
T = TypeVar("T")


def split_text(text: str, limit: int = MESSAGE_CHARS) -> list[str]:
    """``text`` in pieces Discord accepts, cut at a line break where one is near."""
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


def strip_mention(text: str, bot_id: int | None) -> str:
    """``text`` without a leading ``<@bot>`` / ``<@!bot>`` mention."""
    if bot_id is None:
        return text
    return re.sub(rf"^\s*<@!?{bot_id}>[\s:,]*", "", text, count=1)


def event_from_message(message: discord.Message, bot_id: int | None) -> PlatformEvent | None:
    """The gateway event of a message; None for what is not for the agent (bots, the bot
    itself, system messages, nothing to read)."""
    import discord

    if message.author.bot or message.author.id == bot_id:
        return None
    if message.type not in (discord.MessageType.default, discord.MessageType.reply):
        return None
    text = strip_mention(message.content, bot_id)
    attachments = tuple(
        Attachment(f"file {item.filename}", None, item.content_type) for item in message.attachments
    )
    if not text.strip() and not attachments:
        return None
    channel = message.channel
    chat_type: ChatType
    thread_id: str | None = None
    if isinstance(channel, discord.DMChannel):
        chat_type, chat_id = "dm", str(channel.id)
    elif isinstance(channel, discord.Thread):
        chat_type, chat_id, thread_id = "thread", str(channel.parent_id), str(channel.id)
    else:
        chat_type, chat_id = "group", str(channel.id)
    return PlatformEvent(
        platform="discord",
        chat_id=chat_id,
        text=text,
        chat_type=chat_type,
        user_id=str(message.author.id),
        thread_id=thread_id,
        message_id=str(message.id),
        attachments=attachments,
        user_name=message.author.display_name,
        chat_name=getattr(channel, "name", None),
    )


class DiscordAdapter:
    """A Discord bot (``discord.Client``) receiving over the Gateway."""

    name = "discord"
    label = "Discord"
    short_label = "disc"
    interactive = True
    gateway = True
    supports_threads = True
    reapable = False

    def __init__(self) -> None:
        self._settings: dict[str, Any] = dict(DEFAULTS)
        self._token = ""
        self._client: discord.Client | None = None
        self._runner: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
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
                "gateway.platforms.discord.token is not set (or token_env names an empty "
                "variable): the bot token from the Developer Portal"
            )
        timeout = settings["ready_timeout_seconds"]
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise UserFacingError(
                "gateway.platforms.discord.ready_timeout_seconds must be a positive number"
            )
        for name in ("api_base", "gateway_url"):
            if name in settings and (not isinstance(settings[name], str) or not settings[name]):
                raise UserFacingError(f"gateway.platforms.discord.{name} must be a URL")
        self._token = token
        self._settings = settings

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to a channel or DM (into the thread ``thread_id``); the last id."""
        return self._blocking(lambda client: self._send(client, thread_id or chat_id, text))

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a Discord conversation."""
        kind: ChatType = chat_type if chat_type in {"dm", "group", "channel", "thread"} else "dm"  # type: ignore[assignment]
        return build_session_key("discord", kind, chat_id, user_id, thread_id)

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Open a public thread named ``title`` under a text channel, archived after 1440
        minutes without activity; its id, or None where the channel takes no threads."""
        import discord

        async def create(client: discord.Client) -> str | None:
            channel = client.get_channel(int(chat_id))
            if not isinstance(channel, discord.TextChannel):
                log.warning("discord: no thread in %s: not a text channel of the bot's", chat_id)
                return None
            try:
                thread = await channel.create_thread(
                    name=title[:100],
                    auto_archive_duration=THREAD_ARCHIVE_MINUTES,
                    type=discord.ChannelType.public_thread,
                )
            except discord.HTTPException as error:
                log.warning("discord: no thread in channel %s: %s", chat_id, error.text)
                return None
            return str(thread.id)

        return self._blocking(create)

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Log in, connect to the Gateway and wait for READY."""
        import discord

        self.connect(config)
        self._point_at_configured_endpoints()
        intents = discord.Intents.none()
        intents.guilds = intents.guild_messages = intents.dm_messages = True
        intents.message_content = True
        voice_notice = logging.getLogger("discord.client")
        voice_notice.addFilter(_no_voice_notice)  # a text bot needs no voice libraries
        client = discord.Client(intents=intents, enable_debug_events=False)
        ready = asyncio.Event()

        @client.event
        async def on_ready() -> None:
            ready.set()

        @client.event
        async def on_message(message: discord.Message) -> None:
            await self._receive(client, message, deliver)

        try:
            await client.login(self._token)
        except discord.LoginFailure:
            await client.close()
            raise UserFacingError(
                "gateway.platforms.discord.token was refused by Discord (Unauthorized)"
            ) from None
        except Exception as error:
            await client.close()
            log.debug("discord login failed", exc_info=True)
            raise UserFacingError(f"cannot reach the Discord API: {_reason(error)}") from None
        self._loop = asyncio.get_running_loop()
        self._client = client
        self._runner = asyncio.create_task(self._run(client))
        timeout = float(self._settings["ready_timeout_seconds"])
        waiting = asyncio.create_task(ready.wait())
        done, _ = await asyncio.wait({waiting, self._runner}, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        if waiting not in done:
            waiting.cancel()
            await self.stop()
            raise UserFacingError(f"the Discord Gateway did not get ready in {timeout:g}s")
        self.address = f"discord bot {client.user}"
        log.info("discord bot %s connected", client.user)

    async def stop(self) -> None:
        """Send the answers still going out, then close the connection."""
        if self._replies:
            await asyncio.gather(*list(self._replies), return_exceptions=True)
        client, self._client = self._client, None
        if client is not None:
            await client.close()
        runner, self._runner = self._runner, None
        if runner is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await runner
        self._loop = None

    # ------------------------------------------------------------------ receiving

    def _point_at_configured_endpoints(self) -> None:
        import yarl
        from discord.gateway import DiscordWebSocket
        from discord.http import Route

        if "api_base" in self._settings:
            Route.BASE = str(self._settings["api_base"]).rstrip("/")
        if "gateway_url" in self._settings:
            DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(str(self._settings["gateway_url"]))

    async def _run(self, client: discord.Client) -> None:
        try:
            await client.connect(reconnect=True)
        except Exception as error:
            if not client.is_closed():
                log.error("discord: the Gateway connection ended: %s", _reason(error))

    async def _receive(
        self, client: discord.Client, message: discord.Message, deliver: Deliver
    ) -> None:
        bot_id = client.user.id if client.user is not None else None
        event = event_from_message(message, bot_id)
        if event is None:
            return
        delivery = deliver(event)
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            log.warning("discord: message %s not taken: %s", event.message_id, error)
            return
        task = asyncio.create_task(self._answer(client, event, delivery))
        self._replies.add(task)
        task.add_done_callback(self._replies.discard)

    async def _answer(
        self, client: discord.Client, event: PlatformEvent, delivery: Delivery
    ) -> None:
        try:
            reply = await delivery.reply()
        except DeliveryRefused as error:
            log.error("discord: no answer for %s: %s", event.chat_id, error)
            return
        text = reply.text if reply.text.strip() else ""
        if not text and reply.error:
            text = f"⚠ The agent could not answer: {reply.error}"
        if not text:
            return
        try:
            await self._send(client, event.thread_id or event.chat_id, text)
        except Exception as error:
            log.error("discord: sending to %s failed: %s", event.chat_id, _reason(error))

    async def _send(self, client: discord.Client, channel_id: str, text: str) -> str | None:
        last: str | None = None
        for piece in split_text(text):
            sent = await client.get_partial_messageable(int(channel_id)).send(content=piece)
            last = str(sent.id)
        return last

    def _blocking(self, call: Callable[[discord.Client], Awaitable[T]]) -> T:
        """Run ``call`` on the running bot's loop from another thread."""
        loop, client = self._loop, self._client
        if loop is None or client is None or not loop.is_running():
            raise UserFacingError("the discord platform is not running (start it first)")
        try:
            asyncio.get_running_loop()
        except RuntimeError:

            async def on_loop() -> T:
                return await call(client)

            return asyncio.run_coroutine_threadsafe(on_loop(), loop).result(60)
        raise RuntimeError("DiscordAdapter.send/create_thread block: call them off the loop")


def _no_voice_notice(record: logging.LogRecord) -> bool:
    return "voice will NOT be supported" not in record.getMessage()


def _reason(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__
