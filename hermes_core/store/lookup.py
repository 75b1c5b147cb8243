"""Turning what a person typed into a session id (SPEC S3, S6, R2), on any store.

Order: an exact id; a unique id prefix; a title, which resolves to the newest session of that
title's compression lineage (``my project`` → ``my project #3``). Prefixes are matched with a
range on the primary key, not ``LIKE``, so ``%`` and ``_`` are plain characters. The
statements are the ones both stores take (see :mod:`.statements`); the session facade and the
search facet of each backend call :func:`resolve_reference` with their connection.
"""

from __future__ import annotations

from .errors import AmbiguousSessionId, SessionNotFound
from .statements import Sql
from .titles import sanitize_title, split_lineage_title

_PREFIX_SAMPLE = 6


def sessions_with_prefix(sql: Sql, prefix: str, limit: int) -> list[str]:
    """Up to ``limit`` ids starting with ``prefix``, in byte order."""
    key = f"id{sql.binary_order}"
    rows = sql.execute(
        f"SELECT id FROM sessions WHERE {key} >= ? AND {key} < ? ORDER BY {key} LIMIT ?",
        (prefix, prefix + "\U0010ffff", limit),
    ).fetchall()
    return [str(row[0]) for row in rows]


def newest_in_lineage(sql: Sql, title: str) -> str | None:
    """The session a title means: the newest compression continuation of the session with
    that title (``my project`` → ``my project #3``), found by following the recorded
    parent links, not by matching title text. A numbered title (``my project #2``) names that
    one session."""
    row = sql.execute("SELECT id FROM sessions WHERE title = ?", (title,)).fetchone()
    base, number = split_lineage_title(title)
    if row is None:
        # The original is gone (deleted or pruned): its numbered continuations remain.
        numbered = sql.execute(
            "SELECT id, title FROM sessions WHERE substr(title, 1, ?) = ? "
            "ORDER BY started_at DESC, id DESC",
            (len(base) + 2, base + " #"),
        ).fetchall()
        members = [str(i) for i, found in numbered if split_lineage_title(str(found))[0] == base]
        return members[0] if number == 1 and members else None
    if number > 1:
        return str(row[0])
    newest = sql.execute(
        "WITH RECURSIVE lineage(id) AS ("
        "  SELECT CAST(? AS TEXT) UNION"
        "  SELECT s.id FROM sessions s JOIN lineage l ON s.parent_session_id = l.id"
        "  WHERE s.parent_kind = 'compression'"
        ") SELECT s.id FROM sessions s JOIN lineage l ON s.id = l.id "
        "ORDER BY s.started_at DESC, s.id DESC LIMIT 1",
        (row[0],),
    ).fetchone()
    return str(newest[0]) if newest else str(row[0])


def resolve_reference(sql: Sql, reference: str) -> str:
    """The session id meant by ``reference`` (id, unique id prefix, or title)."""
    text = reference.strip()
    if not text:
        raise SessionNotFound("no session id or title given")
    if sql.execute("SELECT 1 FROM sessions WHERE id = ?", (text,)).fetchone():
        return text
    matches = sessions_with_prefix(sql, text, _PREFIX_SAMPLE)
    if len(matches) == 1:
        return matches[0]
    title = sanitize_title(text)
    if title is not None:
        by_title = newest_in_lineage(sql, title)
        if by_title is not None:
            return by_title
    if matches:
        raise AmbiguousSessionId(text, sessions_with_prefix(sql, text, 1000))
    raise SessionNotFound(f"no session matches '{text}'")
