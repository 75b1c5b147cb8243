"""Session ids (SPEC S3): ``YYYYMMDD_HHMMSS_<hex>``, 6 hex digits for CLI/TUI sessions and 8 for
gateway sessions. The timestamp part is local time, as people read it in listings."""

from __future__ import annotations

import os
import re
import time

CLI_HEX_DIGITS = 6
GATEWAY_HEX_DIGITS = 8
SESSION_ID_PATTERN = re.compile(r"^\d{8}_\d{6}_[0-9a-f]{6,12}$")


def new_session_id(*, gateway: bool = False, now: float | None = None) -> str:
    """A new session id; ``gateway`` sessions get 8 hex digits, the others 6."""
    moment = time.localtime(time.time() if now is None else now)
    digits = GATEWAY_HEX_DIGITS if gateway else CLI_HEX_DIGITS
    return time.strftime("%Y%m%d_%H%M%S", moment) + "_" + os.urandom(digits // 2).hex()


def looks_like_session_id(text: str) -> bool:
    """True for a complete id of the standard shape."""
    return bool(SESSION_ID_PATTERN.match(text))
