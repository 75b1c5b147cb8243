"""What a BlueBubbles message becomes for the gateway (pure functions over the documented
message shape: ``guid``, ``text``, ``isFromMe``, ``handle.address``, ``chats[].guid``,
``dateCreated``), and the handles and chat guids of iMessage."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from hermes_hookspecs import PlatformEvent

GROUP_STYLE = 43
"""A chat's ``style`` for a group chat (a one-to-one chat is 45)."""


def new_message_in(body: bytes) -> dict[str, Any] | None:
    """The message of a ``new-message`` webhook body (``{"type", "data"}``); None for the
    other events; ValueError for malformed JSON or a ``new-message`` without a message."""
    payload = json.loads(body)
    if not isinstance(payload, dict) or payload.get("type") != "new-message":
        return None
    if not isinstance(payload.get("data"), dict):
        raise ValueError("a new-message event without a message")
    return dict(payload["data"])


def canonical_handle(address: str) -> str:
    """One spelling per person: an email address in lower case, a phone number as ``+`` and
    digits (``+1 (555) 010-2000`` → ``+15550102000``)."""
    address = address.strip()
    if "@" in address:
        return address.lower()
    digits = re.sub(r"[^\d]", "", address)
    if not digits:
        return address
    return ("+" if address.startswith("+") else "") + digits


def is_group(chat: Mapping[str, Any]) -> bool:
    """A group chat: its style says so, or its guid does (``iMessage;+;chat…``)."""
    if chat.get("style") is not None:
        return chat.get("style") == GROUP_STYLE
    return ";+;" in str(chat.get("guid") or "")


def chat_guid_of(chat_id: str, service: str = "iMessage") -> str:
    """Where to send for a routed chat id: a chat guid as it is; for a person's handle (a
    DM's chat id), the guid of the one-to-one chat with them."""
    return chat_id if ";" in chat_id else f"{service};-;{chat_id}"


def created_ms(message: Mapping[str, Any]) -> int:
    """The message's ``dateCreated`` (milliseconds since the epoch; 0 when missing)."""
    value = message.get("dateCreated")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def event_from_message(message: Mapping[str, Any]) -> tuple[PlatformEvent, str] | None:
    """The gateway event of a received message and the guid of its chat (where the answer
    goes); None for what is not for the agent: the account's own messages (``isFromMe``),
    tapbacks and other associated messages, group events, messages without text or chat."""
    if message.get("isFromMe") or message.get("associatedMessageGuid"):
        return None
    if message.get("itemType") not in (None, 0) or message.get("isSystemMessage"):
        return None
    text = str(message.get("text") or "").replace("\ufffc", "").strip()
    chats = [c for c in message.get("chats") or [] if isinstance(c, dict) and c.get("guid")]
    handle = message.get("handle") if isinstance(message.get("handle"), dict) else None
    address = str(handle.get("address") or "") if handle else ""
    guid = str(message.get("guid") or "")
    if not text or not chats or not address or not guid:
        return None
    chat = chats[0]
    chat_guid, sender = str(chat["guid"]), canonical_handle(address)
    created = created_ms(message)
    event = PlatformEvent(
        platform="bluebubbles",
        chat_id=chat_guid if is_group(chat) else sender,
        text=text,
        chat_type="group" if is_group(chat) else "dm",
        user_id=sender,
        message_id=guid,
        user_name=address,
        chat_name=str(chat.get("displayName") or "") or None,
        sent_at=created / 1000 if created else None,
    )
    return event, chat_guid
