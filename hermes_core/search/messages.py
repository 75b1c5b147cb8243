"""The message views every form returns: windows, bookends, head/tail, positions.

Messages come back as plain dicts (the tool's payload is JSON): ``id``, ``role``, ``content``
(cut at :data:`MESSAGE_CHARS` characters, ``truncated`` and ``chars`` telling so), ``timestamp``
(local ISO 8601), ``tool_name`` and ``tool_calls`` (names) when present, and ``match`` — true on
the message a discovery result is anchored at.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from typing import Any

MESSAGE_CHARS = 4000
"""Longer message contents are cut to this many characters in every view."""
BOOKEND_MESSAGES = 3
_COLUMNS = "id, role, content, timestamp, tool_name, tool_calls"


def iso_time(moment: float | None) -> str | None:
    """A POSIX time as local ISO 8601 with its offset."""
    if moment is None:
        return None
    return _dt.datetime.fromtimestamp(moment).astimezone().isoformat(timespec="seconds")


def message_view(row: tuple[Any, ...], anchor_id: int | None = None) -> dict[str, Any]:
    """One message row (``_COLUMNS``) as the payload shows it."""
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
    connection: sqlite3.Connection,
    session_id: str,
    anchor_id: int,
    size: int,
    *,
    flag_anchor: bool = True,
) -> list[dict[str, Any]]:
    """Up to ``size`` messages before the anchor, the anchor, up to ``size`` after it."""
    before = connection.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
        (session_id, anchor_id, size),
    ).fetchall()
    rest = connection.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? AND id >= ? ORDER BY id LIMIT ?",
        (session_id, anchor_id, size + 1),
    ).fetchall()
    flagged = anchor_id if flag_anchor else None
    return [message_view(row, flagged) for row in [*reversed(before), *rest]]


def single(connection: sqlite3.Connection, message_id: int) -> list[dict[str, Any]]:
    """Just the anchor message, flagged (what a compact result carries)."""
    row = connection.execute(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,))
    return [message_view(found, message_id) for found in row]


def bookends(
    connection: sqlite3.Connection, session_id: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first and the last :data:`BOOKEND_MESSAGES` user/assistant messages."""
    first = connection.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? "
        "AND role IN ('user', 'assistant') ORDER BY id LIMIT ?",
        (session_id, BOOKEND_MESSAGES),
    ).fetchall()
    last = connection.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? "
        "AND role IN ('user', 'assistant') ORDER BY id DESC LIMIT ?",
        (session_id, BOOKEND_MESSAGES),
    ).fetchall()
    return [message_view(r) for r in first], [message_view(r) for r in reversed(last)]


def position(connection: sqlite3.Connection, session_id: str, message_id: int) -> tuple[int, int]:
    """How many messages of the session come before and after ``message_id``."""
    before, after = connection.execute(
        "SELECT (SELECT count(*) FROM messages WHERE session_id = ?1 AND id < ?2), "
        "(SELECT count(*) FROM messages WHERE session_id = ?1 AND id > ?2)",
        (session_id, message_id),
    ).fetchone()
    return int(before), int(after)


def head_and_tail(
    connection: sqlite3.Connection, session_id: str, head: int, tail: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first ``head`` and the last ``tail`` messages of a session."""
    first = connection.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id LIMIT ?",
        (session_id, head),
    ).fetchall()
    last = connection.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT ?",
        (session_id, tail),
    ).fetchall()
    return [message_view(r) for r in first], [message_view(r) for r in reversed(last)]


def all_messages(connection: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    rows = connection.execute(
        f"SELECT {_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
    )
    return [message_view(r) for r in rows]


def first_conversation_message(connection: sqlite3.Connection, session_id: str) -> int | None:
    """The first user (else any) message: where a title-only match is anchored."""
    row = connection.execute(
        "SELECT id FROM messages WHERE session_id = ? ORDER BY role != 'user', id LIMIT 1",
        (session_id,),
    ).fetchone()
    return None if row is None else int(row[0])
