"""Finding the messages that match a query, best first, without ever ranking an unbounded set.

FTS5's ``bm25()`` scores every match and, for each query phrase, first counts every row that
holds it: over ~1M matches that takes seconds. So there are two roads (DESIGN §3):

* **Full ranking** when the query matches at most :data:`FULL_RANK_MAX` messages (a cheap probe
  — the ``FULL_RANK_MAX``-th newest match by rowid — tells): exact FTS5 ``bm25`` over all matches.
  Rare and medium terms take this road, so their top results are exactly bm25's.
* **Bounded ranking** otherwise (common words): the :data:`CANDIDATES` newest matches (by
  descending rowid, read straight off the index, role and scope filters applied), scored by
  bm25's term-frequency saturation and length normalisation (k1 = 1.2, b = 0.75) with the term
  frequency counted from ``highlight()`` and the length from the index's own per-row token
  counts. The inverse document frequency is left out: it is what costs the full count, and
  for matches of the same query it only reweighs the terms against each other.

``sort="newest"|"oldest"`` takes the :data:`CANDIDATES` newest (oldest) matches and orders
them by time. CJK queries (see :mod:`hermes_core.search.query`) take their candidates from the
CJK index, at most :data:`CJK_CANDIDATES`, scored the same way from substring counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_core.store.errors import QueryRejected

from .query import PreparedQuery, fold

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter
    from hermes_core.store.protocol import SearchIndex

FULL_RANK_MAX = 12_000
"""Queries matching at most this many messages (any role) are ranked by full FTS5 bm25 (or
fewer: a backend whose exhaustive ranking costs more sets a lower ``full_rank_max``)."""
CANDIDATES = 300
"""Otherwise: how many of the newest matches (after role/source filters) are ranked."""
RANKED_HITS = 200
"""How many ranked hits discovery looks through to find ``limit`` distinct lineages."""
CJK_CANDIDATES = 500
"""How many of the newest CJK-index matches of a CJK query are ranked."""
K1 = 1.2
B = 0.75
_HIGHLIGHT_OPEN = "\x01"


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching message."""

    message_id: int
    session_id: str
    timestamp: float
    score: float
    """Higher is more relevant (comparable within one search only)."""


@dataclass(frozen=True, slots=True)
class HitList:
    """The matches of one query, best first (or in time order when sorted)."""

    hits: list[Hit]
    fts_query: str | None
    """The FTS5 query that ran (for snippets); None for CJK queries."""
    sanitised: bool = False
    """Whether FTS5 rejected the query as typed and its sanitised form ran instead."""
    road: str = "full"
    """``full``, ``bounded``, ``sorted`` or ``cjk``: how the hits were ranked."""


def find_hits(
    index: SearchIndex,
    query: PreparedQuery,
    *,
    roles: Sequence[str],
    scope: SessionFilter | None = None,
    sort: str | None = None,
) -> HitList:
    """The messages matching ``query`` in ``roles`` (and in sessions of ``scope``), ranked."""
    if query.is_cjk:
        return HitList(_cjk_hits(index, query, roles, scope, sort), None, road="cjk")
    attempts = [(query.fts, False)]
    if query.fallback and query.fallback != query.fts:
        attempts.append((query.fallback, True))
    for fts, sanitised in attempts:
        if not fts:
            continue
        try:
            hits, road = _fts_hits(index, fts, roles, scope, sort)
        except QueryRejected:
            continue
        return HitList(hits, fts, sanitised, road)
    return HitList([], None, sanitised=True, road="none")


def _fts_hits(
    index: SearchIndex,
    fts: str,
    roles: Sequence[str],
    scope: SessionFilter | None,
    sort: str | None,
) -> tuple[list[Hit], str]:
    # The index raises QueryRejected for syntax errors, unknown column filters, unterminated
    # strings, special queries…
    full_rank_max = min(FULL_RANK_MAX, index.full_rank_max)
    if sort is None and not index.more_matches_than(fts, full_rank_max):
        return _full_bm25(index, fts, roles, scope), "full"
    hits = _bounded(index, fts, roles, scope, sort)
    return hits, "bounded" if sort is None else "sorted"


