"""The tool's arguments: checked, defaulted and clamped, and which form they ask for.

The form is inferred, never named (SPEC Q1): ``query`` → discovery; ``session_id`` with
``around_message_id`` → scroll; ``session_id`` alone → read; nothing → browse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_LIMIT = 3
MAX_LIMIT = 10
BROWSE_DEFAULT_LIMIT = 10
BROWSE_MAX_LIMIT = 50
DEFAULT_WINDOW = 5
MAX_WINDOW = 50
DEFAULT_ROLES = ("user", "assistant")
ROLES = ("user", "assistant", "tool", "system")
SORTS = ("newest", "oldest")
DETAILS = ("adaptive", "full")
KNOWN = frozenset(
    {
        "query",
        "limit",
        "sort",
        "detail",
        "session_id",
        "around_message_id",
        "window",
        "role_filter",
        "source",
    }
)


class SearchArgumentError(ValueError):
    """An argument the tool cannot use; the message says which and why."""


@dataclass(frozen=True, slots=True)
class SearchArguments:
    form: str
    """``discovery``, ``scroll``, ``read`` or ``browse``."""
    query: str | None
    limit: int
    sort: str | None
    detail: str
    session_id: str | None
    around_message_id: int | None
    window: int
    roles: tuple[str, ...]
    source: str | None


def parse_arguments(arguments: Mapping[str, Any]) -> SearchArguments:
    """Check ``arguments`` (as an agent sent them) and infer the form."""
    unknown = sorted(set(arguments) - KNOWN)
    if unknown:
        raise SearchArgumentError(
            f"unknown argument(s) {', '.join(unknown)}; known: {', '.join(sorted(KNOWN))}"
        )
    query = _optional_text(arguments, "query")
    session_id = _optional_text(arguments, "session_id")
    around = arguments.get("around_message_id")
    around_id = None if around is None or around == "" else _integer("around_message_id", around)
    if around_id is not None and session_id is None:
        raise SearchArgumentError("around_message_id needs session_id (the session to scroll)")
    if query is not None:
        form = "discovery"
    elif session_id is not None:
        form = "scroll" if around_id is not None else "read"
    else:
        form = "browse"
    default_limit, max_limit = (
        (BROWSE_DEFAULT_LIMIT, BROWSE_MAX_LIMIT) if form == "browse" else (DEFAULT_LIMIT, MAX_LIMIT)
    )
    raw_limit = arguments.get("limit")
    limit = default_limit if raw_limit is None else _integer("limit", raw_limit)
    raw_window = arguments.get("window")
    window = DEFAULT_WINDOW if raw_window is None else _integer("window", raw_window)
    return SearchArguments(
        form=form,
        query=query,
        limit=min(max(limit, 1), max_limit),
        sort=_choice(arguments, "sort", SORTS, extra_none=("relevance",)),
        detail=_choice(arguments, "detail", DETAILS) or "adaptive",
        session_id=session_id,
        around_message_id=around_id,
        window=min(max(window, 1), MAX_WINDOW),
        roles=_roles(arguments.get("role_filter")),
        source=_optional_text(arguments, "source"),
    )


def _optional_text(arguments: Mapping[str, Any], name: str) -> str | None:
    value = arguments.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise SearchArgumentError(f"{name} must be a string")
    # Lone surrogates (broken UTF-16 from a client) cannot reach SQLite: replace them.
    value = value.encode("utf-8", "replace").decode("utf-8").strip()
    return value or None


_INT64 = 2**63


def _integer(name: str, value: Any) -> int:
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        number = int(value.strip())
    if number is None or not -_INT64 <= number < _INT64:
        raise SearchArgumentError(f"{name} must be an integer, not {value!r}"[:200])
    return number


def _choice(
    arguments: Mapping[str, Any],
    name: str,
    choices: tuple[str, ...],
    extra_none: tuple[str, ...] = (),
) -> str | None:
    value = _optional_text(arguments, name)
    if value is None:
        return None
    lowered = value.lower()
    if lowered in extra_none:
        return None
    if lowered not in choices:
        raise SearchArgumentError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return lowered


def _roles(value: Any) -> tuple[str, ...]:
    if value is None or value == "" or value == []:
        return DEFAULT_ROLES
    if isinstance(value, str):
        parts = [part.strip().lower() for part in value.split(",")]
    elif isinstance(value, list | tuple) and all(isinstance(part, str) for part in value):
        parts = [part.strip().lower() for part in value]
    else:
        raise SearchArgumentError("role_filter must be a comma-separated string of roles")
    roles = tuple(dict.fromkeys(part for part in parts if part))
    wrong = [role for role in roles if role not in ROLES]
    if wrong or not roles:
        raise SearchArgumentError(
            f"role_filter: unknown role(s) {', '.join(wrong) or '(none given)'}; "
            f"use {', '.join(ROLES)}"
        )
    return roles
