"""Search as you type, for the ``hermes sessions browse`` picker (SPEC C2).

Nothing typed: the recent sessions, newest activity first. Something typed: sessions whose
title holds every typed word (as a substring, so a half-typed word already matches), newest
first, then the sessions whose messages match (discovery's ranking, one row per lineage, with
the last word taken as a prefix once it has :data:`PREFIX_MIN_CHARS` characters). Like
``hermes sessions list``, browsing leaves out archived and delegate sessions.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .arguments import DEFAULT_ROLES
from .browse import PREVIEW_CHARS
from .discovery import content_snippet, ranked_picks
from .query import has_cjk, prepare

BROWSE_ROWS = 50
"""Rows offered for one query."""
CONTENT_ROWS = 20
"""At most this many of them come from message matches (each needs a snippet)."""
PREFIX_MIN_CHARS = 3
"""Shorter last words are searched whole: a one-letter prefix would expand to thousands of
index terms on a big store."""
_LISTED = "archived = 0 AND (parent_kind IS NULL OR parent_kind != 'delegate')"


@dataclass(frozen=True, slots=True)
class BrowseRow:
    session_id: str
    title: str | None
    last_active_at: float
    source: str
    text: str
    """The preview (first user message) or, for a content match, the highlighted snippet."""
    matched: str
    """``recent``, ``title`` or ``content``."""


def browse_rows(
    connection: sqlite3.Connection, typed: str, *, limit: int = BROWSE_ROWS
) -> list[BrowseRow]:
    """The rows the picker shows for ``typed``."""
    text = " ".join(typed.split())
    if not text:
        return _recent(connection, limit)
    rows = _title_matches(connection, text, limit)
    if len(rows) < limit:
        wanted = min(CONTENT_ROWS, limit - len(rows))
        rows.extend(_content_matches(connection, text, wanted, {r.session_id for r in rows}))
    return rows[:limit]


def typeahead_query(text: str) -> str:
    """``text`` with its last word made a prefix (``refac`` → ``refac*``) when long enough."""
    last = text.split()[-1] if text.split() else ""
    if len(last) >= PREFIX_MIN_CHARS and last.isalnum() and not has_cjk(last):
        return text + "*"
    return text


def _preview_sql() -> str:
    return (
        "(SELECT substr(content, 1, ?) FROM messages WHERE session_id = s.id AND role = 'user' "
        "ORDER BY id LIMIT 1)"
    )


def _recent(connection: sqlite3.Connection, limit: int) -> list[BrowseRow]:
    rows = connection.execute(
        f"SELECT s.id, s.title, s.last_active_at, s.source, {_preview_sql()} FROM sessions s "
        f"WHERE {_LISTED} ORDER BY s.last_active_at DESC LIMIT ?",
        (PREVIEW_CHARS, limit),
    )
    return [BrowseRow(r[0], r[1], r[2], r[3], _one_line(r[4]), "recent") for r in rows]


def _title_matches(connection: sqlite3.Connection, text: str, limit: int) -> list[BrowseRow]:
    conditions = ["s.title IS NOT NULL", _LISTED]
    params: list[object] = [PREVIEW_CHARS]
    for word in text.split():
        if word.isascii():
            conditions.append("s.title LIKE ? ESCAPE '\\'")
            escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params.append(f"%{escaped}%")
        else:
            conditions.append("instr(lower(s.title), ?) > 0")
            params.append(word.lower())
    rows = connection.execute(
        f"SELECT s.id, s.title, s.last_active_at, s.source, {_preview_sql()} FROM sessions s "
        f"WHERE {' AND '.join(conditions)} ORDER BY s.last_active_at DESC LIMIT ?",
        [*params, limit],
    )
    return [BrowseRow(r[0], r[1], r[2], r[3], _one_line(r[4]), "title") for r in rows]


def _content_matches(
    connection: sqlite3.Connection, text: str, limit: int, shown: set[str]
) -> list[BrowseRow]:
    query = prepare(typeahead_query(text))
    if query.is_empty:
        return []
    picks, found = ranked_picks(connection, query, roles=DEFAULT_ROLES, limit=limit + len(shown))
    wanted = [p for p in picks if p.session_id not in shown and p.hit is not None]
    if not wanted:
        return []
    marks = ",".join("?" for _ in wanted)
    sessions = {
        row[0]: row
        for row in connection.execute(
            f"SELECT id, title, last_active_at, source FROM sessions "
            f"WHERE id IN ({marks}) AND {_LISTED}",
            [p.session_id for p in wanted],
        )
    }
    rows: list[BrowseRow] = []
    for pick in wanted[:limit]:
        session = sessions.get(pick.session_id)
        if session is None or pick.hit is None:
            continue
        snippet = content_snippet(connection, pick.hit.message_id, query, found)
        rows.append(BrowseRow(session[0], session[1], session[2], session[3], snippet, "content"))
    return rows


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())
