"""Discovery (``query``): the best sessions for a query, one per lineage, with adaptive detail.

Sessions whose title names the query come first (see :mod:`.titles`), then the ranked message
hits (see :mod:`.ranking`). Each lineage (a session with its compression continuations and
branches) appears once, anchored at its best hit. The first result is ``full`` — ±5 messages
around the hit and the first/last three user+assistant messages — the others ``compact``
(only the anchor message); ``detail="full"`` makes every result full. Archived sessions are
searched like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import messages
from .arguments import DEFAULT_WINDOW, SearchArguments
from .lineage import lineage_roots
from .query import PreparedQuery, prepare
from .ranking import Hit, HitList, find_hits
from .snippets import fts_snippet, marked_snippet
from .titles import TitleMatch, sessions_named

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter
    from hermes_core.store.protocol import SearchIndex, SearchSessionRow


@dataclass(frozen=True, slots=True)
class Pick:
    """One lineage's place in the results: the session and hit it is anchored at."""

    lineage_id: str
    session_id: str
    hit: Hit | None
    title_match: TitleMatch | None


def discover(
    index: SearchIndex, arguments: SearchArguments, within: SessionFilter | None = None
) -> dict[str, Any]:
    """The discovery payload for ``arguments.query``, among the sessions of ``within`` (and
    ``arguments.source``) when given."""
    query = prepare(arguments.query or "")
    payload: dict[str, Any] = {"form": "discovery", "query": query.text}
    if query.is_empty:
        payload.update(count=0, results=[], ranking="none")
        return payload
    picks, found = ranked_picks(
        index,
        query,
        roles=arguments.roles,
        scope=search_scope(within, arguments.source),
        sort=arguments.sort,
        limit=arguments.limit,
    )
    sessions = index.session_rows([p.session_id for p in picks])
    results = [
        _result(
            index,
            pick,
            sessions[pick.session_id],
            query,
            found,
            full=rank == 0 or arguments.detail == "full",
        )
        for rank, pick in enumerate(picks)
        if pick.session_id in sessions
    ]
    if found.sanitised and found.fts_query:
        payload["interpreted_as"] = found.fts_query
    payload.update(count=len(results), ranking=found.road, results=results)
    return payload


def ranked_picks(
    index: SearchIndex,
    query: PreparedQuery,
    *,
    roles: Sequence[str],
    scope: SessionFilter | None = None,
    sort: str | None = None,
    limit: int,
) -> tuple[list[Pick], HitList]:
    """The best ``limit`` lineages for ``query`` (before hydration), and the hits behind them."""
    found = find_hits(index, query, roles=roles, scope=scope, sort=sort)
    named = sessions_named(index, query, scope=scope)
    return _pick(index, found, named, limit), found


def _pick(
    index: SearchIndex, found: HitList, named: list[TitleMatch], limit: int
) -> list[Pick]:
    """One pick per lineage: title-named sessions first, then lineages by their hits' order;
    each anchored at the lineage's best-scoring hit."""
    roots = lineage_roots(
        index, [m.session_id for m in named] + [h.session_id for h in found.hits]
    )
    best: dict[str, Hit] = {}
    order: list[str] = []
    for hit in found.hits:
        root = roots.get(hit.session_id, hit.session_id)
        if root not in best:
            order.append(root)
            best[root] = hit
        elif hit.score > best[root].score:
            best[root] = hit
    picks: list[Pick] = []
    taken: set[str] = set()
    for match in named:
        root = roots.get(match.session_id, match.session_id)
        if root in taken:
            continue
        taken.add(root)
        anchor_hit = best.get(root)
        session_id = anchor_hit.session_id if anchor_hit else match.session_id
        picks.append(Pick(root, session_id, anchor_hit, match))
    for root in order:
        if root not in taken:
            taken.add(root)
            picks.append(Pick(root, best[root].session_id, best[root], None))
    return picks[:limit]


def _result(
    index: SearchIndex,
    pick: Pick,
    session: SearchSessionRow,
    query: PreparedQuery,
    found: HitList,
    *,
    full: bool,
) -> dict[str, Any]:
    session_id, title, started_at, last_active_at, source, archived = session
    if pick.hit is not None:
        anchor: int | None = pick.hit.message_id
        snippet = content_snippet(index, pick.hit.message_id, query, found)
    else:
        anchor = messages.first_conversation_message(index, session_id)
        snippet = "title: " + marked_snippet(title or "", query.cjk_runs, query.words)
    before, after = messages.position(index, session_id, anchor) if anchor else (0, 0)
    result: dict[str, Any] = {
        "session_id": session_id,
        "title": title,
        "when": messages.iso_time(started_at),
        "last_active": messages.iso_time(last_active_at),
        "source": source,
        "snippet": snippet,
        "detail": "full" if full else "compact",
        "bookend_start": [],
        "bookend_end": [],
        "messages": [],
        "match_message_id": anchor,
        "messages_before": before,
        "messages_after": after,
        "matched": "title" if pick.title_match is not None else "content",
        "lineage_id": pick.lineage_id,
        "archived": bool(archived),
    }
    if anchor is None:
        return result
    if full:
        result["messages"] = messages.window(index, session_id, anchor, DEFAULT_WINDOW)
        result["bookend_start"], result["bookend_end"] = messages.bookends(index, session_id)
    else:
        result["messages"] = messages.single(index, anchor)
    return result


def content_snippet(
    index: SearchIndex, message_id: int, query: PreparedQuery, found: HitList
) -> str:
    if found.fts_query is not None:
        snippet = fts_snippet(index, found.fts_query, message_id)
        if snippet:
            return snippet
    content = index.message_content(message_id)
    return marked_snippet(content or "", query.cjk_runs, query.words)


def search_scope(within: SessionFilter | None, source: str | None) -> SessionFilter | None:
    """The sessions a search may look in: ``within`` (a selection from the caller, such as the
    MCP server's filters) narrowed to ``source`` (the tool's own argument); None for all."""
    if source is None:
        return within
    from dataclasses import replace

    from hermes_core.selection.filters import SessionFilter

    return SessionFilter(source=source) if within is None else replace(within, source=source)
