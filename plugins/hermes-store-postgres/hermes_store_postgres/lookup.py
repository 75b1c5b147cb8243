"""Turning what a person typed into a session id (SPEC S3, S6, R2), as the SQLite store does:
an exact id; a unique id prefix (a range on the key, so ``%`` and ``_`` are plain); a title,
meaning the newest session of that title's compression lineage."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_core.store.errors import AmbiguousSessionId, SessionNotFound
from hermes_core.store.titles import sanitize_title, split_lineage_title

if TYPE_CHECKING:
    import psycopg

    Db = psycopg.Connection[tuple[Any, ...]]

_PREFIX_SAMPLE = 6


def sessions_with_prefix(db: Db, prefix: str, limit: int) -> list[str]:
    rows = db.execute(
        'SELECT id FROM sessions WHERE id COLLATE "C" >= %s AND id COLLATE "C" < %s '
        'ORDER BY id COLLATE "C" LIMIT %s',
        (prefix, prefix + "\U0010ffff", limit),
    ).fetchall()
    return [str(row[0]) for row in rows]


def newest_in_lineage(db: Db, title: str) -> str | None:
    row = db.execute("SELECT id FROM sessions WHERE title = %s", (title,)).fetchone()
    base, number = split_lineage_title(title)
    if row is None:
        numbered = db.execute(
            "SELECT id, title FROM sessions WHERE left(title, %s) = %s "
            "ORDER BY started_at DESC, id DESC",
            (len(base) + 2, base + " #"),
        ).fetchall()
        members = [str(i) for i, found in numbered if split_lineage_title(str(found))[0] == base]
        return members[0] if number == 1 and members else None
    if number > 1:
        return str(row[0])
    newest = db.execute(
        "WITH RECURSIVE lineage(id) AS ("
        "  SELECT %s::text UNION"
        "  SELECT s.id FROM sessions s JOIN lineage l ON s.parent_session_id = l.id"
        "  WHERE s.parent_kind = 'compression'"
        ") SELECT s.id FROM sessions s JOIN lineage l ON s.id = l.id "
        "ORDER BY s.started_at DESC, s.id DESC LIMIT 1",
        (row[0],),
    ).fetchone()
    return str(newest[0]) if newest else str(row[0])


def resolve_reference(db: Db, reference: str) -> str:
    """The session id meant by ``reference`` (id, unique id prefix, or title)."""
    text = reference.strip()
    if not text:
        raise SessionNotFound("no session id or title given")
    if db.execute("SELECT 1 FROM sessions WHERE id = %s", (text,)).fetchone():
        return text
    matches = sessions_with_prefix(db, text, _PREFIX_SAMPLE)
    if len(matches) == 1:
        return matches[0]
    title = sanitize_title(text)
    if title is not None:
        by_title = newest_in_lineage(db, title)
        if by_title is not None:
            return by_title
    if matches:
        raise AmbiguousSessionId(text, sessions_with_prefix(db, text, 1000))
    raise SessionNotFound(f"no session matches '{text}'")
