"""The message views every form returns: windows, bookends, head/tail, positions.

Messages come back as plain dicts (the tool's payload is JSON): ``id``, ``role``, ``content``
(cut at :data:`MESSAGE_CHARS` characters, ``truncated`` and ``chars`` telling so), ``timestamp``
(local ISO 8601), ``tool_name`` and ``tool_calls`` (names) when present, and ``match`` — true on
the message a discovery result is anchored at.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core.store.protocol import SearchIndex

MESSAGE_CHARS = 4000
"""Longer message contents are cut to this many characters in every view."""
BOOKEND_MESSAGES = 3


def iso_time(moment: float | None) -> str | None:
    """A POSIX time as local ISO 8601 with its offset."""
    if moment is None:
        return None
    return _dt.datetime.fromtimestamp(moment).astimezone().isoformat(timespec="seconds")


def message_view(row: tuple[Any, ...], anchor_id: int | None = None) -> dict[str, Any]:
    """One message row (id, role, content, timestamp, tool name, tool calls JSON) as the payload shows it."""
    message_id, role, content, timestamp, tool_name, tool_calls = row
    text = content or ""
    view: dict[str, Any] = {
        "id": message_id,
        "role": role,
        "content": text[:MESSAGE_CHARS],
        "timestamp": iso_time(timestamp),
        "match": message_id == anchor_id,
    }
    if len(text) > MESSAGE_CHARS:
        view["truncated"] = True
        view["chars"] = len(text)
    if tool_name:
        view["tool_name"] = tool_name
    names = _tool_call_names(tool_calls)
    if names:
        view["tool_calls"] = names
    return view


def _tool_call_names(text: str | None) -> list[str]:
    if not text:
        return []
    try:
        calls = json.loads(text)
    except ValueError:
        return []
    if not isinstance(calls, list):
        return []
    return [str(call.get("name", "")) for call in calls if isinstance(call, dict)]


def window(
    index: SearchIndex,
    session_id: str,
    anchor_id: int,
    size: int,
    *,
    flag_anchor: bool = True,
) -> list[dict[str, Any]]:
    """Up to ``size`` messages before the anchor, the anchor, up to ``size`` after it."""
    before, rest = index.message_rows_around(session_id, anchor_id, size)
    flagged = anchor_id if flag_anchor else None
    return [message_view(row, flagged) for row in [*reversed(before), *rest]]


def single(index: SearchIndex, message_id: int) -> list[dict[str, Any]]:
    """Just the anchor message, flagged (what a compact result carries)."""
    return [message_view(found, message_id) for found in index.message_row(message_id)]


def bookends(
    index: SearchIndex, session_id: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first and the last :data:`BOOKEND_MESSAGES` user/assistant messages."""
    first, last = index.message_rows_ends(
        session_id, BOOKEND_MESSAGES, BOOKEND_MESSAGES, conversation_only=True
    )
    return [message_view(r) for r in first], [message_view(r) for r in reversed(last)]


def position(index: SearchIndex, session_id: str, message_id: int) -> tuple[int, int]:
    """How many messages of the session come before and after ``message_id``."""
    return index.message_position(session_id, message_id)


def head_and_tail(
    index: SearchIndex, session_id: str, head: int, tail: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first ``head`` and the last ``tail`` messages of a session."""
    first, last = index.message_rows_ends(session_id, head, tail, conversation_only=False)
    return [message_view(r) for r in first], [message_view(r) for r in reversed(last)]


def all_messages(index: SearchIndex, session_id: str) -> list[dict[str, Any]]:
    return [message_view(r) for r in index.message_rows(session_id)]


def first_conversation_message(index: SearchIndex, session_id: str) -> int | None:
    """The first user (else any) message: where a title-only match is anchored."""
    return index.first_conversation_message(session_id)