def _full_bm25(
    index: SearchIndex, fts: str, roles: Sequence[str], scope: SessionFilter | None
) -> list[Hit]:
    """Exact bm25 over every match. The best matches of any role are ranked first (no join:
    it is cheaper) and filtered; only when too few survive the filter is the ranking redone
    with the filter inside (e.g. ``tool`` alone, whose long outputs rank low)."""
    ranked = index.ranked_matches(fts, 2 * RANKED_HITS)
    if not ranked:
        return []
    details = index.hit_details([row[0] for row in ranked], roles, scope)
    hits = [
        Hit(message_id, *details[message_id], -score)
        for message_id, score in ranked
        if message_id in details
    ]
    if len(hits) >= RANKED_HITS or len(ranked) < 2 * RANKED_HITS:
        return hits[:RANKED_HITS]
    rows = index.ranked_filtered_matches(fts, roles, scope, RANKED_HITS)
    return [Hit(row[0], row[1], row[2], -row[3]) for row in rows]


def _bounded(
    index: SearchIndex,
    fts: str,
    roles: Sequence[str],
    scope: SessionFilter | None,
    sort: str | None,
) -> list[Hit]:
    rows = index.newest_matches(
        fts,
        roles,
        scope,
        oldest_first=sort == "oldest",
        limit=CANDIDATES,
        mark=_HIGHLIGHT_OPEN,
    )
    average = _average_length(index)
    hits = [
        Hit(
            message_id,
            session_id,
            timestamp,
            bm25_term_score(marked.count(_HIGHLIGHT_OPEN), _varint(size), average),
        )
        for message_id, session_id, timestamp, marked, size in rows
    ]
    return _ordered(hits, sort)


def _ordered(hits: list[Hit], sort: str | None) -> list[Hit]:
    if sort == "newest":
        return sorted(hits, key=lambda h: (h.timestamp, h.message_id), reverse=True)
    if sort == "oldest":
        return sorted(hits, key=lambda h: (h.timestamp, h.message_id))
    return sorted(hits, key=lambda h: (-h.score, -h.message_id))


def bm25_term_score(frequency: int, length: float, average_length: float) -> float:
    """bm25's saturation of ``frequency`` for a document of ``length`` (no IDF factor)."""
    if frequency <= 0:
        return 0.0
    norm = K1 * (1 - B + B * length / max(average_length, 1e-9))
    return frequency * (K1 + 1) / (frequency + norm)


def _average_length(index: SearchIndex) -> float:
    """Mean tokens per indexed message, from FTS5's own averages record (row 1 of ``_data``)."""
    data = index.index_averages()
    if not data:
        return 1.0
    rows, offset = _read_varint(data, 0)
    tokens, _ = _read_varint(data, offset)
    return tokens / rows if rows else 1.0


def _varint(blob: bytes | None) -> int:
    if not blob:
        return 0
    return _read_varint(bytes(blob), 0)[0]


def _read_varint(data: bytes, offset: int) -> tuple[int, int]:
    """SQLite's big-endian varint (as FTS5 stores sizes): value and the next offset."""
    value = 0
    for index in range(offset, min(offset + 9, len(data))):
        byte = data[index]
        if index == offset + 8:
            return (value << 8) | byte, index + 1
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, index + 1
    return value, len(data)


def _cjk_hits(
    index: SearchIndex,
    query: PreparedQuery,
    roles: Sequence[str],
    scope: SessionFilter | None,
    sort: str | None,
) -> list[Hit]:
    candidates: set[int] | None = None
    for run in query.cjk_runs:
        found = set(index.cjk_matches(run, CJK_CANDIDATES))
        candidates = found if candidates is None else candidates & found
        if not candidates:
            return []
    ids = sorted(candidates or (), reverse=sort != "oldest")[:CJK_CANDIDATES]
    if not ids:
        return []
    rows = index.message_contents(ids, roles, scope)
    words = [w for w in query.words if w]
    scored: list[tuple[int, str, float, int, int]] = []
    for message_id, session_id, timestamp, content in rows:
        frequency = sum(content.count(run) for run in query.cjk_runs)
        if words:
            folded = fold(content)
            if not all(_has_word(folded, word) for word in words):
                continue
            frequency += sum(len(re.findall(_word_pattern(word), folded)) for word in words)
        scored.append((message_id, session_id, timestamp, frequency, len(content)))
    average = sum(s[4] for s in scored) / len(scored) if scored else 1.0
    hits = [
        Hit(message_id, session_id, timestamp, bm25_term_score(frequency, length, average))
        for message_id, session_id, timestamp, frequency, length in scored
    ]
    return _ordered(hits, sort)


def _word_pattern(word: str) -> str:
    return r"(?<![^\W_])" + re.escape(word) + r"(?![^\W_])"


def _has_word(folded_text: str, word: str) -> bool:
    return re.search(_word_pattern(word), folded_text) is not None
