"""Scroll (``session_id`` + ``around_message_id``): a window of messages, nothing else.

±``window`` messages around the anchor, no full-text search, no bookends. Scrolling forward
passes ``messages[-1].id`` as the next anchor, backward ``messages[0].id``: the boundary message
appears in both windows, as a landmark. ``messages_before``/``messages_after`` count the
session's messages before/after the anchor; below ``window`` means the window reached the
start/end of the session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import messages
from .arguments import SearchArgumentError, SearchArguments

if TYPE_CHECKING:
    from hermes_core.store.protocol import SearchIndex


def scroll(index: SearchIndex, arguments: SearchArguments) -> dict[str, Any]:
    assert arguments.session_id is not None and arguments.around_message_id is not None
    session_id = index.resolve(arguments.session_id)
    anchor = arguments.around_message_id
    row = index.message_session(anchor)
    if row is None or row[0] != session_id:
        raise SearchArgumentError(f"message {anchor} is not in session {session_id}")
    before, after = messages.position(index, session_id, anchor)
    return {
        "form": "scroll",
        "session_id": session_id,
        "title": row[1],
        "around_message_id": anchor,
        "window": arguments.window,
        "messages": messages.window(index, session_id, anchor, arguments.window),
        "messages_before": before,
        "messages_after": after,
    }
