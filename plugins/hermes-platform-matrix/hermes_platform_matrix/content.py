"""What Matrix events say and what the adapter sends: thread roots, edits, replies, and which
events of a batch come after the bot joined the room."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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


def since_own_join(events: list[Any], user_id: str) -> list[Any]:
    """The events after the bot's own join in this batch (all when it holds none): a room's
    history from before the bot was in it is not answered."""
    from nio import RoomMemberEvent

    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if (
            isinstance(event, RoomMemberEvent)
            and event.state_key == user_id
            and event.membership == "join"
            and event.prev_membership != "join"
        ):
            return events[index + 1 :]
    return events
