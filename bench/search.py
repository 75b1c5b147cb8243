"""Figure (s): ``session_search`` latency per query class, and relevance against full bm25.

Runs on the largest store built by (a) (opened read-only and ``immutable``: the cached store is
never written, not even its ``-shm``). Query classes follow
``../shared/reference/anchor-figures.md``:

- ``rare``: the planted ``RARE_TERM`` (70 per 100k messages) and natural words of about the
  same document frequency;
- ``medium``: the planted ``MEDIUM_TERM`` (1 %) and natural words near 1 %;
- ``common``: natural words in about 27 % of messages;
- ``very_common``: the most frequent words (``the`` is in ~89 %);
- ``two_terms``: AND of two natural words, together in about 3 %;
- ``cjk``: the planted 4-character ``CJK_TERM`` (substring of a longer CJK run);
- ``cjk_2char`` (context): the 2-character ``CJK_SHORT_TERM``.

Natural words are picked by Zipf rank from the corpus generator's vocabulary and kept when
their document frequency (read from a temporary ``fts5vocab`` table, untimed) falls in the
class's band. Every query of every class runs ``repeats`` times, classes interleaved so machine
noise hits them alike; p50/p95 per class are of all those calls (the default discovery call:
limit 3, adaptive detail — what an agent sends).

Relevance: for the rare and medium queries (and a few common ones, for context) the top-3
sessions of ``session_search`` are compared with the top-3 sessions (one per lineage) of a
full bm25 ranking of *every* match (``ORDER BY bm25``, user and assistant messages, as
discovery searches by default). A query agrees when both name the same sessions, or differ
only between sessions whose best bm25 scores tie.
"""

from __future__ import annotations

import random
import re
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.corpus import (
    CJK_SHORT_TERM,
    CJK_TERM,
    MEDIUM_TERM,
    RARE_TERM,
    CorpusGenerator,
)
from hermes_core.search import session_search
from hermes_core.search.lineage import lineage_roots
from hermes_core.search.ranking import CANDIDATES, FULL_RANK_MAX
from hermes_core.search.typeahead import browse_rows
from hermes_core.store.search_queries import SqliteSearchIndex

TYPED = (f"session 12 {MEDIUM_TERM}", CJK_TERM, "error handling")
"""What the (context) typeahead figure types into the browse picker, one keystroke at a time."""
NATURAL_PER_CLASS = 6
"""Natural words per single-term class besides the planted term."""


@dataclass(frozen=True, slots=True)
class QueryClass:
    name: str
    queries: list[str]
    note: str


@dataclass
class SearchFigures:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    document_counts: dict[str, list[int]] = field(default_factory=dict)
    scroll_ms: list[float] = field(default_factory=list)
    browse_ms: list[float] = field(default_factory=list)
    typeahead_ms: list[float] = field(default_factory=list)
    agreement: dict[str, tuple[int, int, list[str]]] = field(default_factory=dict)
    full_bm25_very_common_ms: float = 0.0
    classes: list[QueryClass] = field(default_factory=list)
    cli_latencies: dict[str, list[float]] = field(default_factory=dict)
    """The same queries as ``hermes sessions search`` asks them (10 results)."""
    tool_latencies: dict[str, list[float]] = field(default_factory=dict)
    """The agent's call with tool output searched too (``role_filter`` user,assistant,tool)."""
    truth: dict[str, list[int]] = field(default_factory=dict)
    """Per class, per query: the messages whose whole text holds every word of it."""


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def open_read_only(db_path: Path) -> sqlite3.Connection:
    """The cached store, read-only and immutable (no lock files, no ``-shm``). Should a
    write-ahead log with content sit beside it (a writer still open), the file alone may not be
    consistent: then it is opened plainly read-only instead, which reads the log."""
    wal = db_path.with_name(db_path.name + "-wal")
    immutable = not (wal.exists() and wal.stat().st_size > 0)
    connection = sqlite3.connect(
        f"file:{db_path}?mode=ro" + ("&immutable=1" if immutable else ""),
        uri=True,
        check_same_thread=False,
    )
    connection.execute("PRAGMA cache_size = -16384")
    return connection


