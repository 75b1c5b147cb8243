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
    """The session a title means: the newest compression continuation of the session with
    that title (``my project`` → ``my project #3``), found by following the recorded
    parent links, not by matching title text. A numbered title (``my project #2``) names that
    one session."""
    row = connection.execute("SELECT id FROM sessions WHERE title = ?", (title,)).fetchone()
    base, number = split_lineage_title(title)
    if row is None:
        # The original is gone (deleted or pruned): its numbered continuations remain.
        numbered = connection.execute(
            "SELECT id, title FROM sessions WHERE substr(title, 1, ?) = ? "
            "ORDER BY started_at DESC, id DESC",
            (len(base) + 2, base + " #"),
        ).fetchall()
        members = [str(i) for i, found in numbered if split_lineage_title(found)[0] == base]
        return members[0] if number == 1 and members else None
    if number > 1:
        return str(row[0])
    newest = connection.execute(
        "WITH RECURSIVE lineage(id) AS ("
        "  SELECT ? UNION"
        "  SELECT s.id FROM sessions s JOIN lineage l ON s.parent_session_id = l.id"
        "  WHERE s.parent_kind = 'compression'"
        ") SELECT s.id FROM sessions s JOIN lineage l ON s.id = l.id "
        "ORDER BY s.started_at DESC, s.id DESC LIMIT 1",
        (row[0],),
    ).fetchone()
    return str(newest[0])


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
