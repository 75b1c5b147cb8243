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


# What each stored field may hold, so a record the store would refuse half-way is refused
# before anything of it is written.
_SESSION_TEXT = (
    "title", "title_source", "user_id", "model", "system_prompt", "parent_session_id",
    "parent_kind", "end_reason", "cwd", "git_branch", "git_repo_root", "chat_id", "chat_type",
    "thread_id", "session_key", "billing_provider",
)  # fmt: skip
_SESSION_NUMBERS = ("ended_at", "last_active_at", "cost_actual_usd", "cost_estimated_usd")
_SESSION_COUNTS = (
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "message_count",
    "tool_call_count",
)  # fmt: skip
_SESSION_FLAGS = ("pinned", "archived")
_SESSION_OBJECTS = ("model_config", "metadata")
_MESSAGE_TEXT = ("tool_call_id", "tool_name", "reasoning", "platform_message_id")
_ROLES = ("system", "user", "assistant", "tool")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_optional(
    data: dict[str, Any], owner: str, names: tuple[str, ...], test: Any, kind: str
) -> None:
    for name in names:
        value = data.get(name)
        if value is not None and not test(value):
            raise ShapeError(f"{owner}'s {name!r} is not {kind}")


def session_from_dict(data: Any) -> Session:
    """A ``Session`` from its backup object (unknown keys ignored); :class:`ShapeError`
    saying which field is missing or of the wrong kind."""
    if not isinstance(data, dict):
        raise ShapeError("no 'session' object" if data is None else "'session' is not an object")
    for name in ("id", "source", "started_at"):
        if data.get(name) is None:
            raise ShapeError(f"session has no {name!r}")
    if not isinstance(data["id"], str) or not data["id"]:
        raise ShapeError("session's 'id' is not a non-empty string")
    if not isinstance(data["source"], str) or not data["source"]:
        raise ShapeError("session's 'source' is not a non-empty string")
    if not _is_number(data["started_at"]):
        raise ShapeError("session's 'started_at' is not a number (POSIX seconds)")
    _check_optional(data, "session", _SESSION_TEXT, lambda v: isinstance(v, str), "text")
    _check_optional(data, "session", _SESSION_NUMBERS, _is_number, "a number")
    _check_optional(data, "session", _SESSION_COUNTS, _is_count, "a whole number")
    _check_optional(data, "session", _SESSION_FLAGS, lambda v: v in (True, False), "true or false")
    _check_optional(data, "session", _SESSION_OBJECTS, lambda v: isinstance(v, dict), "an object")
    fields = {
        key: value for key, value in _known(data, _SESSION_FIELDS).items() if value is not None
    }
    session = Session(**fields)
    if session.metadata is None:
        session.metadata = {}
    return session


def message_from_dict(data: Any, number: int = 1) -> Message:
    """A ``Message`` from its backup object, without the store-assigned ``id``/``session_id``;
    :class:`ShapeError` naming message ``number`` (1-based) and what is wrong with it."""
    owner = f"message {number}"
    if not isinstance(data, dict):
        raise ShapeError(f"{owner} is not an object")
    role, content = data.get("role"), data.get("content")
    if role is None:
        raise ShapeError(f"{owner} has no 'role'")
    if role not in _ROLES:
        raise ShapeError(f"{owner} has an unknown role {role!r}")
    if content is None:
        raise ShapeError(f"{owner} has no 'content'")
    if not isinstance(content, str):
        raise ShapeError(f"{owner}'s 'content' is not text")
    _check_optional(data, owner, _MESSAGE_TEXT, lambda v: isinstance(v, str), "text")
    _check_optional(data, owner, ("timestamp",), _is_number, "a number")
    _check_optional(data, owner, ("token_count",), _is_count, "a whole number")
    calls = data.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ShapeError(f"{owner}'s 'tool_calls' is not a list")
    tool_calls = []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ShapeError(f"{owner} has a tool call without a 'name'")
        arguments, call_id = call.get("arguments", "{}"), call.get("id")
        if not isinstance(arguments, str) or not (call_id is None or isinstance(call_id, str)):
            raise ShapeError(f"{owner} has a tool call whose 'arguments' or 'id' is not text")
        tool_calls.append(ToolCall(name=call["name"], arguments=arguments, id=call_id))
    fields = _known(data, _MESSAGE_FIELDS)
    for name in ("id", "session_id", "tool_calls", "role", "content"):
        fields.pop(name, None)
    return Message(role=role, content=content, tool_calls=tuple(tool_calls), **fields)
