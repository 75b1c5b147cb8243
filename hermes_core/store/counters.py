"""The counters each ``sessions`` row keeps of its messages, checked against the rows.

``append_messages`` and the imports add to ``message_count`` (one per message) and
``tool_call_count`` (the tool calls of each message: the length of its ``tool_calls`` JSON
array) in the transaction that writes the messages, so the two always match the rows — unless
the file was edited behind the store's back, or restored from pieces (``repair``). Token
totals and costs come from the model's usage reports, not from the messages, so they cannot
be recomputed and are not checked.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

_TOOL_CALLS = (
    "CASE WHEN tool_calls IS NOT NULL AND json_valid(tool_calls) "
    "AND json_type(tool_calls) = 'array' THEN json_array_length(tool_calls) ELSE 0 END"
)
"""How many tool calls a message holds (its ``tool_calls`` JSON array; anything else: none)."""

_ACTUAL = (
    "SELECT s.id, s.message_count, s.tool_call_count, coalesce(m.n, 0), coalesce(m.calls, 0) "
    "FROM sessions s LEFT JOIN (SELECT session_id, count(*) AS n, "
    f"sum({_TOOL_CALLS}) AS calls FROM messages GROUP BY session_id) m ON m.session_id = s.id "
    "WHERE s.message_count IS NOT coalesce(m.n, 0) OR s.tool_call_count IS NOT coalesce(m.calls, 0) "
    "ORDER BY s.id"
)


@dataclass(frozen=True, slots=True)
class Drift:
    """One session whose counters differ from its messages."""

    session_id: str
    message_count: int
    """What the row says."""
    messages: int
    """How many message rows it has."""
    tool_call_count: int
    tool_calls: int


def find_drift(connection: sqlite3.Connection) -> list[Drift]:
    """Every session whose ``message_count`` or ``tool_call_count`` is not what its messages
    add up to (reads every message row once)."""
    return [
        Drift(str(row[0]), int(row[1] or 0), int(row[3]), int(row[2] or 0), int(row[4]))
        for row in connection.execute(_ACTUAL)
    ]


def describe(drift: list[Drift]) -> str:
    """One line for a report: how many sessions, and the first one as an example."""
    first = drift[0]
    if first.message_count != first.messages:
        example = f"{first.session_id} says {first.message_count} messages, holds {first.messages}"
    else:
        example = (
            f"{first.session_id} says {first.tool_call_count} tool calls, holds {first.tool_calls}"
        )
    return (
        f"counters: {len(drift)} session(s) whose message or tool-call count differs from its "
        f"messages (e.g. {example})"
    )


def recount(connection: sqlite3.Connection, session_ids: list[str] | None = None) -> int:
    """Set the counters of ``session_ids`` (every session when None) from their messages,
    inside the caller's write transaction; returns how many rows changed."""
    if session_ids is None:
        return _recount(connection, "1", [])
    changed = 0
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start : start + 500]
        changed += _recount(connection, f"id IN ({','.join('?' for _ in chunk)})", chunk)
    return changed


def _recount(connection: sqlite3.Connection, where: str, params: list[str]) -> int:
    changed: int = connection.execute(
        "UPDATE sessions SET "
        "message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id), "
        f"tool_call_count = (SELECT coalesce(sum({_TOOL_CALLS}), 0) FROM messages m "
        "WHERE m.session_id = sessions.id) "
        f"WHERE {where}",
        params,
    ).rowcount
    return changed
