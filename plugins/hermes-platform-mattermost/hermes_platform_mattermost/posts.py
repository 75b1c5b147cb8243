"""What a Mattermost post becomes for the gateway (a pure function over the documented post
shape and the ``posted`` event's ``channel_type``)."""

from __future__ import annotations

import json
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


def posted_of_frame(frame: str) -> tuple[dict[str, Any], str, str | None] | None:
    """The post, channel type and sender of a WebSocket frame carrying a ``posted`` event
    (``data.post`` is the post as a JSON string); None for any other frame."""
    try:
        message = json.loads(frame)
        info = message.get("data") if message.get("event") == "posted" else None
        post = json.loads(info["post"]) if isinstance(info, dict) else None
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    if not isinstance(post, dict) or not isinstance(info, dict):
        return None
    sender = str(info.get("sender_name") or "").lstrip("@") or None
    return post, str(info.get("channel_type") or ""), sender


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
