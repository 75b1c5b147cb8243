"""What the store lets in (DESIGN §9): every backend checks a new session and every message
here, before any SQL, so text from outside (gateway users, imported logs, backups, an agent
runtime calling the library) is stored as one of the values the model defines, or refused.

A refusal is a ``ValueError`` naming the field and the value (``message 3: role 'wizard' is
not one of system, user, assistant, tool``); since the check runs before anything is written,
a batch with one bad message writes none of it. What a value may be is what
:mod:`hermes_hookspecs` types say: a role is a :data:`~hermes_hookspecs.Role`, a timestamp a
finite number of seconds, a token count a non-negative integer, a tool call a
:class:`~hermes_hookspecs.ToolCall` of strings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, get_args

from hermes_hookspecs import Message, ParentKind, Role, ToolCall

from .ids import check_session_id

ROLES: tuple[str, ...] = get_args(Role)
PARENT_KINDS: tuple[str, ...] = get_args(ParentKind)
TITLE_SOURCES = ("user", "auto", "import", "lineage")
MAX_SOURCE_LENGTH = 64

CREATABLE_FIELDS = frozenset({
    "user_id", "model", "cwd", "git_branch", "git_repo_root", "chat_id", "chat_type",
    "thread_id", "session_key", "billing_provider", "cost_actual_usd", "cost_estimated_usd",
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "pinned",
    "archived", "ended_at", "end_reason", "last_active_at", "title_source",
})  # fmt: skip
"""Session columns a caller may set directly when creating a session."""

_TIMES = ("ended_at", "last_active_at")
_COSTS = ("cost_actual_usd", "cost_estimated_usd")
_TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
_FLAGS = ("pinned", "archived")
_TEXTS = (
    "user_id", "model", "cwd", "git_branch", "git_repo_root", "chat_id", "chat_type",
    "thread_id", "session_key", "billing_provider", "end_reason",
)  # fmt: skip
_MESSAGE_TEXTS = ("tool_call_id", "tool_name", "reasoning", "platform_message_id")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_timestamp(field: str, value: object, *, where: str = "") -> None:
    """A timestamp is a finite number of POSIX seconds."""
    if not _is_number(value) or not math.isfinite(value):  # type: ignore[arg-type]
        raise ValueError(f"{where}{field} {value!r} is not a finite number of seconds")


def check_token_count(field: str, value: object, *, where: str = "") -> None:
    """A token count is a non-negative integer."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{where}{field} {value!r} is not a non-negative whole number")


def check_source(source: object) -> None:
    """A source name (``cli``, ``telegram``, ``claude-code``…): non-empty text of at most 64
    printable characters."""
    if (
        not isinstance(source, str)
        or not source
        or len(source) > MAX_SOURCE_LENGTH
        or not source.isprintable()
    ):
        raise ValueError(
            f"source {source!r} is not a source name (1 to {MAX_SOURCE_LENGTH} printable "
            "characters)"
        )


def check_usage(input_tokens: object, output_tokens: object) -> None:
    """Token counts added to a session's totals with a batch are non-negative integers."""
    check_token_count("input_tokens", input_tokens)
    check_token_count("output_tokens", output_tokens)


def check_new_session(
    *,
    session_id: str | None,
    source: object,
    started: object,
    parent_session_id: str | None,
    parent_kind: object,
    fields: Mapping[str, Any],
) -> None:
    """Check a session about to be created: only :data:`CREATABLE_FIELDS` (else
    ``TypeError``), a parent and its kind together, a chosen id matching the id grammar
    (None means the store makes one), the source a source name, the times finite numbers,
    token totals non-negative integers, costs finite numbers, flags 0/1 or booleans, and the
    text fields text."""
    unknown = set(fields) - CREATABLE_FIELDS
    if unknown:
        raise TypeError(f"unknown session fields: {', '.join(sorted(unknown))}")
    if (parent_session_id is None) != (parent_kind is None):
        raise ValueError("parent_session_id and parent_kind go together")
    if session_id is not None:
        check_session_id(session_id)
    check_source(source)
    check_timestamp("started_at", started)
    if parent_kind is not None and parent_kind not in PARENT_KINDS:
        raise ValueError(f"parent_kind {parent_kind!r} is not one of {', '.join(PARENT_KINDS)}")
    for name, value in fields.items():
        if value is None and name not in _TOKENS and name not in _FLAGS:
            continue
        if name in _TIMES:
            check_timestamp(name, value)
        elif name in _TOKENS:
            check_token_count(name, value)
        elif name in _COSTS:
            if not _is_number(value) or not math.isfinite(value):
                raise ValueError(f"{name} {value!r} is not a finite number")
        elif name in _FLAGS:
            if value not in (0, 1):  # True and False are 1 and 0
                raise ValueError(f"{name} {value!r} is not a flag (true or false)")
        elif name == "title_source":
            if value not in TITLE_SOURCES:
                raise ValueError(f"title_source {value!r} is not one of {', '.join(TITLE_SOURCES)}")
        elif name in _TEXTS and not isinstance(value, str):
            raise ValueError(f"{name} {value!r} is not text")


def _text_or_none(value: object) -> bool:
    return value is None or type(value) is str or isinstance(value, str)


def check_message(message: Message, *, where: str = "") -> None:
    """Check one message; ``where`` starts the error text (``message 3: ``, its place in the
    batch counted from 1). Backends check every message of a batch before writing any."""
    if not isinstance(message, Message):
        raise ValueError(f"{where}{message!r} is not a Message")
    if message.role not in ROLES:
        raise ValueError(f"{where}role {message.role!r} is not one of {', '.join(ROLES)}")
    if not isinstance(message.content, str):
        raise ValueError(f"{where}content {message.content!r} is not text")
    timestamp = message.timestamp
    # The common case (a finite float) is decided without calls: bulk loads check every message.
    if timestamp is not None and not (type(timestamp) is float and math.isfinite(timestamp)):
        check_timestamp("timestamp", timestamp, where=where)
    if message.token_count is not None:
        check_token_count("token_count", message.token_count, where=where)
    if not (
        _text_or_none(message.tool_call_id)
        and _text_or_none(message.tool_name)
        and _text_or_none(message.reasoning)
        and _text_or_none(message.platform_message_id)
    ):
        for name in _MESSAGE_TEXTS:
            value = getattr(message, name)
            if not _text_or_none(value):
                raise ValueError(f"{where}{name} {value!r} is not text")
    calls = message.tool_calls
    if not isinstance(calls, tuple | list):
        raise ValueError(f"{where}tool_calls {calls!r} is not a sequence of tool calls")
    for call in calls:
        if (
            not isinstance(call, ToolCall)
            or not isinstance(call.name, str)
            or not isinstance(call.arguments, str)
            or (call.id is not None and not isinstance(call.id, str))
        ):
            raise ValueError(
                f"{where}tool_calls holds {call!r}, not a tool call (a name, arguments as "
                "text, an optional id)"
            )
