"""(p) SQLite beside PostgreSQL on the same corpus, in the same run (issue 14's bench).

Both stores are opened as ``store.url`` opens them and loaded chunk by chunk, interleaved (the
order of the two loaders rotating per chunk) so machine noise hits both; then on each full
store: single-append latency, discovery latency per probe class (``session_search``), size
over the corpus text, and the throughput of 8 writer processes appending at once.

Discovery is measured twice on both stores: right after the load, and again once the store has
settled — PostgreSQL's autovacuum has caught up with the rows just loaded (vacuumed: visibility
map set; analysed: the planner's statistics cover them). Right after a bulk load autovacuum
reads the whole new table on the same two cores, so the first figures mix search with that; the
settled ones are what a store that is written at the usual pace answers. Each probe query runs
once untimed before it is timed (first reads from disk are not what p95 describes).

PostgreSQL is a throwaway local cluster (``hermes_store_postgres.testing.start_cluster``) with
durable settings — ``fsync`` on, ``synchronous_commit=off`` (a crash may lose the last commits,
never corrupt: the same promise as SQLite's WAL with ``synchronous=NORMAL``) — on the same
disk and the same two cores as everything else.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hermes_hookspecs import Message

from bench.corpus import CJK_TERM, MESSAGES_PER_SESSION
from bench.corpusfile import CorpusFile
from bench.ingest import corpus_messages
from hermes_core.plugins import PluginHost
from hermes_core.search import session_search
from hermes_core.store.backends import open_url
from hermes_core.store.protocol import Store

BACKENDS = ("sqlite", "postgresql")
WRITERS = 8
WRITER_APPENDS = 200
SETTLE_TIMEOUT_SECONDS = 1800.0
"""How long (p) waits for PostgreSQL's autovacuum to catch up before probing again anyway."""


@dataclass
class BackendFigures:
    """What (p) measured for one backend."""

    ingest_seconds: float = 0.0
    append_ms: list[float] = field(default_factory=list)
    discovery_ms: dict[str, list[float]] = field(default_factory=dict)
    """Right after the load."""
    settled_discovery_ms: dict[str, list[float]] = field(default_factory=dict)
    """Once autovacuum has caught up (see the module doc)."""
    settle_seconds: float = 0.0
    """How long that took after the first probes (the same for both backends)."""
    size_bytes: int = 0
    writer_messages_per_second: float = 0.0


@contextmanager
def backend_urls(workdir: Path, label: str) -> Iterator[dict[str, str]]:
    """A fresh SQLite file and a fresh PostgreSQL database, by backend."""
    from hermes_store_postgres.testing import fresh_database, start_cluster

    folder = workdir / f"backends-{label}"
    sqlite_file = folder / "state.db"
    for leftover in (sqlite_file, Path(f"{sqlite_file}-wal"), Path(f"{sqlite_file}-shm")):
        leftover.unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    cluster = start_cluster(durable=True)
    try:
        with fresh_database(cluster) as name:
            yield {"sqlite": f"sqlite:///{sqlite_file}", "postgresql": cluster.url(name)}
    finally:
        cluster.stop()


def _load(store: Store, chunk: list[object]) -> None:
    for session in chunk:
        created = store.create_session(
            session.source,  # type: ignore[attr-defined]
            started_at=session.started_at,  # type: ignore[attr-defined]
            title=session.title,  # type: ignore[attr-defined]
            cwd=session.cwd,  # type: ignore[attr-defined]
            model=session.model,  # type: ignore[attr-defined]
        )
        store.append_messages(created.id, corpus_messages(session))  # type: ignore[arg-type]
        store.end_session(created.id, "user_exit")


