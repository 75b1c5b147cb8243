"""Hermes Agent ``messages`` rows as Hermes sessions :class:`Message` values.

* Visible rows only, as Hermes Agent shows them: rows archived by in-place compaction
  (``active=0, compacted=1``) are real history and come along; rows undone by a rewind
  (``active=0, compacted=0``), rows marked ``display_kind='hidden'`` and ``session_meta`` rows
  are skipped and counted.
* ``content`` holds JSON when the message was a list of parts: text parts are joined, an image
  becomes ``[image]`` (the store keeps no media bytes, SPEC S7), another part ``[<type>]``.
  Newer Hermes Agent stores mark such content with a NUL byte and ``json:`` before the JSON
  (:data:`PARTS_MARKER`, what its store strips on read); older ones store the bare JSON.
* ``tool_calls`` (OpenAI-style ``{"id", "function": {"name", "arguments"}}``, or flat
  ``{"name", "arguments"}``) become :class:`ToolCall` values; tool results keep their
  ``tool_call_id`` and ``tool_name``; ``reasoning`` (else ``reasoning_content``) is kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, cast

from hermes_hookspecs import Message, Role, ToolCall

from .schema import StoreShape

PARTS_MARKER = "\x00json:"
"""What Hermes Agent writes before a message's content when it stored a list of parts
(pictures pasted in the terminal or sent to its gateway) as JSON."""

ROLES = frozenset({"system", "user", "assistant", "tool"})
_WANTED = (
    "id", "role", "content", "tool_call_id", "tool_calls", "tool_name", "timestamp",
    "token_count", "reasoning", "reasoning_content", "platform_message_id", "active",
    "compacted", "display_kind",
)  # fmt: skip


def message_columns(shape: StoreShape) -> list[str]:
    """The ``messages`` columns to select (those of :data:`_WANTED` the store has)."""
    return [name for name in _WANTED if shape.messages_have(name)]


def to_message(row: Mapping[str, Any], skipped: MutableMapping[str, int]) -> Message | None:
    """The message of one row, or None (counted in ``skipped`` by reason) for a row that
    Hermes Agent does not show."""
    role = row["role"]
    reason = _hidden_reason(row)
    if reason is not None:
        _skip(skipped, reason)
        return None
    reasoning = row.get("reasoning") or row.get("reasoning_content")
    return Message(
        role=cast(Role, role),
        content=flatten_content(row.get("content")),
        timestamp=float(row["timestamp"]) if row.get("timestamp") is not None else None,
        tool_calls=tool_calls(row.get("tool_calls"), skipped),
        tool_call_id=_text(row.get("tool_call_id")),
        tool_name=_text(row.get("tool_name")),
        reasoning=str(reasoning) if reasoning else None,
        token_count=int(row["token_count"]) if row.get("token_count") is not None else None,
        platform_message_id=_text(row.get("platform_message_id")),
    )


def _hidden_reason(row: Mapping[str, Any]) -> str | None:
    """Why Hermes Agent does not show this row, or None when it does."""
    if row.get("active", 1) == 0 and not row.get("compacted", 0):
        return "message undone by a rewind in Hermes Agent"
    if row.get("display_kind") == "hidden":
        return "hidden message"
    if row["role"] == "session_meta":
        return "session_meta row"
    if row["role"] not in ROLES:
        return "message with an unknown role"
    return None


def flatten_content(raw: object) -> str:
    """The text of a message's ``content`` (see the module docstring)."""
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        return raw.decode("utf-8", "replace")
    text = str(raw)
    if text.startswith(PARTS_MARKER):
        return _marked_parts_text(text[len(PARTS_MARKER) :])
    stripped = text.lstrip()
    if not stripped.startswith(("[", "{")):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return _parts_text(value, fallback=text)


def _marked_parts_text(encoded: str) -> str:
    """The text of content Hermes Agent marked as JSON parts: the parts when they decode,
    else the text after the marker (never the marker's NUL byte)."""
    try:
        value = json.loads(encoded)
    except ValueError:
        return encoded
    if isinstance(value, str):
        return value
    return _parts_text(value, fallback=encoded)


def _parts_text(value: object, *, fallback: str) -> str:
    """The text of a decoded list of parts (or one part), or ``fallback`` when ``value`` is
    not parts."""
    parts = value if isinstance(value, list) else [value]
    if not parts or not all(isinstance(part, dict) and "type" in part for part in parts):
        return fallback  # JSON-looking text a person wrote, not a list of parts
    return "\n\n".join(piece for piece in map(_part_text, parts) if piece)


def _part_text(part: Mapping[str, Any]) -> str:
    kind = str(part.get("type"))
    if kind in ("text", "input_text", "output_text"):
        return str(part.get("text") or "")
    if kind in ("image", "image_url", "input_image"):
        return "[image]"
    return f"[{kind}]"


def tool_calls(raw: object, skipped: MutableMapping[str, int]) -> tuple[ToolCall, ...]:
    """The tool calls of an assistant row's ``tool_calls`` JSON."""
    if raw is None or raw == "":
        return ()
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        _skip(skipped, "unreadable tool_calls (kept as text)")
        return (ToolCall(name="unknown", arguments=str(raw)),)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(_tool_call(item) for item in value if isinstance(item, dict))


def _tool_call(item: Mapping[str, Any]) -> ToolCall:
    function = item.get("function")
    source = function if isinstance(function, dict) else item
    arguments = source.get("arguments", "{}")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = item.get("id") or item.get("call_id")
    return ToolCall(
        name=str(source.get("name") or "unknown"),
        arguments=arguments,
        id=str(call_id) if call_id else None,
    )


def iter_skipping(
    rows: Iterator[Mapping[str, Any]], skipped: MutableMapping[str, int]
) -> Iterator[Message]:
    """The messages of ``rows``, rows Hermes Agent does not show left out (counted)."""
    for row in rows:
        message = to_message(row, skipped)
        if message is not None:
            yield message


def _skip(skipped: MutableMapping[str, int], reason: str) -> None:
    skipped[reason] = skipped.get(reason, 0) + 1


def _text(value: object) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if text else None
