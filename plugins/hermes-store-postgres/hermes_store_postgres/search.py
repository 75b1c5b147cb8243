"""The statements of ``session_search`` and the browse picker in PostgreSQL
(:class:`~hermes_core.store.protocol.SearchIndex`; the SQLite one is
``hermes_core/store/search_queries.py``). The reads that are not full text — session rows,
lineage roots, the picker's listings, message reads — are written once for both, in
:class:`hermes_core.store.search_rows.SearchRows`; this gives them PostgreSQL's preview and
title match, and holds the full text.

Full text: the engine's FTS5 query is translated by :mod:`.fulltext` and matched against the
GIN-indexed ``messages.search_words``. Ranking is ``ts_rank_cd`` (cover density: how many
query terms occur and how close together) with normalisation 1 (divided by 1 + log of the
message's length), the stand-in for bm25's length normalisation; it is returned negated,
so lower is better, as the protocol's bm25 scores. The bounded road's inputs are given in
FTS5's own encodings (a varint token count per row and the averages record: rows, tokens),
computed from ``length(search_words)`` — the number of distinct words — over the newest
:data:`AVERAGE_SAMPLE` messages. Snippets are cut and marked in Python with the same word
rule as the index (:func:`.fulltext.snippet`). CJK substrings go through the ``pg_trgm``
index on ``messages.cjk_text``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_core.store.protocol import HitRow
from hermes_core.store.search_rows import SearchRows

from .fulltext import PAIR_INDEX_SQL, PAIR_KEYS_SQL, QueryTerms, snippet, to_tsquery_text
from .pair_keys import query_pair_keys
from .schema import CONVERSATION_ROLES, CONVERSATION_ROLES_SQL
from .selection_sql import build_where
from .statements import PostgresSql

if TYPE_CHECKING:
    import psycopg

    from hermes_core.selection.filters import SessionFilter

    Db = psycopg.Connection[tuple[Any, ...]]

AVERAGE_SAMPLE = 5000
FULL_RANK_MAX = 1000
"""Queries matching at most this many messages are ranked with ``ts_rank_cd`` over every
match; above it the engine's bounded road ranks the newest candidates. ``ts_rank_cd`` reads
each match's whole ``tsvector`` (≈ 25 µs a row on a loaded 2-core machine), so this keeps the
exhaustive road within the 50 ms discovery target."""
DENSE_MATCHES = 0.05
"""Above this share of matching messages the newest matches are found by walking the messages
newest first (a few thousand rows); below it from the word index, sorted (few matches)."""
AVERAGE_REFRESH_SECONDS = 60.0
"""How long the average indexed length (and the table's row count) is reused before it is read
again."""
UNLISTED_WORD_SHARE = 0.005
"""The share of messages PostgreSQL's planner expects a word to match when its statistics do
not list the word (``DEFAULT_TS_MATCH_SEL`` in ``ts_selfuncs.c``; less when the rarest listed
word is rarer): such an estimate says nothing about the word."""
UNLISTED_PREFIX_SHARE = 0.02
"""The same for a prefix when the statistics list fewer than 100 words (four times
:data:`UNLISTED_WORD_SHARE`); with more, a prefix is estimated from the listed words it
starts."""
ESTIMATE_MARGIN = 4
"""How far above a count the planner's estimate of a word's matches must be for the count probe
to be skipped (see :meth:`PostgresSearchIndex.more_matches_than`)."""
_SHORT_READ_SETTINGS = (
    "SELECT set_config('max_parallel_workers_per_gather', '0', true), "
    "set_config('jit', 'off', true)"
)
"""Settings for the current transaction of a match-finding statement: no parallel workers and no
JIT compilation. Each statement reads a bounded number of rows off an index; starting workers
(and, on a large estimated cost, compiling) takes longer than the read itself: on the 1M-message
bench store a phrase's candidates took 13–19 ms with two workers and 2.2 ms without."""
_QUERY = "to_tsquery('simple', %s)"


def _role_scope_filter(
    roles: Sequence[str], scope: SessionFilter | None
) -> tuple[str, list[object]]:
    """The conditions "in ``roles`` (and in a session of ``scope``)". Roles within the conversation's
    (the default) also say so in words the planner can match against the conversation word
    index (:data:`~.schema.CONVERSATION_ROLES_SQL`) without knowing the parameters."""
    sql = " AND m.role = ANY(%s::text[])"
    if roles and set(roles) <= set(CONVERSATION_ROLES):
        sql += f" AND m.{CONVERSATION_ROLES_SQL}"
    params: list[object] = [list(roles)]
    if scope is not None:
        where, scope_params = build_where(scope)
        sql += f" AND m.session_id IN (SELECT s.id FROM sessions s WHERE {where})"
        params.extend(scope_params)
    return sql, params


def _match(terms: QueryTerms, query: str, alias: str = "", *, pairs: bool = True) -> tuple[
    str, list[object]
]:
    """The condition "the message matches" (``query``: the tsquery's SQL) and its parameters.

    A query whose phrases require word pairs (:attr:`QueryTerms.pairs`) takes its candidates
    from the pair index (the keys of its pairs, :mod:`.pair_keys`) and checks each one's
    positions with ``ts_match_vq`` — the function form of ``@@``, which the planner cannot send
    to the word index: a bitmap over both indexes would read the whole list of every word of
    the phrase, most of the table for common words. A key stands for several pairs, so the
    check is what decides. ``pairs=False`` (a walk over the newest messages, where most
    match) leaves the pairs out."""
    words = f"{alias}search_words"
    if not (pairs and terms.pairs):
        return f"{words} @@ {query}", []
    holds_keys, keys = _holds_pair_keys(terms, alias)
    return f"{holds_keys} AND ts_match_vq({words}, {query})", keys


def _holds_pair_keys(terms: QueryTerms, alias: str) -> tuple[str, list[object]]:
    """The condition "the message holds a key of each of the query's pairs" (what the pair
    index answers) and its parameter."""
    return f"{alias}{PAIR_INDEX_SQL} @> {PAIR_KEYS_SQL}", [query_pair_keys(terms.pairs)]


def _newest_checked_candidates(
    terms: QueryTerms, where: str, params: list[object], direction: str
) -> tuple[str, list[object]]:
    """SQL of the ids of a phrase query's newest (``direction`` ``ASC``: oldest) matches in
    order, to be cut by a ``LIMIT``, and its parameters.

    The pair index gives the candidates (a key stands for several pairs, so some do not hold
    the phrase); only their ids are read and sorted, and then each one's positions are checked
    (``ts_match_vq``, which reads the message's whole ``tsvector``) in that order until the
    ``LIMIT`` has its matches. Checking every candidate before sorting them, as one ``WHERE``
    does, cost a phrase with thousands of candidates 0.2–0.3 s at 1M messages, where the
    bounded road wants 300. The fenced subquery keeps its order (``ORDER BY`` and
    ``OFFSET 0``: it is not merged into the outer query), and the outer ``ORDER BY`` on the
    same key lets the nested loop hand the ids over without another sort."""
    holds_keys, keys = _holds_pair_keys(terms, "m.")
    candidates = (
        f"SELECT m.id + 0 AS id FROM messages m WHERE {holds_keys}{where} "
        f"ORDER BY 1 {direction} OFFSET 0"
    )
    sql = (
        f"SELECT c.id FROM ({candidates}) c, LATERAL (SELECT 1 FROM messages x "
        f"WHERE x.id = c.id AND ts_match_vq(x.search_words, {_QUERY})) checked "
        f"ORDER BY c.id {direction}"
    )
    return sql, [*keys, *params, terms.tsquery]


def _occurrences_sql(terms: QueryTerms) -> tuple[str, list[object]]:
    """SQL counting the positions the query's words (outside ``NOT``) have in the message
    ``m``'s ``tsvector``, and its parameters. ``setweight`` marks the wanted words' positions
    and ``ts_filter`` keeps only those, both in C: only the few kept words are unnested. The
    words a prefix starts are looked up in the message's own word list first."""
    exact = [word for word, prefix in terms.positive if not prefix]
    prefixes = [_escape_like(word) + "%" for word, prefix in terms.positive if prefix]
    wanted = "%s::text[]"
    params: list[object] = [exact]
    if prefixes:
        wanted += (
            " || (SELECT coalesce(array_agg(l), '{}') FROM unnest(tsvector_to_array("
            "m.search_words)) l WHERE l LIKE ANY(%s::text[]))"
        )
        params.append(prefixes)
    return (
        "(SELECT coalesce(sum(array_length(w.positions, 1)), 0) FROM unnest(ts_filter("
        f"setweight(m.search_words, 'A', {wanted}), '{{a}}')) w)"
    ), params


def _density(ids: Sequence[int]) -> float:
    """The share of all messages a query matches, estimated from some of its matches' ids: one
    over the median gap between neighbouring ids (the scan may hand them over in any order,
    from several stretches of the table)."""
    ordered = sorted(ids)
    gaps = sorted(b - a for a, b in itertools.pairwise(ordered))
    return 1 / gaps[len(gaps) // 2] if gaps else 0.0


def _varint(value: int) -> bytes:
    """SQLite's big-endian varint (values below 2**56, as token counts are)."""
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(groups))


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _database_errors() -> tuple[type[Exception], ...]:
    import psycopg

    return (psycopg.Error,)


class PostgresSearchIndex(SearchRows):
    """The search reads of one PostgreSQL store (the reads that are not full text:
    :class:`~hermes_core.store.search_rows.SearchRows`)."""

    full_rank_max = FULL_RANK_MAX

    def __init__(self, db: Db) -> None:
        self._db = db
        self._sql = PostgresSql(db)
        self.database_errors = _database_errors()
        self._matched: tuple[str, list[int]] | None = None
        """The ids :meth:`more_matches_than` found (query, ids) when they were few enough to
        rank: the next :meth:`ranked_matches` of that query ranks them without matching again."""
        self._density: tuple[str, float] | None = None
        """(query, share of messages it matches) as the last :meth:`more_matches_than` saw."""
        self._averages: tuple[float, bytes | None] | None = None
        self._table_rows: tuple[float, float] | None = None

    def _rows(self, sql: str, params: Sequence[object] | dict[str, object]) -> list[Any]:
        return self._db.execute(sql, params).fetchall()

    def _matches(self, sql: str, params: Sequence[object]) -> list[Any]:
        """Run a statement that finds matches, planned for its own words every time: never
        prepared. psycopg prepares a statement it has run five times, and PostgreSQL may then
        reuse one generic plan for every word: the plan of a rare word, which for a word in
        half the messages builds a bitmap of all of them (1M messages: the count probe of
        ``that*`` takes 109 ms instead of 12; the newest matches of ``that*``, 7 s). The
        other statements (lookups by id) keep being prepared: planning each anew costs more
        than it saves. Each runs in its own transaction with :data:`_SHORT_READ_SETTINGS`."""
        with self._db.transaction():
            self._db.execute(_SHORT_READ_SETTINGS)
            return self._db.execute(sql, params, prepare=False).fetchall()

    # ------------------------------------------------------------------ primitives

    _preview_sql = "left(content, ?)"

    def _where(self, selection: SessionFilter) -> tuple[str, list[object]]:
        return build_where(selection)

    def _title_holds(self, word: str) -> tuple[str, object]:
        return "strpos(lower(s.title), lower(?)) > 0", word

    # ------------------------------------------------------------------ titles

    def title_candidates(
        self, ascii_words: Sequence[str], cjk_runs: Sequence[str], max_length: int, limit: int
    ) -> list[tuple[int, str]]:
        """(row key, title) of titles holding every ASCII word (case folded) and CJK run."""
        conditions = ["title IS NOT NULL", "length(title) <= %s"]
        params: list[object] = [max_length]
        for word in ascii_words:
            conditions.append("lower(title) LIKE %s")
            params.append("%" + _escape_like(word.lower()) + "%")
        for run in cjk_runs:
            conditions.append("strpos(title, %s) > 0")
            params.append(run)
        rows = self._rows(
            f"SELECT row_key, title FROM sessions WHERE {' AND '.join(conditions)} LIMIT %s",
            [*params, limit],
        )
        return [(int(key), str(title)) for key, title in rows]

    def titled_sessions(
        self, keys: Sequence[int], scope: SessionFilter | None
    ) -> list[tuple[int, str, float]]:
        where, params = build_where(scope) if scope is not None else ("TRUE", [])
        rows = self._rows(
            "SELECT s.row_key, s.id, s.last_active_at FROM sessions s "
            f"WHERE s.row_key = ANY(%s) AND {where}",
            [list(keys), *params],
        )
        return [(int(r[0]), str(r[1]), float(r[2])) for r in rows]

    # ------------------------------------------------------------------ full text

    def fts_snippet(
        self, fts_query: str, message_id: int, start: str, end: str, ellipsis: str, tokens: int
    ) -> str | None:
        """A snippet of the message's indexed text, matched words marked (None: no match)."""
        from hermes_core.store.errors import QueryRejected

        try:
            terms = to_tsquery_text(fts_query)
        except QueryRejected:
            return None
        rows = self._rows(
            "SELECT left(content, %s) FROM messages WHERE id = %s",
            [_indexed_chars(), message_id],
        )
        if not rows:
            return None
        text = str(rows[0][0])
        return snippet(text, terms.phrases_in(text), start, end, ellipsis, tokens)

    def more_matches_than(self, fts: str, count: int) -> bool:
        """Whether ``fts`` matches more than ``count`` messages. When it does not, the matching
        ids are kept for the :meth:`ranked_matches` that follows (a phrase is checked against
        each candidate's positions once, not twice).

        A single word or prefix the planner's statistics list as far more frequent than
        ``count`` is answered from the planner's estimate, without matching: counting the
        matches of a prefix such as ``have*`` reads a thousand rows' ``tsvector``s (9–45 ms on
        the 1M-message bench store) to learn what the statistics already say. The estimate is
        trusted only for one term (no combination: the planner takes words as independent) and
        only well above what it guesses for a word it does not list
        (:data:`UNLISTED_WORD_SHARE`, :data:`UNLISTED_PREFIX_SHARE`), so a rare word is
        always counted."""
        terms = to_tsquery_text(fts)
        match, pairs = _match(terms, _QUERY)
        if terms.single_term:
            prefix = terms.positive[0][1]
            share = self._planned_share(match, [*pairs, terms.tsquery], count, prefix=prefix)
            if share is not None:
                self._matched = None
                self._density = (fts, share)
                return True
        rows = self._matches(
            f"SELECT id FROM messages WHERE {match} LIMIT %s", [*pairs, terms.tsquery, count + 1]
        )
        ids = [int(r[0]) for r in rows]
        more = len(ids) > count
        self._matched = None if more else (fts, ids)
        self._density = (fts, _density(ids)) if more else None
        return more

    def _planned_share(
        self, match: str, params: list[object], count: int, *, prefix: bool
    ) -> float | None:
        """The share of messages the planner expects ``match`` to match, when it expects far
        more than ``count`` and the estimate comes from the word's own statistics; else None."""
        total = self._message_rows()
        if total <= 0:
            return None  # never analysed: the planner has no statistics yet
        plan = self._matches(f"EXPLAIN (FORMAT JSON) SELECT id FROM messages WHERE {match}", params)
        expected = float(plan[0][0][0]["Plan"]["Plan Rows"])
        unlisted = UNLISTED_PREFIX_SHARE if prefix else UNLISTED_WORD_SHARE
        if expected < max(ESTIMATE_MARGIN * (count + 1), 2 * unlisted * total):
            return None
        return min(1.0, expected / total)

    def _message_rows(self) -> float:
        """The planner's count of messages (``pg_class.reltuples``; -1 before the first
        ``ANALYZE``), read again once :data:`AVERAGE_REFRESH_SECONDS` have passed."""
        now = time.monotonic()
        if self._table_rows is None or now - self._table_rows[0] >= AVERAGE_REFRESH_SECONDS:
            rows = self._rows(
                "SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass", []
            )
            self._table_rows = (now, float(rows[0][0]))
        return self._table_rows[1]

    def _known_matches(self, fts: str) -> list[int] | None:
        """The ids the last :meth:`more_matches_than` of ``fts`` found (used once)."""
        matched, self._matched = self._matched, None
        return matched[1] if matched is not None and matched[0] == fts else None

    def ranked_matches(self, fts: str, limit: int) -> list[tuple[int, float]]:
        """(message id, -ts_rank_cd) of the best ``limit`` matches (lower is better)."""
        terms = to_tsquery_text(fts)
        query = terms.tsquery
        known = self._known_matches(fts)
        if known is not None:
            rows = self._matches(
                "SELECT id, -ts_rank_cd(search_words, q, 1) AS score "
                f"FROM messages, {_QUERY} q WHERE id = ANY(%s) ORDER BY score, id DESC LIMIT %s",
                [query, known, limit],
            )
        else:
            match, pairs = _match(terms, "q")
            rows = self._matches(
                "SELECT id, -ts_rank_cd(search_words, q, 1) AS score FROM messages, "
                f"{_QUERY} q WHERE {match} ORDER BY score, id DESC LIMIT %s",
                [query, *pairs, limit],
            )
        return [(int(r[0]), float(r[1])) for r in rows]

    def hit_details(
        self, message_ids: Sequence[int], roles: Sequence[str], scope: SessionFilter | None
    ) -> dict[int, tuple[str, float]]:
        where, params = _role_scope_filter(roles, scope)
        rows = self._rows(
            f"SELECT m.id, m.session_id, m.timestamp FROM messages m WHERE m.id = ANY(%s){where}",
            [list(message_ids), *params],
        )
        return {int(r[0]): (str(r[1]), float(r[2])) for r in rows}

    def ranked_filtered_matches(
        self, fts: str, roles: Sequence[str], scope: SessionFilter | None, limit: int
    ) -> list[HitRow]:
        terms = to_tsquery_text(fts)
        where, params = _role_scope_filter(roles, scope)
        match, pairs = _match(terms, "q", "m.")
        rows = self._matches(
            "SELECT m.id, m.session_id, m.timestamp, -ts_rank_cd(m.search_words, q, 1) AS score "
            f"FROM messages m, {_QUERY} q WHERE {match}{where} "
            "ORDER BY score, m.id DESC LIMIT %s",
            [terms.tsquery, *pairs, *params, limit],
        )
        return [(int(r[0]), str(r[1]), float(r[2]), float(r[3])) for r in rows]

    def newest_matches(
        self,
        fts: str,
        roles: Sequence[str],
        scope: SessionFilter | None,
        *,
        oldest_first: bool,
        limit: int,
        mark: str,
    ) -> list[tuple[int, str, float, str, bytes | None]]:
        """(id, session id, timestamp, ``mark`` once per occurrence of a matched word, the
        number of distinct words as a varint) of the ``limit`` newest (oldest) matches in
        ``roles``.

        The occurrences are counted in SQL from the ``tsvector``'s positions (every word of
        the query outside a ``NOT``; a prefix counts every word it starts), so no message text
        crosses the wire: the engine only counts the marks. The candidates are picked by id
        first and only those few rows are read whole."""
        terms = to_tsquery_text(fts)
        where, params = _role_scope_filter(roles, scope)
        direction = "ASC" if oldest_first else "DESC"
        density = self._density[1] if self._density and self._density[0] == fts else None
        # Sparse matches: order by an expression, so the planner reads them off the word
        # index and sorts them, rather than walking the whole table newest first. A phrase
        # that is not dense takes its candidates from the pair index, newest first, and
        # checks only as many as it needs.
        dense = density is not None and density >= DENSE_MATCHES
        counted, count_params = _occurrences_sql(terms)
        if terms.pairs and not dense:
            chosen, chosen_params = _newest_checked_candidates(terms, where, params, direction)
        else:
            order_key = "m.id" if dense or density is None else "m.id + 0"
            match, pairs = _match(terms, _QUERY, "m.", pairs=False)
            chosen = (
                f"SELECT m.id FROM messages m WHERE {match}{where} ORDER BY {order_key} {direction}"
            )
            chosen_params = [*pairs, terms.tsquery, *params]
        rows = self._matches(
            f"SELECT m.id, m.session_id, m.timestamp, {counted}, length(m.search_words) "
            f"FROM messages m WHERE m.id IN ({chosen} LIMIT %s) ORDER BY m.id {direction}",
            [*count_params, *chosen_params, limit],
        )
        return [
            (int(r[0]), str(r[1]), float(r[2]), mark * int(r[3]), _varint(int(r[4])))
            for r in rows
        ]

    def index_averages(self) -> bytes | None:
        """FTS5's averages record (rows, then words) over the newest messages, read again
        once :data:`AVERAGE_REFRESH_SECONDS` have passed (it moves slowly; reading it costs
        every sampled row's ``tsvector``)."""
        now = time.monotonic()
        if self._averages is not None and now - self._averages[0] < AVERAGE_REFRESH_SECONDS:
            return self._averages[1]
        averages = self._read_averages()
        self._averages = (now, averages)
        return averages

    def _read_averages(self) -> bytes | None:
        row = self._rows(
            "SELECT count(*), coalesce(sum(length(search_words)), 0) FROM "
            "(SELECT search_words FROM messages ORDER BY id DESC LIMIT %s) recent",
            [AVERAGE_SAMPLE],
        )[0]
        if not row[0]:
            return None
        return _varint(int(row[0])) + _varint(int(row[1]))

    def cjk_matches(self, text: str, limit: int) -> list[int]:
        """Ids of the newest messages holding the CJK substring ``text`` (trigram index)."""
        rows = self._matches(
            "SELECT id FROM messages WHERE cjk_text IS NOT NULL AND cjk_text LIKE %s "
            "ORDER BY id DESC LIMIT %s",
            ["%" + _escape_like(text) + "%", limit],
        )
        return [int(r[0]) for r in rows]

    def message_contents(
        self, message_ids: Sequence[int], roles: Sequence[str], scope: SessionFilter | None
    ) -> list[tuple[int, str, float, str]]:
        where, params = _role_scope_filter(roles, scope)
        rows = self._rows(
            "SELECT m.id, m.session_id, m.timestamp, m.content FROM messages m "
            f"WHERE m.id = ANY(%s){where}",
            [list(message_ids), *params],
        )
        return [(int(r[0]), str(r[1]), float(r[2]), str(r[3])) for r in rows]


def _indexed_chars() -> int:
    from .fulltext import INDEXED_CHARS

    return INDEXED_CHARS