def probes(store: Store, rng: random.Random) -> dict[str, list[str]]:
    """Probe queries by class, drawn from the loaded text (rare/common words, a phrase, a
    prefix, the planted CJK term)."""
    words: dict[str, int] = {}
    for session in store.select_sessions(limit=40):
        for message in store.messages(session.id):
            for word in message.content.split():
                if word.isalpha() and word.isascii() and len(word) > 3:
                    words[word.lower()] = words.get(word.lower(), 0) + 1
    ranked = sorted(words, key=lambda w: (-words[w], w))
    common = ranked[:5]
    rare = [w for w in ranked if words[w] == 1][:5] or ranked[-5:]
    phrases = [f'"{a} {b}"' for a, b in zip(common, ranked[5:10], strict=False)]
    prefixes = [w[:4] + "*" for w in common]
    rng.shuffle(rare)
    return {
        "common": common,
        "rare": rare,
        "phrase": phrases,
        "prefix": prefixes,
        "cjk": [CJK_TERM],
    }


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


_WRITER = """
import sys, time
from hermes_hookspecs import Message
from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url
url, count = sys.argv[1], int(sys.argv[2])
store = open_url(url, host=PluginHost())
session = store.create_session("bench")
print("READY", flush=True)
sys.stdin.readline()
for n in range(count):
    store.append_message(session.id, Message("user", f"writer message {n} with some words"))
store.close()
print("DONE", flush=True)
"""


