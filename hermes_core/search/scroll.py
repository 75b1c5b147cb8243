"""Scroll (``session_id`` + ``around_message_id``): a window of messages, nothing else.

±``window`` messages around the anchor, no full-text search, no bookends. Scrolling forward
passes ``messages[-1].id`` as the next anchor, backward ``messages[0].id``: the boundary message
appears in both windows, as a landmark. ``messages_before``/``messages_after`` count the
session's messages before/after the anchor; below ``window`` means the window reached the
start/end of the session.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hermes_core.store.lookup import resolve_reference

from . import messages
from .arguments import SearchArgumentError, SearchArguments


def scroll(connection: sqlite3.Connection, arguments: SearchArguments) -> dict[str, Any]:
    assert arguments.session_id is not None and arguments.around_message_id is not None
    session_id = resolve_reference(connection, arguments.session_id)
    anchor = arguments.around_message_id
    row = connection.execute(
        "SELECT m.session_id, s.title FROM messages m JOIN sessions s ON s.id = m.session_id "
        "WHERE m.id = ?",
        (anchor,),
    ).fetchone()
    if row is None or row[0] != session_id:
        raise SearchArgumentError(f"message {anchor} is not in session {session_id}")
    before, after = messages.position(connection, session_id, anchor)
    return {
        "form": "scroll",
        "session_id": session_id,
        "title": row[1],
        "around_message_id": anchor,
        "window": arguments.window,
        "messages": messages.window(connection, session_id, anchor, arguments.window),
        "messages_before": before,
        "messages_after": after,
    }
