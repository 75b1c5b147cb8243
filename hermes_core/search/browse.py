"""Browse (no arguments): recent sessions, newest activity first.

Like ``hermes sessions list``, archived sessions and delegate (subagent) sessions are left out.
Each row: id, title, when it started, when it was last active, source, message count and a
preview (the start of the first user message).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hermes_core.selection.filters import SessionFilter, build_where

from . import messages
from .arguments import SearchArguments

PREVIEW_CHARS = 120


def recent_sessions(
    connection: sqlite3.Connection, limit: int, *, source: str | None = None
) -> list[dict[str, Any]]:
    """The ``limit`` most recently active listed sessions (newest first)."""
    where, params = build_where(
        SessionFilter(source=source, include_archived=False, include_delegates=False)
    )
    rows = connection.execute(
        "SELECT s.id, s.title, s.started_at, s.last_active_at, s.source, s.message_count, "
        "s.pinned, (SELECT substr(content, 1, ?) FROM messages "
        "  WHERE session_id = s.id AND role = 'user' ORDER BY id LIMIT 1) "
        f"FROM sessions s WHERE {where} ORDER BY s.last_active_at DESC LIMIT ?",
        [PREVIEW_CHARS, *params, limit],
    )
    return [
        {
            "session_id": session_id,
            "title": title,
            "when": messages.iso_time(started_at),
            "last_active": messages.iso_time(last_active_at),
            "source": source_name,
            "message_count": count,
            "pinned": bool(pinned),
            "preview": " ".join((preview or "").split()),
        }
        for session_id, title, started_at, last_active_at, source_name, count, pinned, preview in rows
    ]


def browse(connection: sqlite3.Connection, arguments: SearchArguments) -> dict[str, Any]:
    found = recent_sessions(connection, arguments.limit, source=arguments.source)
    return {"form": "browse", "count": len(found), "sessions": found}
