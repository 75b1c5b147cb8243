"""Session ids (SPEC S3): ``YYYYMMDD_HHMMSS_<hex>``, 6 hex digits for CLI/TUI sessions and 8 for
gateway sessions. The timestamp part is local time, as people read it in listings.

:data:`SESSION_ID_PATTERN` is the one grammar of ids: the store refuses to create a session
with any other id (:func:`check_session_id`), and importers give a session whose id does not
match it a new one. Such ids name files and are typed on command lines, so nothing that could
leave a folder or drive a terminal gets in."""

from __future__ import annotations

import os
import re
import time

CLI_HEX_DIGITS = 6
GATEWAY_HEX_DIGITS = 8
SESSION_ID_PATTERN = re.compile(r"[0-9]{8}_[0-9]{6}_[0-9a-f]{6,12}")
"""The grammar of a whole id (match it with ``fullmatch``): 6 to 12 lower-case hex digits."""
ID_GRAMMAR = "YYYYMMDD_HHMMSS_ and 6 to 12 lower-case hex digits"


def new_session_id(*, gateway: bool = False, now: float | None = None) -> str:
    """A new session id; ``gateway`` sessions get 8 hex digits, the others 6."""
    moment = time.localtime(time.time() if now is None else now)
    digits = GATEWAY_HEX_DIGITS if gateway else CLI_HEX_DIGITS
    return time.strftime("%Y%m%d_%H%M%S", moment) + "_" + os.urandom(digits // 2).hex()


def looks_like_session_id(text: str) -> bool:
    """True for a complete id of the standard shape."""
    return isinstance(text, str) and SESSION_ID_PATTERN.fullmatch(text) is not None


def check_session_id(session_id: object) -> None:
    """Raise ``ValueError`` naming ``session_id`` unless it is a complete id of the standard
    shape (what every backend's ``create_session`` checks a chosen id against)."""
    if not isinstance(session_id, str) or not looks_like_session_id(session_id):
        raise ValueError(f"session id {session_id!r} is not a session id ({ID_GRAMMAR})")


def shown_id(session_id: str) -> str:
    """An id as a note shows it: as it is when it is a session id, else quoted with its
    control characters escaped (``'nul\\x00id'``)."""
    return session_id if looks_like_session_id(session_id) else repr(session_id)