class _DocumentFrequency:
    """Untimed: how many messages hold a word (``fts5vocab`` row table in the temp schema)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        connection.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.bench_vocab "
            "USING fts5vocab(main, 'messages_fts', 'row')"
        )
        self.messages: int = connection.execute("SELECT max(id) FROM messages").fetchone()[0]

    def __call__(self, word: str) -> int:
        row = self._connection.execute(
            "SELECT doc FROM temp.bench_vocab WHERE term = ?", (word,)
        ).fetchone()
        return int(row[0]) if row else 0

    def matches(self, query: str) -> int:
        row = self._connection.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (query,)
        ).fetchone()
        return int(row[0])


def _words_in_band(
    generator: CorpusGenerator,
    frequency: _DocumentFrequency,
    ranks: Iterable[int],
    low: float,
    high: float,
    wanted: int,
) -> list[str]:
    chosen = []
    for rank in ranks:
        word = generator.word_at_rank(rank)
        share = frequency(word) / frequency.messages
        if low <= share <= high:
            chosen.append(word)
            if len(chosen) == wanted:
                break
    return chosen


def query_classes(connection: sqlite3.Connection, seed: int) -> tuple[list[QueryClass], dict]:
    """The probe queries of each class (untimed preparation)."""
    generator = CorpusGenerator(seed)
    frequency = _DocumentFrequency(connection)
    rare_share = 70 / 100_000
    rare = _words_in_band(
        generator, frequency, range(24_000, 40_000, 97), rare_share / 2, rare_share * 2, 6
    )
    medium = _words_in_band(
        generator, frequency, range(1_200, 6_000, 37), 0.006, 0.016, NATURAL_PER_CLASS
    )
    common = _words_in_band(generator, frequency, range(30, 400, 3), 0.20, 0.35, NATURAL_PER_CLASS)
    very_common = [generator.word_at_rank(rank) for rank in range(1, 5)]
    pair_words = _words_in_band(generator, frequency, range(60, 600, 2), 0.12, 0.22, 24)
    rng = random.Random(seed)
    pairs: list[str] = []
    for _ in range(200):
        first, second = rng.sample(pair_words, 2)
        share = frequency.matches(f"{first} {second}") / frequency.messages
        if 0.015 <= share <= 0.05 and f"{first} {second}" not in pairs:
            pairs.append(f"{first} {second}")
            if len(pairs) == NATURAL_PER_CLASS:
                break
    classes = [
        QueryClass("rare", [RARE_TERM, *rare], "planted term + natural words, ~70/100k"),
        QueryClass("medium", [MEDIUM_TERM, *medium], "planted term + natural words, ~1 %"),
        QueryClass("common", common, "natural words, 20–35 %"),
        QueryClass("very_common", very_common, "the 4 most frequent words (`the` ~89 %)"),
        QueryClass("two_terms", pairs, "two natural words AND-ed, together 1.5–5 %"),
        QueryClass("cjk", [CJK_TERM], "planted 4-character CJK substring"),
        QueryClass("cjk_2char", [CJK_SHORT_TERM], "context: 2-character CJK substring"),
    ]
    counts = {
        c.name: [frequency.matches(q) if not c.name.startswith("cjk") else 0 for q in c.queries]
        for c in classes
    }
    return classes, counts


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def run_search_bench(db_path: Path, seed: int, repeats: int) -> SearchFigures:
    connection = open_read_only(db_path)
    figures = SearchFigures()
    classes, counts = query_classes(connection, seed)
    figures.classes = classes
    figures.document_counts = counts
    for query_class in classes:  # warm the cache once
        for query in query_class.queries:
            session_search(connection, query=query)
    shapes = (
        (figures.latencies, {}),
        (figures.cli_latencies, {"limit": 10}),
        (figures.tool_latencies, {"role_filter": "user,assistant,tool"}),
    )
    for latencies, _ in shapes:
        for query_class in classes:
            latencies[query_class.name] = []
    for _ in range(repeats):
        for query_class in classes:
            for query in query_class.queries:
                for latencies, shape in shapes:
                    latencies[query_class.name].append(
                        _timed(lambda q=query, a=shape: session_search(connection, query=q, **a))  # type: ignore[misc]
                    )
    anchors = _scroll_anchors(connection, classes)
    for _ in range(max(1, 200 // max(1, len(anchors)))):
        for session_id, message_id in anchors:
            figures.scroll_ms.append(
                _timed(
                    lambda s=session_id, m=message_id: session_search(  # type: ignore[misc]
                        connection, session_id=s, around_message_id=m
                    )
                )
            )
    session_search(connection)
    for _ in range(50):
        figures.browse_ms.append(_timed(lambda: session_search(connection)))
    for text in TYPED:
        for end in range(len(text) + 1):
            figures.typeahead_ms.append(_timed(lambda t=text[:end]: browse_rows(connection, t)))  # type: ignore[misc]
    by_name = {c.name: c for c in classes}
    for name in ("rare", "medium"):
        figures.agreement[name] = _agreement(connection, by_name[name].queries)
    figures.agreement["common"] = _agreement(connection, by_name["common"].queries[:2])
    figures.full_bm25_very_common_ms = _timed(
        lambda: connection.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'the' ORDER BY rank LIMIT 20"
        ).fetchall()
    )
    figures.truth = full_text_truth(connection, classes)
    connection.close()
    return figures


_TOKEN = re.compile(r"[^\W_]+")
"""A word as ``unicode61`` takes it: a run of letters and digits."""


def full_text_truth(connection: sqlite3.Connection, classes: Sequence[QueryClass]) -> dict:
    """Untimed: for each word query, how many messages hold all its words anywhere in their
    whole text (tool output included) — read from ``messages``, not from the index."""
    queries = {
        c.name: [q.lower().split() for q in c.queries]
        for c in classes
        if not c.name.startswith("cjk")
    }
    wanted = {word for terms in queries.values() for words in terms for word in words}
    hits: dict[tuple[str, ...], int] = {
        tuple(words): 0 for terms in queries.values() for words in terms
    }
    cursor = connection.execute("SELECT content FROM messages")
    while rows := cursor.fetchmany(2000):
        for (content,) in rows:
            present = wanted.intersection(_TOKEN.findall(content.lower()))
            if present:
                for words in hits:
                    if present.issuperset(words):
                        hits[words] += 1
    return {name: [hits[tuple(words)] for words in terms] for name, terms in queries.items()}


def _scroll_anchors(
    connection: sqlite3.Connection, classes: list[QueryClass]
) -> list[tuple[str, int]]:
    anchors = []
    for query_class in classes:
        for query in query_class.queries[:3]:
            for result in session_search(connection, query=query)["results"]:
                anchors.append((result["session_id"], result["match_message_id"]))
    return anchors


def _agreement(
    connection: sqlite3.Connection, queries: Sequence[str]
) -> tuple[int, int, list[str]]:
    agreeing = 0
    misses = []
    for query in queries:
        truth = _full_bm25_top(connection, query)
        found = [r["session_id"] for r in session_search(connection, query=query)["results"]]
        expected = [session for session, _ in truth[:3]]
        if set(found) == set(expected):
            agreeing += 1
            continue
        # Ties: sessions outside the expected three that score exactly as the third one.
        scores = dict(truth)
        cutoff = truth[min(2, len(truth) - 1)][1] if truth else 0.0
        if all(s in expected or abs(scores.get(s, 1e9) - cutoff) < 1e-9 for s in found):
            agreeing += 1
        else:
            misses.append(query)
    return agreeing, len(queries), misses


def _full_bm25_top(connection: sqlite3.Connection, query: str) -> list[tuple[str, float]]:
    """Sessions by their best bm25 over every match (user/assistant), one per lineage."""
    rows = connection.execute(
        "SELECT m.session_id, bm25(messages_fts) AS score FROM messages_fts f "
        "JOIN messages m ON m.id = f.rowid "
        "WHERE messages_fts MATCH ? AND m.role IN ('user', 'assistant') ORDER BY score LIMIT 500",
        (query,),
    ).fetchall()
    roots = lineage_roots(SqliteSearchIndex(connection), [row[0] for row in rows])
    seen: dict[str, tuple[str, float]] = {}
    for session_id, score in rows:
        root = roots.get(session_id, session_id)
        if root not in seen:
            seen[root] = (session_id, -score)
    return list(seen.values())


def summary(samples: Sequence[float]) -> str:
    return f"{percentile(samples, 0.5):.1f} / {percentile(samples, 0.95):.1f}"


def bounds_note() -> str:
    return (
        f"full bm25 up to {FULL_RANK_MAX:,} matches, else bm25 tf/length over the "
        f"{CANDIDATES} newest matches"
    )


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)
