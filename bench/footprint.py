"""Figure (d): how big the store is against the text it holds, what the full-text indexes
take of it, and whether planted CJK words are still found.

The size is measured after ``wal_checkpoint(TRUNCATE)`` (any ``-wal`` left is added). Object
sizes come from ``dbstat`` as page counts times the page size: SQLite 3.40 sums ``pgsize`` in
32 bits, which overflows above 2 GiB per object.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from bench.corpus import CJK_SHORT_TERM, CJK_TERM
from bench.ingest import checkpoint


@dataclass(frozen=True, slots=True)
class Footprint:
    file_bytes: int
    page_size: int
    pages_by_object: dict[str, int]
    free_pages: int
    cjk_term_found: int
    cjk_term_ms: float
    cjk_short_found: int
    cjk_short_ms: float
    cjk_short_like_pushed_down: int

    def share(self, *prefixes: str) -> float:
        total = sum(self.pages_by_object.values()) + self.free_pages
        chosen = sum(
            pages for name, pages in self.pages_by_object.items() if name.startswith(prefixes)
        )
        return chosen / total if total else 0.0

    def object_share(self, name: str) -> float:
        total = sum(self.pages_by_object.values()) + self.free_pages
        return self.pages_by_object.get(name, 0) / total if total else 0.0

    @property
    def free_share(self) -> float:
        total = sum(self.pages_by_object.values()) + self.free_pages
        return self.free_pages / total if total else 0.0


def file_bytes(db_path: Path) -> int:
    size = db_path.stat().st_size
    wal = db_path.with_name(db_path.name + "-wal")
    if wal.exists():
        size += wal.stat().st_size
    return size


def _timed_count(
    connection: sqlite3.Connection, sql: str, params: tuple[object, ...]
) -> tuple[int, float]:
    started = time.perf_counter()
    count: int = connection.execute(sql, params).fetchone()[0]
    return count, (time.perf_counter() - started) * 1000.0


def measure(db_path: Path) -> Footprint:
    checkpoint(db_path)
    size = file_bytes(db_path)
    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, isolation_level=None)
    try:
        page_size: int = connection.execute("PRAGMA page_size").fetchone()[0]
        free_pages: int = connection.execute("PRAGMA freelist_count").fetchone()[0]
        pages = {
            str(name): int(count)
            for name, count in connection.execute("SELECT name, count(*) FROM dbstat GROUP BY name")
        }
        term_found, term_ms = _timed_count(
            connection,
            "SELECT count(*) FROM messages_cjk WHERE messages_cjk MATCH ?",
            (f'"{CJK_TERM}"',),
        )
        # ``text || ''`` keeps the LIKE out of FTS5: SQLite 3.40's trigram LIKE returns no
        # rows at all for a pattern of fewer than 3 non-ASCII characters.
        short_found, short_ms = _timed_count(
            connection,
            "SELECT count(*) FROM messages_cjk WHERE text || '' LIKE ?",
            (f"%{CJK_SHORT_TERM}%",),
        )
        short_pushed, _ = _timed_count(
            connection,
            "SELECT count(*) FROM messages_cjk WHERE text LIKE ?",
            (f"%{CJK_SHORT_TERM}%",),
        )
    finally:
        connection.close()
    return Footprint(
        size, page_size, pages, free_pages, term_found, term_ms, short_found, short_ms, short_pushed
    )
