"""What crosses the boundary between the gateway and a platform adapter.

An adapter turns what its platform sends into a :class:`PlatformEvent` and hands it to the
gateway's ``deliver`` callable; the :class:`Delivery` it gets back says when the event is safely
stored (only then may the adapter acknowledge it to the platform) and what the agent answered.
The session-key format of SPEC G1 lives here too, so every adapter's ``session_key`` and the
gateway's routing agree on it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from ._types import TokenUsage, UserFacingError

ChatType = Literal["dm", "group", "channel", "thread"]
"""The kind of conversation an event comes from. ``thread`` is a thread or topic inside a group
(its ``chat_id`` is the group, its ``thread_id`` the thread)."""

SESSION_KEY_NAMESPACE = "agent:main"


@dataclass(frozen=True, slots=True)
class Attachment:
    """Media that came with an event, as the store keeps it (SPEC S7): a description or a
    transcript, and a local path when the adapter saved the file — never the raw bytes."""

    description: str
    path: str | None = None
    media_type: str | None = None


@dataclass(frozen=True, slots=True)
class PlatformEvent:
    """One incoming message from a messaging platform."""

    platform: str
    """The adapter's name (``webhook``, ``telegram``…): the session's origin."""
    chat_id: str
    text: str
    chat_type: ChatType = "dm"
    user_id: str | None = None
    """The participant who wrote; None when the platform does not say (a shared room)."""
    thread_id: str | None = None
    message_id: str | None = None
    """The platform's id of this message, when it has one."""
    attachments: tuple[Attachment, ...] = ()
    user_name: str | None = None
    chat_name: str | None = None
    one_shot: bool = False
    """True when nobody can continue this conversation by name (an api-server request with
    neither a conversation header nor ``user``): its session is kept, but the gateway keeps
    no routing row for it, so such requests do not grow the routing table."""
    sent_at: float | None = None
    """When the platform says the message was written (seconds since the epoch), if it says."""
    answer: bool = True
    """False: store the message but do not answer it (an adapter's catch-up found it older
    than its ``catch_up_max_age``); a command in it is not run either."""
    stream_answer: bool = False
    """True when the adapter shows the answer as it arrives (it reads
    :meth:`Delivery.text_deltas` to stream or edit its message): the gateway then asks the
    model for a streamed answer. False (the default): the answer is sent whole, and the model
    is asked for it in one piece — ``text_deltas`` still yields its text, all at once."""


@dataclass(frozen=True, slots=True)
class GatewayReply:
    """What the gateway answered an event with."""

    text: str
    """The agent's final text, or the answer of a gateway command (``/new``, ``/title``…)."""
    session_id: str | None
    """The session the event went to (after a ``/new``: the new one)."""
    error: str | None = None
    """One line when the model could not answer; the event itself is stored all the same."""
    command: bool = False
    """True when a gateway command answered rather than the model."""
    usage: TokenUsage | None = None
    """The tokens the model reported for the turn (summed over its calls; None for a
    command)."""
    duplicate: bool = False
    """True when the event was a platform message stored before (a re-send): the chat
    adapters post nothing for it; an HTTP endpoint may say so to its caller."""


class DeliveryRefused(UserFacingError):
    """The gateway could not take an event (it is stopping, or the store refused the write).
    Nothing was acknowledged: the adapter answers its platform with a failure.

    ``stopping`` tells the two apart: True when the gateway is stopping (a polling adapter
    stops polling), False when this one event was not stored (the adapter backs off and
    tries again; the platform will send it again). ``store_down``: the store took no write
    at all (a full disk, a read-only or unreachable store) — the event is not at fault, so
    an adapter that gives up on an event refused again and again keeps trying this one."""

    def __init__(self, reason: str, *, stopping: bool = False, store_down: bool = False) -> None:
        super().__init__(reason)
        self.stopping = stopping
        self.store_down = store_down


class Delivery(Protocol):
    """The gateway's handle on one delivered event."""

    async def stored(self) -> str | None:
        """Wait until the event is stored — recorded in the gateway inbox, so it survives a
        crash and is answered after a restart; for a chat with no turn ahead, once its user
        turn is committed (or its command done) — and return the session id (the chat's
        session when the event was recorded; None for a new chat still queued, or a command
        that touched no session); raises :class:`DeliveryRefused` when it never will be.
        Never waits for a model. Acknowledge the event to the platform only after this
        returns."""
        ...

    def text_deltas(self) -> AsyncIterator[str]:
        """The answer's text as it streams from the model (empty for commands)."""
        ...

    async def reply(self) -> GatewayReply:
        """Wait for the whole answer."""
        ...


Deliver = Callable[[PlatformEvent], Delivery]
"""What the gateway gives an adapter's ``start``: call it once per incoming event."""


def build_session_key(
    platform: str,
    chat_type: ChatType,
    chat_id: str,
    user_id: str | None = None,
    thread_id: str | None = None,
    *,
    group_sessions_per_user: bool = True,
    thread_sessions_per_user: bool = False,
) -> str:
    """The routing key of a conversation, exactly as SPEC G1 spells it.

    - DM: ``agent:main:<platform>:dm:<chat_id>`` (for WhatsApp pass the canonical identifier);
    - group: ``agent:main:<platform>:group:<chat_id>:<user_id>``, per user;
    - thread/topic: ``agent:main:<platform>:group:<chat_id>:<thread_id>``, shared by its
      participants (``…:<thread_id>:<user_id>`` with ``thread_sessions_per_user``);
    - channel: ``agent:main:<platform>:channel:<chat_id>:<user_id>``.

    Without a participant id, or with ``group_sessions_per_user`` off, a room has one shared
    session (the key stops before the user id).
    """
    prefix = f"{SESSION_KEY_NAMESPACE}:{platform}"
    if chat_type == "dm":
        return f"{prefix}:dm:{chat_id}"
    kind = "channel" if chat_type == "channel" else "group"
    parts = [prefix, kind, chat_id]
    in_thread = chat_type == "thread" or thread_id is not None
    if in_thread and thread_id is not None:
        parts.append(thread_id)
    per_user = group_sessions_per_user and (not in_thread or thread_sessions_per_user)
    if per_user and user_id:
        parts.append(user_id)
    return ":".join(parts)
