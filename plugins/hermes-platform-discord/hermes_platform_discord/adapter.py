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

Catch-up after a restart: the id of the last stored message of each channel, thread and DM
(the unbroken stored prefix) is kept in the gateway's folder for this platform
(``$HERMES_HOME/gateway/platforms/discord``); once the Gateway is READY the history after it is
read, oldest first, so what was written while the gateway was down is answered once. A
channel the bot has never heard from before is not read back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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
from hermes_hookspecs.adapter_kit import (
    AnswerTasks,
    CursorFile,
    LoopBridge,
    RecentIds,
    SettingsReader,
    StoredPrefix,
    answer_text,
    one_line,
    split_text,
    unless_too_old,
)

if TYPE_CHECKING:
    import discord

log = logging.getLogger("hermes.gateway.discord")

MESSAGE_CHARS = 2000
"""Discord refuses a longer message; longer answers go in several."""
THREAD_ARCHIVE_MINUTES: Final[Literal[1440]] = 1440
DEFAULTS: Mapping[str, Any] = {"ready_timeout_seconds": 60}
T = TypeVar("T")


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
        sent_at=message.created_at.timestamp(),
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
        self._bridge = LoopBridge("discord")
        self._replies = AnswerTasks()
        self._recent = RecentIds()
        self._cursors: CursorFile | None = None
        self._stored: dict[str, StoredPrefix[int]] = {}
        self._max_age: float | None = None
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take the settings (checked; the bot connects in :meth:`start`)."""
        read = SettingsReader("discord", config, DEFAULTS)
        self._token = read.secret("token", "the bot token from the Developer Portal")
        read.number("ready_timeout_seconds", positive=True)
        self._max_age = read.optional_seconds("catch_up_max_age")
        for name in ("api_base", "gateway_url"):
            if name in read.values:
                read.url(name)
        self._settings = read.values

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
            self._replies.spawn(self._catch_up(client, deliver))

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
            raise UserFacingError(f"cannot reach the Discord API: {one_line(error)}") from None
        self._bridge.bind()
        self._cursors = CursorFile.of(config)
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
        await self._replies.wait()
        client, self._client = self._client, None
        if client is not None:
            await client.close()
        runner, self._runner = self._runner, None
        if runner is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await runner
        self._bridge.unbind()

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
                log.error("discord: the Gateway connection ended: %s", one_line(error))

    async def _catch_up(self, client: discord.Client, deliver: Deliver) -> None:
        """Deliver, oldest first, what each known channel got after its last stored message."""
        import discord

        cursors = self._cursors
        if cursors is None:
            return
        for key in cursors.keys(prefix="channel:"):
            channel_id, last = key.removeprefix("channel:"), cursors.get(key)
            try:
                channel = client.get_channel(int(channel_id)) or await client.fetch_channel(
                    int(channel_id)
                )
                if not isinstance(channel, discord.abc.Messageable):
                    continue
                async for message in channel.history(
                    limit=None, after=discord.Object(int(str(last))), oldest_first=True
                ):
                    await self._receive(client, message, deliver)
            except Exception as error:
                log.warning("discord: no catch-up in channel %s: %s", channel_id, one_line(error))

    async def _receive(
        self, client: discord.Client, message: discord.Message, deliver: Deliver
    ) -> None:
        bot_id = client.user.id if client.user is not None else None
        event = event_from_message(message, bot_id)
        if event is None or not self._recent.begin(str(message.id)):
            return
        channel = str(message.channel.id)
        order = self._stored.setdefault(channel, StoredPrefix())
        order.add(message.id)
        delivery = deliver(unless_too_old(event, self._max_age))
        self._replies.spawn(self._answer(client, event, delivery, channel, message.id))

    async def _answer(
        self,
        client: discord.Client,
        event: PlatformEvent,
        delivery: Delivery,
        channel: str,
        message_id: int,
    ) -> None:
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            self._recent.dropped(str(message_id))
            log.warning("discord: message %s not taken (%s); read again at the next start",
                        message_id, error)  # fmt: skip
            return
        self._recent.taken(str(message_id))
        order = self._stored[channel]
        if order.done(message_id) and order.confirmable is not None and self._cursors:
            try:
                self._cursors.save(f"channel:{channel}", str(order.confirmable))
            except OSError as error:
                log.error("discord: the catch-up position was not saved: %s", one_line(error))
        try:
            text = answer_text(await delivery.reply())
        except DeliveryRefused as error:
            log.error("discord: no answer for %s: %s", event.chat_id, error)
            return
        if not text:
            return
        try:
            await self._send(client, event.thread_id or event.chat_id, text)
        except Exception as error:
            log.error("discord: sending to %s failed: %s", event.chat_id, one_line(error))

    async def _send(self, client: discord.Client, channel_id: str, text: str) -> str | None:
        last: str | None = None
        for piece in split_text(text, MESSAGE_CHARS):
            sent = await client.get_partial_messageable(int(channel_id)).send(content=piece)
            last = str(sent.id)
        return last

    def _blocking(self, call: Callable[[discord.Client], Awaitable[T]]) -> T:
        """Run ``call`` on the running bot's loop from another thread."""
        client = self._client
        if client is None:
            raise UserFacingError("the discord platform is not running (start it first)")
        return self._bridge.call(lambda: call(client))


def _no_voice_notice(record: logging.LogRecord) -> bool:
    return "voice will NOT be supported" not in record.getMessage()
