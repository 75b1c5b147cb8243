"""The ``matrix`` adapter: a matrix-nio ``AsyncClient`` that syncs with a homeserver, turns each
new text message into a :class:`~hermes_hookspecs.PlatformEvent` and answers in the room.

- A room with two members (the bot and one person) is a DM: ``agent:main:matrix:dm:<room>``;
  any other room is a group, keyed per user (``…:group:<room>:<user>``) unless
  ``group_sessions_per_user`` is off. A message in an ``m.thread`` is keyed by the thread's
  root event (``…:group:<room>:<root>``) and answered inside that thread.
- The bot's own messages, messages from before it started, non-text events and rooms or users
  outside ``allowed_rooms``/``allowed_users`` are ignored. Invites (from allowed users, to
  allowed rooms) are accepted when ``auto_join`` is on (the default).
- An answer is streamed: its message is sent with the first text, edited (``m.replace``) at
  most every ``stream_edit_seconds`` while the model writes, then a last time with the whole
  answer (``stream_edit_seconds: 0`` sends the whole answer once).
- Matrix has no acknowledgement: the read receipt is sent once the message is stored.

End-to-end encrypted rooms are not supported (the client is built without olm); their events
arrive undecryptable and are ignored.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import (
    ChatType,
    Deliver,
    Delivery,
    DeliveryRefused,
    PlatformEvent,
    UserFacingError,
    build_session_key,
)

from .settings import MatrixSettings, parse_settings

if TYPE_CHECKING:
    from nio import AsyncClient, InviteMemberEvent, MatrixRoom, RoomMessageText

log = logging.getLogger("hermes.gateway.matrix")

SYNC_FILTER: dict[str, Any] = {"room": {"timeline": {"limit": 100}}}
"""Up to 100 new events per room per sync (the server's default is 10: a busy room would skip)."""

REMEMBERED_EVENTS = 4096
"""How many handled event ids are kept to never answer an event twice."""


def _one_line(error: object) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def thread_root(content: Mapping[str, Any]) -> str | None:
    """The root event id of the thread a message's content belongs to, if any."""
    relation = content.get("m.relates_to")
    if isinstance(relation, Mapping) and relation.get("rel_type") == "m.thread":
        root = relation.get("event_id")
        return root if isinstance(root, str) and root else None
    return None


def is_edit(content: Mapping[str, Any]) -> bool:
    """True for an ``m.replace`` edit of an earlier message."""
    relation = content.get("m.relates_to")
    return isinstance(relation, Mapping) and relation.get("rel_type") == "m.replace"


def reply_content(text: str, *, reply_to: str | None, thread: str | None) -> dict[str, Any]:
    """An ``m.text`` message answering ``reply_to``, inside ``thread`` when given."""
    content: dict[str, Any] = {"msgtype": "m.text", "body": text}
    if thread is not None:
        relation: dict[str, Any] = {"rel_type": "m.thread", "event_id": thread}
        if reply_to is not None:
            relation["is_falling_back"] = True
            relation["m.in_reply_to"] = {"event_id": reply_to}
        content["m.relates_to"] = relation
    elif reply_to is not None:
        content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
    return content


def edit_content(original: str, text: str) -> dict[str, Any]:
    """An ``m.replace`` edit setting message ``original``'s text to ``text``."""
    return {
        "msgtype": "m.text",
        "body": f"* {text}",
        "m.new_content": {"msgtype": "m.text", "body": text},
        "m.relates_to": {"rel_type": "m.replace", "event_id": original},
    }


class MatrixAdapter:
    """Receives from and answers in Matrix rooms through matrix-nio."""

    name = "matrix"
    label = "Matrix"
    short_label = "mx"
    interactive = False
    gateway = True
    supports_threads = True
    reapable = False

    def __init__(self) -> None:
        self._settings: MatrixSettings | None = None
        self._client: AsyncClient | None = None
        self._deliver: Deliver | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sync_task: asyncio.Task[None] | None = None
        self._answers: set[asyncio.Task[None]] = set()
        self._handled: OrderedDict[str, None] = OrderedDict()
        self._started_ms = 0
        self._stopping = False
        self.address: str | None = None

    # ------------------------------------------------------------------ PlatformAdapter

    def connect(self, config: Mapping[str, Any]) -> None:
        """Take and check the settings (the client logs in in :meth:`start`)."""
        self._settings = parse_settings(config)

    def send(self, chat_id: str, text: str, thread_id: str | None = None) -> str | None:
        """Send ``text`` to room ``chat_id`` (in thread ``thread_id``); its event id. Blocking:
        call it from another thread than the gateway's event loop, while the adapter runs."""
        return self._blocking(self._send(chat_id, reply_content(text, reply_to=None,
                                                                  thread=thread_id)))  # fmt: skip

    def session_key(
        self, chat_type: str, chat_id: str, user_id: str | None, thread_id: str | None
    ) -> str:
        """The G1 key of a Matrix conversation."""
        kinds: dict[str, ChatType] = {"dm": "dm", "group": "group", "thread": "thread"}
        return build_session_key("matrix", kinds.get(chat_type, "group"), chat_id, user_id,
                                 thread_id)  # fmt: skip

    def create_thread(self, chat_id: str, title: str) -> str | None:
        """Open a thread in room ``chat_id``: a root message holding ``title``, whose event id
        is the thread id (replies relate to it with ``m.thread``). Blocking, like :meth:`send`."""
        return self._blocking(self._send(chat_id, reply_content(title, reply_to=None,
                                                                  thread=None)))  # fmt: skip

    def _blocking(self, call: Any) -> str | None:
        loop = self._loop
        if loop is None or self._client is None:
            call.close()
            raise UserFacingError("the matrix platform is not running")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            call.close()
            raise UserFacingError("matrix send() blocks: call it outside the gateway's loop")
        result: str | None = asyncio.run_coroutine_threadsafe(call, loop).result(60)
        return result

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Log in, sync once (what came before is not answered), then sync in the background."""
        from nio import (
            AsyncClient,
            AsyncClientConfig,
            InviteMemberEvent,
            LoginResponse,
            RoomMessageText,
            SyncResponse,
            WhoamiResponse,
        )

        self.connect(config)
        settings = self._settings
        assert settings is not None
        client = AsyncClient(
            settings.homeserver,
            settings.user_id,
            device_id=settings.device_id,
            config=AsyncClientConfig(
                max_timeouts=2,
                request_timeout=30,
                store_sync_tokens=False,
                encryption_enabled=False,
            ),
        )
        where = settings.homeserver
        try:
            if settings.access_token is not None:
                client.restore_login(settings.user_id, settings.device_id, settings.access_token)
                who = await client.whoami()
                if not isinstance(who, WhoamiResponse):
                    raise UserFacingError(
                        f"matrix: {where} refused the access token of {settings.user_id} "
                        f"({_one_line(getattr(who, 'message', who))})"
                    )
                if who.user_id != settings.user_id:
                    raise UserFacingError(
                        f"matrix: the access token belongs to {who.user_id}, not "
                        f"{settings.user_id} (gateway.platforms.matrix.user_id)"
                    )
            else:
                assert settings.password is not None
                login = await client.login(settings.password, device_name="Hermes gateway")
                if not isinstance(login, LoginResponse):
                    raise UserFacingError(
                        f"matrix: cannot log in to {where} as {settings.user_id} "
                        f"({_one_line(getattr(login, 'message', login))})"
                    )
            self._started_ms = int(time.time() * 1000)
            first = await client.sync(timeout=0, full_state=True)
            if not isinstance(first, SyncResponse):
                raise UserFacingError(
                    f"matrix: the first sync with {where} failed "
                    f"({_one_line(getattr(first, 'message', first))})"
                )
        except UserFacingError:
            await client.close()
            raise
        except Exception as error:
            await client.close()
            raise UserFacingError(f"matrix: cannot reach {where} ({_one_line(error)})") from None
        self._client = client
        self._deliver = deliver
        self._loop = asyncio.get_running_loop()
        self._stopping = False
        # Invites already waiting are accepted; messages of the first sync are history.
        for room_id in list(first.rooms.invite):
            await self._maybe_join(room_id, client.invited_rooms.get(room_id), None)
        client.add_event_callback(self._on_message, RoomMessageText)
        client.add_event_callback(self._on_invite, InviteMemberEvent)
        self._sync_task = asyncio.ensure_future(self._sync_forever())
        self.address = f"{settings.user_id} on {settings.homeserver}"
        log.info("matrix: syncing as %s with %s", settings.user_id, settings.homeserver)

    async def stop(self) -> None:
        """Stop syncing; answers being sent are finished first, then the client closes."""
        self._stopping = True
        if self._sync_task is not None:
            self._sync_task.cancel()
            await asyncio.gather(self._sync_task, return_exceptions=True)
            self._sync_task = None
        if self._answers:
            await asyncio.gather(*list(self._answers), return_exceptions=True)
        if self._client is not None:
            await self._client.close()
            self._client = None
        self._loop = None

    # ------------------------------------------------------------------ receiving

    async def _sync_forever(self) -> None:
        from nio import SyncResponse

        client = self._client
        settings = self._settings
        assert client is not None and settings is not None
        failures = 0
        while not self._stopping:
            try:
                answer = await client.sync(
                    timeout=settings.sync_timeout_ms, sync_filter=SYNC_FILTER
                )
            except asyncio.CancelledError:
                raise
            except Exception as error:
                answer = None
                problem = _one_line(error)
            else:
                problem = _one_line(getattr(answer, "message", answer))
            if isinstance(answer, SyncResponse):
                if failures:
                    log.info("matrix: syncing with %s again", settings.homeserver)
                failures = 0
                continue
            failures += 1
            if failures == 1:
                log.error("matrix: sync with %s failed (%s); retrying", settings.homeserver,
                          problem)  # fmt: skip
            await asyncio.sleep(min(30.0, 0.5 * 2**failures))

    def _remember(self, event_id: str) -> bool:
        """False when the event was handled already."""
        if event_id in self._handled:
            return False
        self._handled[event_id] = None
        while len(self._handled) > REMEMBERED_EVENTS:
            self._handled.popitem(last=False)
        return True

    async def _on_invite(self, room: MatrixRoom, event: InviteMemberEvent) -> None:
        settings = self._settings
        if settings is None or event.state_key != settings.user_id:
            return
        if event.membership != "invite":
            return
        await self._maybe_join(room.room_id, room, event.sender)

    async def _maybe_join(self, room_id: str, room: MatrixRoom | None, inviter: str | None) -> None:
        from nio import JoinResponse

        settings, client = self._settings, self._client
        if settings is None or client is None or not settings.auto_join:
            return
        if inviter is None and room is not None:
            inviter = getattr(room, "inviter", None)
        if settings.allowed_rooms and room_id not in settings.allowed_rooms:
            log.info("matrix: not joining %s (not in allowed_rooms)", room_id)
            return
        if settings.allowed_users and inviter not in settings.allowed_users:
            log.info("matrix: not joining %s: invited by %s (not in allowed_users)", room_id,
                     inviter or "someone unknown")  # fmt: skip
            return
        joined = await client.join(room_id)
        if not isinstance(joined, JoinResponse):
            log.error("matrix: cannot join %s (%s)", room_id,
                      _one_line(getattr(joined, "message", joined)))  # fmt: skip

    def event_for(self, room: MatrixRoom, event: RoomMessageText) -> PlatformEvent | None:
        """The gateway event of a room message, or None when it is not for the bot."""
        settings = self._settings
        if settings is None or event.sender == settings.user_id:
            return None
        content = event.source.get("content", {})
        if is_edit(content) or event.server_timestamp < self._started_ms:
            return None
        if settings.allowed_rooms and room.room_id not in settings.allowed_rooms:
            return None
        if settings.allowed_users and event.sender not in settings.allowed_users:
            log.info("matrix: ignored a message from %s (not in allowed_users)", event.sender)
            return None
        thread = thread_root(content)
        chat_type: ChatType
        if thread is not None:
            chat_type = "thread"
        elif room.member_count <= 2:
            chat_type = "dm"
        else:
            chat_type = "group"
        return PlatformEvent(
            platform="matrix",
            chat_id=room.room_id,
            text=event.body,
            chat_type=chat_type,
            user_id=event.sender,
            thread_id=thread,
            message_id=event.event_id,
            user_name=room.user_name(event.sender),
            chat_name=room.display_name,
        )

    async def _on_message(self, room: MatrixRoom, event: RoomMessageText) -> None:
        if self._stopping or self._deliver is None or not self._remember(event.event_id):
            return
        incoming = self.event_for(room, event)
        if incoming is None:
            return
        # Delivered in arrival order (the gateway keeps each chat's order); answered aside, so
        # one slow answer never holds up the sync of the other rooms.
        delivery = self._deliver(incoming)
        task = asyncio.ensure_future(self._answer(incoming, delivery))
        self._answers.add(task)
        task.add_done_callback(self._answers.discard)

    # ------------------------------------------------------------------ answering

    async def _answer(self, incoming: PlatformEvent, delivery: Delivery) -> None:
        room_id, thread = incoming.chat_id, incoming.thread_id
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            log.warning("matrix: a message in %s was not taken: %s", room_id, error)
            await self._send_quietly(
                room_id,
                reply_content(
                    "The gateway is stopping; send that again in a moment.",
                    reply_to=incoming.message_id,
                    thread=thread,
                ),
            )
            return
        try:
            client = self._client
            if client is not None and incoming.message_id is not None:
                await client.room_read_markers(room_id, incoming.message_id, incoming.message_id)
            await self._stream_answer(incoming, delivery)
        except Exception as error:
            log.error("matrix: answering in %s failed: %s", room_id, _one_line(error))

    async def _stream_answer(self, incoming: PlatformEvent, delivery: Delivery) -> None:
        settings = self._settings
        assert settings is not None
        room_id, thread = incoming.chat_id, incoming.thread_id
        sent_id: str | None = None
        shown = ""
        text = ""
        last_edit = time.monotonic()
        interval = settings.stream_edit_seconds
        async for piece in delivery.text_deltas():
            text += piece
            if interval <= 0 or not text.strip():
                continue
            if sent_id is not None and time.monotonic() - last_edit < interval:
                continue
            if sent_id is None:
                sent_id = await self._send(
                    room_id, reply_content(text, reply_to=incoming.message_id, thread=thread)
                )
            else:
                await self._send(room_id, edit_content(sent_id, text))
            shown, last_edit = text, time.monotonic()
        try:
            reply = await delivery.reply()
        except DeliveryRefused as error:
            final = f"(no answer: {error})"
        else:
            final = reply.text
            if reply.error:
                final = f"{final}\n\n(the model could not answer: {reply.error})".strip()
        if not final:
            return
        if sent_id is None:
            await self._send(
                room_id, reply_content(final, reply_to=incoming.message_id, thread=thread)
            )
        elif final != shown:
            await self._send(room_id, edit_content(sent_id, final))

    async def _send(self, room_id: str, content: dict[str, Any]) -> str:
        from nio import RoomSendResponse

        client = self._client
        if client is None:
            raise UserFacingError("the matrix platform is not running")
        sent = await client.room_send(room_id, "m.room.message", content)
        if not isinstance(sent, RoomSendResponse):
            raise UserFacingError(
                f"matrix: cannot send to {room_id} ({_one_line(getattr(sent, 'message', sent))})"
            )
        return str(sent.event_id)

    async def _send_quietly(self, room_id: str, content: dict[str, Any]) -> None:
        try:
            await self._send(room_id, content)
        except Exception as error:
            log.error("matrix: %s", _one_line(error))
