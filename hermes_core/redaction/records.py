"""Walking a :class:`SessionRecord`: which fields are redacted and which are copied as is.

The rule is "every string field is redacted except identifiers and fixed vocabularies". It is
written as a list of fields to *keep*, so a field added to the contract later is redacted by
default: forgetting to list it can only hide too much, never leak. Paths (``cwd``,
``git_repo_root``) are redacted too: they are not secrets, but a URL with credentials or a
token can end up anywhere, and redacting a path that holds none changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

from hermes_hookspecs import Message, Session, SessionRecord, ToolCall

SESSION_FIELDS_KEPT = frozenset(
    {
        "id",
        "source",
        "parent_session_id",
        "parent_kind",
        "title_source",
        "user_id",
        "chat_id",
        "chat_type",
        "thread_id",
        "session_key",
    }
)
"""Identifiers and vocabularies of a session, never altered by redaction."""
MESSAGE_FIELDS_KEPT = frozenset({"id", "session_id", "role", "tool_call_id", "platform_message_id"})
"""Identifiers of a message, never altered by redaction (``tool_calls`` are walked apart)."""
TOOL_CALL_FIELDS_KEPT = frozenset({"id"})

RedactValue = Callable[[Any], Any]


def _redacted_fields(item: Any, kept: frozenset[str], redact: RedactValue) -> dict[str, Any]:
    """The changed fields of a dataclass instance: each str/dict/list/tuple field not kept."""
    changes: dict[str, Any] = {}
    for field in fields(item):
        if field.name in kept or field.name == "tool_calls":
            continue
        value = getattr(item, field.name)
        if isinstance(value, str | dict | list | tuple):
            changes[field.name] = redact(value)
    return changes


def redact_session(session: Session, redact: RedactValue) -> Session:
    """A copy of ``session`` with its free-text fields passed through ``redact``."""
    return replace(session, **_redacted_fields(session, SESSION_FIELDS_KEPT, redact))


def redact_tool_call(call: ToolCall, redact: RedactValue) -> ToolCall:
    """A copy of ``call`` with its name and arguments redacted, its id kept."""
    return replace(call, **_redacted_fields(call, TOOL_CALL_FIELDS_KEPT, redact))


def redact_message(message: Message, redact: RedactValue) -> Message:
    """A copy of ``message`` with its content, reasoning, tool name and tool calls redacted."""
    changes = _redacted_fields(message, MESSAGE_FIELDS_KEPT, redact)
    changes["tool_calls"] = tuple(redact_tool_call(call, redact) for call in message.tool_calls)
    return replace(message, **changes)


def redact_session_record(record: SessionRecord, redact: RedactValue) -> SessionRecord:
    """A new record: the session and every message redacted; the other fields of the record
    (children, lineage: session ids) copied as they are."""
    return replace(
        record,
        session=redact_session(record.session, redact),
        messages=[redact_message(message, redact) for message in record.messages],
    )
