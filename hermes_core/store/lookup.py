"""Turning what a person typed into a session id (SPEC S3, S6, R2).

Order: an exact id; a unique id prefix; a title, which resolves to the newest session of that
title's compression lineage (``my project`` → ``my project #3``). Prefixes are matched with a
range on the primary key, not ``LIKE``, so ``%`` and ``_`` are plain characters.
"""

from __future__ import annotations

import sqlite3

from .errors import AmbiguousSessionId, SessionNotFound
from .titles import sanitize_title, split_lineage_title

_PREFIX_SAMPLE = 6


def sessions_with_prefix(connection: sqlite3.Connection, prefix: str, limit: int) -> list[str]:
    """Up to ``limit`` ids starting with ``prefix``."""
    rows = connection.execute(
        "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
        (prefix, prefix + "\U0010ffff", limit),
    )
    return [row[0] for row in rows]


def newest_in_lineage(connection: sqlite3.Connection, title: str) -> str | None:
    """The newest session of the lineage ``title`` starts (``my project`` → ``my project #3``);
    a numbered title (``my project #2``) is that session itself."""
    base, _ = split_lineage_title(title)
    rows = connection.execute(
        "SELECT id, title FROM sessions WHERE title = ? OR substr(title, 1, ?) = ? "
        "ORDER BY started_at DESC, id DESC",
        (base, len(base) + 2, base + " #"),
    ).fetchall()
    exact: list[str] = [session_id for session_id, found in rows if found == title]
    family: list[str] = [
        session_id for session_id, found in rows if split_lineage_title(found)[0] == base
    ]
    if exact and title != base:
        return exact[0]  # a numbered title names one member of the lineage
    if family and title == base:
        return family[0]
    return exact[0] if exact else None


def resolve_reference(connection: sqlite3.Connection, reference: str) -> str:
    """The session id meant by ``reference`` (id, unique id prefix, or title)."""
    text = reference.strip()
    if not text:
        raise SessionNotFound("no session id or title given")
    if connection.execute("SELECT 1 FROM sessions WHERE id = ?", (text,)).fetchone():
        return text
    matches = sessions_with_prefix(connection, text, _PREFIX_SAMPLE)
    if len(matches) == 1:
        return matches[0]
    title = sanitize_title(text)
    if title is not None:
        by_title = newest_in_lineage(connection, title)
        if by_title is not None:
            return by_title
    if matches:
        every = sessions_with_prefix(connection, text, 1000)
        raise AmbiguousSessionId(text, every)
    raise SessionNotFound(f"no session matches '{text}'")
