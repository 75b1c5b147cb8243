"""What a QQ Bot dispatch (op 0) says, as a gateway event."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from hermes_hookspecs import ChatType, PlatformEvent


def event_from_payload(payload: Mapping[str, Any]) -> PlatformEvent | None:
    """The gateway event of one dispatch (op 0); None for what is not a message to the bot."""
    data, kind = payload.get("d"), payload.get("t")
    if not isinstance(data, dict):
        return None
    author: dict[str, Any] = data["author"] if isinstance(data.get("author"), dict) else {}
    chat_type: ChatType
    if kind == "C2C_MESSAGE_CREATE":
        chat, user, chat_type = author.get("user_openid"), author.get("user_openid"), "dm"
    elif kind == "GROUP_AT_MESSAGE_CREATE":
        chat, user, chat_type = data.get("group_openid"), author.get("member_openid"), "group"
    else:
        return None
    content, message_id = data.get("content"), data.get("id")
    if not all(isinstance(v, str) and v for v in (chat, user, message_id)):
        return None
    if not isinstance(content, str) or not content.strip():
        return None
    sent_at = None
    if isinstance(data.get("timestamp"), str):
        try:
            sent_at = datetime.datetime.fromisoformat(data["timestamp"]).timestamp()
        except ValueError:
            sent_at = None
    return PlatformEvent(
        platform="qqbot",
        chat_id=str(chat),
        text=content.strip(),
        chat_type=chat_type,
        user_id=str(user),
        message_id=str(message_id),
        sent_at=sent_at,
    )
