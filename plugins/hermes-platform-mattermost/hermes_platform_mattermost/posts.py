"""What a Mattermost post becomes for the gateway (a pure function over the documented post
shape and the ``posted`` event's ``channel_type``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hermes_hookspecs import ChatType, PlatformEvent

CHAT_TYPES: Mapping[str, ChatType] = {"D": "dm", "G": "group", "O": "channel", "P": "channel"}
"""Direct message, group message, public and private channel."""


def created_ms(post: Mapping[str, Any]) -> int:
    """The post's ``create_at`` (milliseconds since the epoch; 0 when missing)."""
    value = post.get("create_at")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def event_from_post(
    post: Mapping[str, Any], channel_type: str, bot_id: str, bot_name: str = "",
    sender: str | None = None,
) -> PlatformEvent | None:  # fmt: skip
    """The gateway event of a post; None for what is not for the agent (the bot's own posts,
    system messages such as joins, deleted or empty posts). A leading ``@bot`` is removed."""
    user = post.get("user_id")
    if not isinstance(user, str) or not user or user == bot_id:
        return None
    if post.get("type") or post.get("delete_at"):
        return None
    text = str(post.get("message") or "")
    if bot_name:
        text = re.sub(rf"^\s*@{re.escape(bot_name)}\b[\s:,]*", "", text)
    if not text.strip():
        return None
    chat_type: ChatType = CHAT_TYPES.get(channel_type, "channel")
    root = post.get("root_id")
    thread_id = root if isinstance(root, str) and root else None
    if thread_id is not None:
        chat_type = "thread"
    created = created_ms(post)
    return PlatformEvent(
        platform="mattermost",
        chat_id=str(post.get("channel_id") or ""),
        text=text,
        chat_type=chat_type,
        user_id=user,
        thread_id=thread_id,
        message_id=str(post.get("id") or "") or None,
        user_name=sender,
        sent_at=created / 1000 if created else None,
    )
