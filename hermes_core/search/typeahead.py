"""Search as you type, for the ``hermes sessions browse`` picker (SPEC C2).

Nothing typed: the recent sessions, newest activity first. Something typed: sessions whose
title holds every typed word (as a substring, so a half-typed word already matches), newest
first, then the sessions whose messages match (discovery's ranking, one row per lineage, with
the last word taken as a prefix once it has :data:`PREFIX_MIN_CHARS` characters). Like
``hermes sessions list``, browsing leaves out archived and delegate sessions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .arguments import DEFAULT_ROLES
from .browse import PREVIEW_CHARS
from .discovery import content_snippet, ranked_picks
from .query import has_cjk, prepare

if TYPE_CHECKING:
    from hermes_core.store.protocol import SearchIndex

BROWSE_ROWS = 50
"""Rows offered for one query."""
CONTENT_ROWS = 20
"""At most this many of them come from message matches (each needs a snippet)."""
PREFIX_MIN_CHARS = 3
"""Shorter last words are searched whole: a one-letter prefix would expand to thousands of
index terms on a big store."""


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


def browse_rows(store: object, typed: str, *, limit: int = BROWSE_ROWS) -> list[BrowseRow]:
    """The rows the picker shows for ``typed`` (``store``: an open store or its search index)."""
    from hermes_core.store.search_queries import search_index_of

    index = search_index_of(store)
    text = " ".join(typed.split())
    if not text:
        return _recent(index, limit)
    rows = _title_matches(index, text, limit)
    if len(rows) < limit:
        wanted = min(CONTENT_ROWS, limit - len(rows))
        rows.extend(_content_matches(index, text, wanted, {r.session_id for r in rows}))
    return rows[:limit]


def typeahead_query(text: str) -> str:
    """``text`` with its last word made a prefix (``refac`` → ``refac*``) when long enough."""
    last = text.split()[-1] if text.split() else ""
    if len(last) >= PREFIX_MIN_CHARS and last.isalnum() and not has_cjk(last):
        return text + "*"
    return text


def _recent(index: SearchIndex, limit: int) -> list[BrowseRow]:
    rows = index.listed_recent(limit, PREVIEW_CHARS)
    return [BrowseRow(r[0], r[1], r[2], r[3], _one_line(r[4]), "recent") for r in rows]


def _title_matches(index: SearchIndex, text: str, limit: int) -> list[BrowseRow]:
    rows = index.listed_title_matches(text.split(), limit, PREVIEW_CHARS)
    return [BrowseRow(r[0], r[1], r[2], r[3], _one_line(r[4]), "title") for r in rows]


def _content_matches(
    index: SearchIndex, text: str, limit: int, shown: set[str]
) -> list[BrowseRow]:
    query = prepare(typeahead_query(text))
    if query.is_empty:
        return []
    picks, found = ranked_picks(index, query, roles=DEFAULT_ROLES, limit=limit + len(shown))
    wanted = [p for p in picks if p.session_id not in shown and p.hit is not None]
    if not wanted:
        return []
    sessions = index.listed_sessions([p.session_id for p in wanted])
    rows: list[BrowseRow] = []
    for pick in wanted[:limit]:
        session = sessions.get(pick.session_id)
        if session is None or pick.hit is None:
            continue
        snippet = content_snippet(index, pick.hit.message_id, query, found)
        rows.append(BrowseRow(session[0], session[1], session[2], session[3], snippet, "content"))
    return rows


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())