def _writers(url: str) -> float:
    """Messages per second of :data:`WRITERS` processes appending at once."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(_WRITER), url, str(WRITER_APPENDS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(WRITERS)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "READY"
    started = time.perf_counter()
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        child.communicate(timeout=600)
        if child.returncode != 0:
            raise RuntimeError(f"a writer failed on {url.split(':', 1)[0]}")
    return WRITERS * WRITER_APPENDS / (time.perf_counter() - started)


def _discovery(
    store: Store, by_class: dict[str, list[str]], repeats: int
) -> dict[str, list[float]]:
    """Milliseconds per ``session_search`` call, by probe class (one untimed call per query
    first)."""
    samples: dict[str, list[float]] = {}
    for probe_class, queries in by_class.items():
        timed = samples.setdefault(probe_class, [])
        for query in queries:
            session_search(store, query=query)
        for _ in range(repeats):
            for query in queries:
                started = time.perf_counter()
                session_search(store, query=query)
                timed.append((time.perf_counter() - started) * 1000)
    return samples


def _settle(url: str, timeout: float) -> float:
    """Wait until no autovacuum runs in the PostgreSQL database ``url`` and none is due on
    ``messages`` (its inserts and changes since the last vacuum and analyse are below the
    server's thresholds); the seconds waited (``timeout`` at most)."""
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as db:
        settings: dict[str, float] = dict(
            db.execute(
                "SELECT name, setting::float8 FROM pg_settings WHERE name IN ("
                "'autovacuum_vacuum_insert_threshold', 'autovacuum_vacuum_insert_scale_factor', "
                "'autovacuum_analyze_threshold', 'autovacuum_analyze_scale_factor')"
            ).fetchall()
        )
        while time.perf_counter() - started < timeout:
            row = db.execute(
                "SELECT t.n_ins_since_vacuum, t.n_mod_since_analyze, c.reltuples, "
                "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' "
                "AND datname = current_database()) "
                "FROM pg_stat_user_tables t JOIN pg_class c ON c.oid = t.relid "
                "WHERE t.relname = 'messages'"
            ).fetchone()
            assert row is not None
            inserted, modified, rows, workers = row
            rows = max(float(rows), 0.0)
            vacuum_due = (
                inserted
                > settings["autovacuum_vacuum_insert_threshold"]
                + settings["autovacuum_vacuum_insert_scale_factor"] * rows
            )
            analyze_due = (
                modified
                > settings["autovacuum_analyze_threshold"]
                + settings["autovacuum_analyze_scale_factor"] * rows
            )
            if not workers and not vacuum_due and not analyze_due:
                break
            time.sleep(2.0)
    return time.perf_counter() - started


def run_backends(
    corpus: CorpusFile, sessions: int, workdir: Path, label: str, *, appends: int, repeats: int
) -> dict[str, BackendFigures]:
    """Measure every backend on the first ``sessions`` sessions of ``corpus``."""
    figures = {name: BackendFigures() for name in BACKENDS}
    host = PluginHost()
    with backend_urls(workdir, label) as urls:
        stores = {name: open_url(urls[name], host=host) for name in BACKENDS}
        try:
            chunk_sessions = max(10, sessions // 50)
            for number, chunk in enumerate(corpus.chunks(sessions, chunk_sessions)):
                order = BACKENDS if number % 2 == 0 else tuple(reversed(BACKENDS))
                for name in order:
                    started = time.perf_counter()
                    _load(stores[name], chunk)  # type: ignore[arg-type]
                    figures[name].ingest_seconds += time.perf_counter() - started
            by_class = probes(stores["sqlite"], random.Random(1))
            for name in BACKENDS:
                store = stores[name]
                live = store.create_session("cli")
                for n in range(appends):
                    started = time.perf_counter()
                    store.append_message(live.id, Message("user", f"live append {n} of the bench"))
                    figures[name].append_ms.append((time.perf_counter() - started) * 1000)
                figures[name].discovery_ms = _discovery(store, by_class, repeats)
            waited = _settle(urls["postgresql"], SETTLE_TIMEOUT_SECONDS)
            for name in BACKENDS:
                figures[name].settle_seconds = waited
                figures[name].settled_discovery_ms = _discovery(stores[name], by_class, repeats)
                figures[name].size_bytes = stores[name].stats().database_bytes
        finally:
            for store in stores.values():
                store.close()
        for name in BACKENDS:
            figures[name].writer_messages_per_second = _writers(urls[name])
    return figures


def report(
    figures: dict[str, BackendFigures], messages: int, text_bytes: int, label: str
) -> list[tuple[str, str, str, str]]:
    """(name, value, unit, note) lines for :func:`bench.figures.emit`."""
    lines: list[tuple[str, str, str, str]] = []
    for name, found in figures.items():
        short = "pg" if name == "postgresql" else name
        lines.append(
            (
                f"p_ingest_{short}_{label}",
                f"{messages / found.ingest_seconds:,.0f}",
                "msgs/s",
                "create + one append_messages of 100 + end, per session",
            )
        )
        lines.append(
            (
                f"p_append_p99_{short}_{label}",
                f"{percentile(found.append_ms, 0.99):.2f}",
                "ms",
                f"{len(found.append_ms)} single appends on the full store",
            )
        )
        for probe_class, samples in found.discovery_ms.items():
            lines.append(
                (
                    f"p_discovery_p95_{probe_class}_{short}_{label}",
                    f"{percentile(samples, 0.95):.1f}",
                    "ms",
                    f"right after the load; {len(samples)} session_search calls",
                )
            )
        for probe_class, samples in found.settled_discovery_ms.items():
            lines.append(
                (
                    f"p_settled_discovery_p95_{probe_class}_{short}_{label}",
                    f"{percentile(samples, 0.95):.1f}",
                    "ms",
                    f"target <= 50 ms; once autovacuum caught up ({found.settle_seconds:.0f} s "
                    f"after the first probes); {len(samples)} session_search calls",
                )
            )
        lines.append(
            (
                f"p_size_over_text_{short}_{label}",
                f"{found.size_bytes / text_bytes:.2f}",
                "x",
                f"{found.size_bytes:,} bytes over {text_bytes:,} bytes of text",
            )
        )
        lines.append(
            (
                f"p_writers_{short}_{label}",
                f"{found.writer_messages_per_second:,.0f}",
                "msgs/s",
                f"{WRITERS} processes x {WRITER_APPENDS} single appends",
            )
        )
    return lines  # fmt: skip


__all__ = ["MESSAGES_PER_SESSION", "report", "run_backends"]
