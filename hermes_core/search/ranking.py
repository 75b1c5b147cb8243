"""Finding the messages that match a query, best first, without ever ranking an unbounded set.

FTS5's ``bm25()`` scores every match and, for each query phrase, first counts every row that
holds it: over ~1M matches that takes seconds. So there are two roads (DESIGN §3):

* **Full ranking** when the query matches at most :data:`FULL_RANK_MAX` messages (a cheap probe
  — the ``FULL_RANK_MAX``-th newest match by rowid — tells): exact FTS5 ``bm25`` over all matches.
  Rare and medium terms take this road, so their top results are exactly bm25's.
* **Bounded ranking** otherwise (common words): the :data:`CANDIDATES` newest matches (by
  descending rowid, read straight off the index, role and source filters applied), scored by
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
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_core.store.fulltext import find_cjk

from .query import PreparedQuery, fold

FULL_RANK_MAX = 12_000
"""Queries matching at most this many messages (any role) are ranked by full FTS5 bm25."""
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


class _QueryRejected(Exception):
    """FTS5 refused the query text."""


def find_hits(
    connection: sqlite3.Connection,
    query: PreparedQuery,
    *,
    roles: Sequence[str],
    source: str | None = None,
    sort: str | None = None,
) -> HitList:
    """The messages matching ``query`` in ``roles`` (and ``source``), ranked."""
    if query.is_cjk:
        return HitList(_cjk_hits(connection, query, roles, source, sort), None, road="cjk")
    attempts = [(query.fts, False)]
    if query.fallback and query.fallback != query.fts:
        attempts.append((query.fallback, True))
    for fts, sanitised in attempts:
        if not fts:
            continue
        try:
            hits, road = _fts_hits(connection, fts, roles, source, sort)
        except _QueryRejected:
            continue
        return HitList(hits, fts, sanitised, road)
    return HitList([], None, sanitised=True, road="none")


def _filters(roles: Sequence[str], source: str | None) -> tuple[str, list[object]]:
    marks = ",".join("?" for _ in roles)
    sql = f" AND m.role IN ({marks})"
    params: list[object] = list(roles)
    if source is not None:
        sql += " AND m.session_id IN (SELECT id FROM sessions WHERE source = ?)"
        params.append(source)
    return sql, params


def _fts_hits(
    connection: sqlite3.Connection,
    fts: str,
    roles: Sequence[str],
    source: str | None,
    sort: str | None,
) -> tuple[list[Hit], str]:
    try:
        if sort is None and not _more_matches_than(connection, fts, FULL_RANK_MAX):
            return _full_bm25(connection, fts, roles, source), "full"
        hits = _bounded(connection, fts, roles, source, sort)
    except sqlite3.OperationalError as error:
        # Syntax errors, unknown column filters, unterminated strings, special queries…
        raise _QueryRejected(str(error)) from error
    return hits, "bounded" if sort is None else "sorted"


def _more_matches_than(connection: sqlite3.Connection, fts: str, count: int) -> bool:
    row = connection.execute(
        "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
        "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (fts, count),
    ).fetchone()
    return row is not None


def _full_bm25(
    connection: sqlite3.Connection, fts: str, roles: Sequence[str], source: str | None
) -> list[Hit]:
    """Exact bm25 over every match. The best matches of any role are ranked first (no join:
    it is cheaper) and filtered; only when too few survive the filter is the ranking redone
    with the filter inside (e.g. ``tool`` alone, whose long outputs rank low)."""
    ranked = connection.execute(
        "SELECT rowid, bm25(messages_fts) AS score FROM messages_fts "
        "WHERE messages_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?",
        (fts, 2 * RANKED_HITS),
    ).fetchall()
    if not ranked:
        return []
    where, params = _filters(roles, source)
    marks = ",".join("?" for _ in ranked)
    details = {
        row[0]: (row[1], row[2])
        for row in connection.execute(
            f"SELECT m.id, m.session_id, m.timestamp FROM messages m WHERE m.id IN ({marks}){where}",
            [*(row[0] for row in ranked), *params],
        )
    }
    hits = [
        Hit(message_id, *details[message_id], -score)
        for message_id, score in ranked
        if message_id in details
    ]
    if len(hits) >= RANKED_HITS or len(ranked) < 2 * RANKED_HITS:
        return hits[:RANKED_HITS]
    rows = connection.execute(
        "SELECT f.rowid, m.session_id, m.timestamp, bm25(messages_fts) AS score "
        "FROM messages_fts f JOIN messages m ON m.id = f.rowid "
        f"WHERE messages_fts MATCH ?{where} ORDER BY score, f.rowid DESC LIMIT ?",
        [fts, *params, RANKED_HITS],
    )
    return [Hit(row[0], row[1], row[2], -row[3]) for row in rows]


def _bounded(
    connection: sqlite3.Connection,
    fts: str,
    roles: Sequence[str],
    source: str | None,
    sort: str | None,
) -> list[Hit]:
    where, params = _filters(roles, source)
    direction = "ASC" if sort == "oldest" else "DESC"
    rows = connection.execute(
        "SELECT f.rowid, m.session_id, m.timestamp, "
        "highlight(messages_fts, 0, char(1), char(2)), d.sz "
        "FROM messages_fts f JOIN messages m ON m.id = f.rowid "
        "JOIN messages_fts_docsize d ON d.id = f.rowid "
        f"WHERE messages_fts MATCH ?{where} ORDER BY f.rowid {direction} LIMIT ?",
        [fts, *params, CANDIDATES],
    ).fetchall()
    average = _average_length(connection)
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


def _average_length(connection: sqlite3.Connection) -> float:
    """Mean tokens per indexed message, from FTS5's own averages record (row 1 of ``_data``)."""
    row = connection.execute("SELECT block FROM messages_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 1.0
    data = bytes(row[0])
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
    connection: sqlite3.Connection,
    query: PreparedQuery,
    roles: Sequence[str],
    source: str | None,
    sort: str | None,
) -> list[Hit]:
    candidates: set[int] | None = None
    for run in query.cjk_runs:
        found = set(find_cjk(connection, run, limit=CJK_CANDIDATES))
        candidates = found if candidates is None else candidates & found
        if not candidates:
            return []
    ids = sorted(candidates or (), reverse=sort != "oldest")[:CJK_CANDIDATES]
    if not ids:
        return []
    where, params = _filters(roles, source)
    marks = ",".join("?" for _ in ids)
    rows = connection.execute(
        f"SELECT m.id, m.session_id, m.timestamp, m.content FROM messages m "
        f"WHERE m.id IN ({marks}){where}",
        [*ids, *params],
    ).fetchall()
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
