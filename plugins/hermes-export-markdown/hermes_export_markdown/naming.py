"""Safe file names for exported sessions: ``<id>-<slug of the title>.<extension>``.

Whatever a title holds (slashes, ``..``, control characters, emoji, right-to-left marks, a
leading dot), the name is made of ASCII letters, digits, ``-``, ``_`` and one ``.`` before the
extension, so it can never leave the export directory or surprise a shell.
"""

from __future__ import annotations

import re
import unicodedata

MAX_SLUG = 60
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_NOT_ID = re.compile(r"[^A-Za-z0-9_-]+")


def slug(text: str | None, *, fallback: str = "session") -> str:
    """Lower-case ASCII words joined by ``-``, at most 60 characters; ``fallback`` when empty."""
    if not text:
        return fallback
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    cut = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")[:MAX_SLUG].strip("-")
    return cut or fallback


def safe_id(session_id: str) -> str:
    """The session id with anything but letters, digits, ``_`` and ``-`` replaced."""
    return _NOT_ID.sub("-", session_id).strip("-")[:80] or "session"


def session_file_name(session_id: str, title: str | None, extension: str) -> str:
    """``<id>-<slug>.<extension>`` for one session's file."""
    return f"{safe_id(session_id)}-{slug(title)}.{extension}"
