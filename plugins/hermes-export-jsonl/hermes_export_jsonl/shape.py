"""The jsonl backup shape, version 1: one JSON object per line, one line per session.

::

    {"format": "hermes-session", "version": 1,
     "session": {every Session field: "id", "source", "started_at", "title", ...},
     "messages": [{every Message field: "id", "session_id", "role", "content", "timestamp",
                   "tool_calls": [{"name", "arguments", "id"}], "tool_call_id", "tool_name",
                   "reasoning", "token_count", "platform_message_id"}, ...],
     "children": [delegate session ids], "lineage": [compression lineage ids, or empty]}

Timestamps are POSIX seconds (UTC) as numbers, exactly as stored. Readers ignore keys they do
not know, so later versions may add keys; a change that breaks readers bumps ``version``.

With ``--only user-prompts`` each line is one prompt instead::

    {"format": "hermes-prompt", "version": 1, "session_id": ..., "index": 1 (per session),
     "timestamp": POSIX seconds or null, "created_at": ISO 8601 UTC or null, "text": ...,
     "message_id": ..., "platform_message_id": ...}
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from hermes_hookspecs import Message, Session, SessionRecord, ToolCall

SESSION_FORMAT = "hermes-session"
PROMPT_FORMAT = "hermes-prompt"
SHAPE_VERSION = 1

_SESSION_FIELDS = {f.name for f in dataclasses.fields(Session)}
_MESSAGE_FIELDS = {f.name for f in dataclasses.fields(Message)}


class ShapeError(ValueError):
    """A line that is not a jsonl backup object this reader understands."""


def session_to_dict(session: Session) -> dict[str, Any]:
    """Every stored field of ``session``."""
    return {f.name: getattr(session, f.name) for f in dataclasses.fields(Session)}


def message_to_dict(message: Message) -> dict[str, Any]:
    """Every field of ``message``, tool calls as objects."""
    data = {f.name: getattr(message, f.name) for f in dataclasses.fields(Message)}
    data["tool_calls"] = [
        {"name": call.name, "arguments": call.arguments, "id": call.id}
        for call in message.tool_calls
    ]
    return data


def record_to_dict(record: SessionRecord) -> dict[str, Any]:
    """One backup line's object."""
    return {
        "format": SESSION_FORMAT,
        "version": SHAPE_VERSION,
        "session": session_to_dict(record.session),
        "messages": [message_to_dict(message) for message in record.messages],
        "children": list(record.children),
        "lineage": list(record.lineage),
    }


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return (
        datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    )


def prompt_to_dict(session_id: str, index: int, message: Message) -> dict[str, Any]:
    """One prompt line's object (``--only user-prompts``)."""
    return {
        "format": PROMPT_FORMAT,
        "version": SHAPE_VERSION,
        "session_id": session_id,
        "index": index,
        "timestamp": message.timestamp,
        "created_at": _iso(message.timestamp),
        "text": message.content,
        "message_id": message.id,
        "platform_message_id": message.platform_message_id,
    }


def _known(data: dict[str, Any], names: set[str]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key in names}


def session_from_dict(data: Any) -> Session:
    """A ``Session`` from its backup object (unknown keys ignored)."""
    if not isinstance(data, dict):
        raise ShapeError("'session' is not an object")
    try:
        session = Session(**_known(data, _SESSION_FIELDS))
    except TypeError as error:
        raise ShapeError(f"session: {error}") from error
    if not isinstance(session.id, str) or not session.id:
        raise ShapeError("session without an id")
    if not isinstance(session.source, str) or not isinstance(session.started_at, int | float):
        raise ShapeError(f"session {session.id}: no source or start time")
    if session.metadata is None:
        session.metadata = {}
    return session


def message_from_dict(data: Any) -> Message:
    """A ``Message`` from its backup object, without the store-assigned ``id``/``session_id``."""
    if not isinstance(data, dict):
        raise ShapeError("a message is not an object")
    fields = _known(data, _MESSAGE_FIELDS)
    fields.pop("id", None)
    fields.pop("session_id", None)
    calls = fields.pop("tool_calls", None) or []
    if not isinstance(calls, list):
        raise ShapeError("tool_calls is not a list")
    try:
        tool_calls = tuple(
            ToolCall(
                name=str(call["name"]),
                arguments=str(call.get("arguments", "{}")),
                id=call.get("id"),
            )
            for call in calls
        )
        message = Message(**fields, tool_calls=tool_calls)
    except (TypeError, KeyError, AttributeError) as error:
        raise ShapeError(f"message: {error}") from error
    if message.role not in ("system", "user", "assistant", "tool") or not isinstance(
        message.content, str
    ):
        raise ShapeError("a message without a known role or text content")
    return message
