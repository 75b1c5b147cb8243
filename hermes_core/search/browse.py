"""Browse (no arguments): recent sessions, newest activity first.

Like ``hermes sessions list``, archived sessions and delegate (subagent) sessions are left out.
Each row: id, title, when it started, when it was last active, source, message count and a
preview (the start of the first user message).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from hermes_core.selection.filters import SessionFilter

from . import messages
from .arguments import SearchArguments

if TYPE_CHECKING:
    from hermes_core.store.protocol import SearchIndex

PREVIEW_CHARS = 120


def recent_sessions(
    index: SearchIndex,
    limit: int,
    *,
    source: str | None = None,
    within: SessionFilter | None = None,
) -> list[dict[str, Any]]:
    """The ``limit`` most recently active listed sessions (newest first), of ``within`` (a
    caller's selection) and ``source`` when given."""
    listed = replace(
        within or SessionFilter(), include_archived=False, include_delegates=False
    )
    if source is not None:
        listed = replace(listed, source=source)
    rows = index.recent_sessions(listed, limit, PREVIEW_CHARS)
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


def browse(
    index: SearchIndex, arguments: SearchArguments, within: SessionFilter | None = None
) -> dict[str, Any]:
    found = recent_sessions(index, arguments.limit, source=arguments.source, within=within)
    return {"form": "browse", "count": len(found), "sessions": found}
