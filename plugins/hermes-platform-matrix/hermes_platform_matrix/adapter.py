"""The ``matrix`` adapter: a matrix-nio ``AsyncClient`` that syncs with a homeserver, turns each
new text message into a :class:`~hermes_hookspecs.PlatformEvent` and answers in the room.

- A room with two members (the bot and one person) is a DM: ``agent:main:matrix:dm:<room>``;
  any other room is a group, keyed per user (``…:group:<room>:<user>``) unless
  ``group_sessions_per_user`` is off. A message in an ``m.thread`` is keyed by the thread's
  root event (``…:group:<room>:<root>``) and answered inside that thread.
- The bot's own messages, non-text events and rooms or users outside
  ``allowed_rooms``/``allowed_users`` are ignored. Invites (from allowed users, to allowed
  rooms) are accepted when ``auto_join`` is on (the default: true).
- Catch-up after a restart: the sync ``next_batch`` token is kept per homeserver, user and
  device in the gateway's folder for this platform (``$HERMES_HOME/gateway/platforms/matrix``),
  saved only once every message of that sync is stored; the next start syncs from it, so what
  was sent while the gateway was down is answered once. A room whose timeline came back
  ``limited`` (more than 100 new events) is paged back from its ``prev_batch`` to the saved
  token. On the very first start (no token yet), and in a room the bot has just joined, what
  was written before is history and is not answered.
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
from hermes_hookspecs.adapter_kit import (
    AnswerTasks,
    Backoff,
    CursorFile,
    LoopBridge,
    RecentIds,
    answer_text,
    is_stopping,
    one_line,
    unless_too_old,
)

from .content import edit_content, is_edit, reply_content, since_own_join, thread_root
from .settings import MatrixSettings, parse_settings

__all__ = ["MatrixAdapter", "edit_content", "is_edit", "reply_content", "thread_root"]

if TYPE_CHECKING:
    from nio import AsyncClient, InviteMemberEvent, MatrixRoom, RoomMessageText, SyncResponse

log = logging.getLogger("hermes.gateway.matrix")

SYNC_FILTER: dict[str, Any] = {"room": {"timeline": {"limit": 100}}}
"""Up to 100 new events per room per sync (the server's default is 10: a busy room would skip)."""

PAGES_BACK = 10
"""How many pages of 100 events a ``limited`` room is read back at most after a restart."""


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
        self._bridge = LoopBridge("matrix")
        self._sync_task: asyncio.Task[None] | None = None
        self._answers = AnswerTasks()
        self._handled = RecentIds()
        self._cursors: CursorFile | None = None
        self._cursor_key = ""
        self._saving: asyncio.Task[None] | None = None
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
        if self._client is None:
            call.close()
            raise UserFacingError("the matrix platform is not running")
        try:
            result: str | None = self._bridge.call(lambda: call)
        except BaseException:
            call.close()
            raise
        return result

    # ------------------------------------------------------------------ ReceivingAdapter

    async def start(self, config: Mapping[str, Any], deliver: Deliver) -> None:
        """Log in, sync from the saved token (catch-up; on a first start: once, without
        answering the history), then sync in the background."""
        from nio import (
            AsyncClient,
            AsyncClientConfig,
            InviteMemberEvent,
            LoginResponse,
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
                        f"({one_line(getattr(who, 'message', who))})"
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
                        f"({one_line(getattr(login, 'message', login))})"
                    )
            self._cursors = CursorFile.of(config)
            self._cursor_key = f"{settings.homeserver}|{settings.user_id}|{settings.device_id}"
            saved = self._cursors.get(self._cursor_key) if self._cursors else None
            first = await client.sync(
                timeout=0, full_state=True, since=saved, sync_filter=SYNC_FILTER
            )
            if not isinstance(first, SyncResponse):
                raise UserFacingError(
                    f"matrix: the first sync with {where} failed "
                    f"({one_line(getattr(first, 'message', first))})"
                )
        except UserFacingError:
            await client.close()
            raise
        except Exception as error:
            await client.close()
            raise UserFacingError(f"matrix: cannot reach {where} ({one_line(error)})") from None
        self._client = client
        self._deliver = deliver
        self._bridge.bind()
        self._stopping = False
        self._saving = None
        # Invites already waiting are accepted; without a saved token the first sync's
        # messages are history, with one they are what came while the gateway was down.
        for room_id in list(first.rooms.invite):
            await self._maybe_join(room_id, client.invited_rooms.get(room_id), None)
        if saved is None:
            self._save_after([], first.next_batch)
        else:
            await self._take(first, saved)
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
        await self._answers.wait()
        if self._saving is not None:
            await asyncio.gather(self._saving, return_exceptions=True)
        if self._client is not None:
            await self._client.close()
            self._client = None
        self._bridge.unbind()

    # ------------------------------------------------------------------ receiving

    async def _sync_forever(self) -> None:
        from nio import SyncResponse

        client = self._client
        settings = self._settings
        assert client is not None and settings is not None
        failures = 0
        pause = Backoff(first=1.0)
        while not self._stopping:
            since = client.next_batch
            try:
                answer = await client.sync(
                    timeout=settings.sync_timeout_ms, sync_filter=SYNC_FILTER
                )
            except asyncio.CancelledError:
                raise
            except Exception as error:
                answer = None
                problem = one_line(error)
            else:
                problem = one_line(getattr(answer, "message", answer))
            if isinstance(answer, SyncResponse):
                if failures:
                    log.info("matrix: syncing with %s again", settings.homeserver)
                failures = 0
                pause.reset()
                await self._take(answer, since)
                continue
            failures += 1
            if failures == 1:
                log.error("matrix: sync with %s failed (%s); retrying", settings.homeserver,
                          problem)  # fmt: skip
            await pause.wait()

    async def _take(self, answer: SyncResponse, since: str | None) -> None:
        """Deliver the new room messages of one sync, oldest first (a ``limited`` room read
        back to ``since`` first); its token is saved once they are all stored."""
        from nio import RoomMessageText

        client = self._client
        assert client is not None
        deliveries: list[tuple[str, Delivery]] = []
        for room_id, info in answer.rooms.join.items():
            room = client.rooms.get(room_id)
            if room is None:
                continue
            events = list(info.timeline.events)
            if info.timeline.limited and info.timeline.prev_batch and since:
                events = await self._page_back(room_id, info.timeline.prev_batch, since) + events
            for event in since_own_join(events, client.user_id):
                if isinstance(event, RoomMessageText):
                    delivery = self._on_message(room, event)
                    if delivery is not None:
                        deliveries.append((event.event_id, delivery))
        self._save_after(deliveries, answer.next_batch, since)

    async def _page_back(self, room_id: str, prev_batch: str, since: str) -> list[Any]:
        """The events of a room between ``since`` and ``prev_batch``, oldest first."""
        from nio import RoomMessagesResponse

        client = self._client
        assert client is not None
        older: list[Any] = []
        token = prev_batch
        for _ in range(PAGES_BACK):
            page = await client.room_messages(room_id, start=token, end=since, limit=100)
            if not isinstance(page, RoomMessagesResponse) or not page.chunk:
                break
            older.extend(page.chunk)
            if not page.end or page.end == token:
                break
            token = page.end
        return older[::-1]

    def _save_after(
        self, deliveries: list[tuple[str, Delivery]], token: str, since: str | None = None
    ) -> None:
        """Save ``token`` once every delivery is stored and the syncs before it are saved;
        when one was not stored, sync again from ``since`` instead (it is delivered again)."""
        previous = self._saving

        async def save() -> None:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            complete = True
            for event_id, delivery in deliveries:
                try:
                    await delivery.stored()
                except DeliveryRefused as error:
                    self._handled.dropped(event_id)
                    complete = False
                    if not is_stopping(error) and self._client is not None and since:
                        self._client.next_batch = since
                else:
                    self._handled.taken(event_id)
            if complete and self._cursors is not None:
                try:
                    self._cursors.save(self._cursor_key, token)
                except OSError as error:
                    log.error("matrix: the sync position was not saved: %s", one_line(error))

        self._saving = asyncio.ensure_future(save())

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
                      one_line(getattr(joined, "message", joined)))  # fmt: skip

    def event_for(self, room: MatrixRoom, event: RoomMessageText) -> PlatformEvent | None:
        """The gateway event of a room message, or None when it is not for the bot."""
        settings = self._settings
        if settings is None or event.sender == settings.user_id:
            return None
        content = event.source.get("content", {})
        if is_edit(content):
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
            sent_at=event.server_timestamp / 1000,
            # Edited as it arrives, unless every answer is sent once.
            stream_answer=settings.stream_edit_seconds > 0,
        )

    def _on_message(self, room: MatrixRoom, event: RoomMessageText) -> Delivery | None:
        if self._stopping or self._deliver is None:
            return None
        incoming = self.event_for(room, event)
        if incoming is None or not self._handled.begin(event.event_id):
            return None
        # Delivered in arrival order (the gateway keeps each chat's order); answered aside, so
        # one slow answer never holds up the sync of the other rooms.
        max_age = self._settings.catch_up_max_age if self._settings else None
        delivery = self._deliver(unless_too_old(incoming, max_age))
        self._answers.spawn(self._answer(incoming, delivery))
        return delivery

    # ------------------------------------------------------------------ answering

    async def _answer(self, incoming: PlatformEvent, delivery: Delivery) -> None:
        room_id = incoming.chat_id
        try:
            await delivery.stored()
        except DeliveryRefused as error:
            # Its sync's token is not saved: it is read again (next sync, or next start).
            when = "after the next start" if is_stopping(error) else "again"
            log.warning("matrix: a message in %s was not taken (%s); it will be read %s",
                        room_id, error, when)  # fmt: skip
            return
        try:
            client = self._client
            if client is not None and incoming.message_id is not None:
                await client.room_read_markers(room_id, incoming.message_id, incoming.message_id)
            await self._stream_answer(incoming, delivery)
        except Exception as error:
            log.error("matrix: answering in %s failed: %s", room_id, one_line(error))

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
            final = answer_text(reply, failure="(the model could not answer: ")
            if reply.error and not reply.duplicate:
                final = reply.text.strip() + "\n\n" if reply.text.strip() else ""
                final += f"(the model could not answer: {reply.error})"
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
                f"matrix: cannot send to {room_id} ({one_line(getattr(sent, 'message', sent))})"
            )
        return str(sent.event_id)

    async def _send_quietly(self, room_id: str, content: dict[str, Any]) -> None:
        try:
            await self._send(room_id, content)
        except Exception as error:
            log.error("matrix: %s", one_line(error))
