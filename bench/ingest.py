"""Figure (a): bulk insert through ``SessionStore`` versus a plain-SQLite loader, side by side.

Every loader gets the same sessions. The corpus is read in chunks; each chunk is first turned
into each loader's input (untimed: ``Message`` objects for the store, tuples for plain SQLite),
then every loader writes it, in an order that rotates from chunk to chunk, and only the
database work is timed. Both databases grow in lockstep, so machine noise hits both alike.

* ``store``: ``create_session`` → one ``append_messages`` call (one transaction) →
  ``end_session``, per session: what an importer does through the public API.
* ``plain``: the same schema (``schema.migrate`` on ``open_connection``), and per session one
  transaction of raw ``INSERT``/``executemany`` for the session and its messages plus the
  full-text rows, written the way ``fulltext.index_new_messages`` writes them.
* ``triggers`` (context only, small sizes): like ``plain`` but the word index is kept by an
  ``AFTER INSERT`` trigger, the design DESIGN §3 rejected.
"""

from __future__ import annotations

import gc
import shutil
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hermes_hookspecs import Message

from bench.corpus import CorpusSession
from bench.corpusfile import CorpusFile
from hermes_core.store import fulltext
from hermes_core.store.connection import open_connection
from hermes_core.store.ids import new_session_id
from hermes_core.store.imports import WholeSession
from hermes_core.store.schema import migrate
from hermes_core.store.store import STATE_DB_NAME, SessionStore

END_REASON = "imported"


class Loader(Protocol):
    name: str

    def prepare(self, sessions: Sequence[CorpusSession]) -> Any: ...
    def load(self, prepared: Any) -> None: ...
    def close(self) -> None: ...


StoreInput = list[tuple[CorpusSession, list[Message]]]


def corpus_messages(session: CorpusSession) -> list[Message]:
    return [
        Message(m.role, m.content, timestamp=m.timestamp, tool_name=m.tool_name)  # type: ignore[arg-type]
        for m in session.messages
    ]


class StoreLoader:
    """Writes through the public ``SessionStore`` API."""

    name = "store"

    def __init__(self, home: Path) -> None:
        self.store = SessionStore.open(home)

    def prepare(self, sessions: Sequence[CorpusSession]) -> StoreInput:
        return [(s, corpus_messages(s)) for s in sessions]

    def load(self, prepared: StoreInput) -> None:
        store = self.store
        for session, messages in prepared:
            session_id = store.create_session(
                session.source,
                title=session.title,
                started_at=session.started_at,
                cwd=session.cwd,
                model=session.model,
            ).id
            store.append_messages(session_id, messages)
            store.end_session(session_id, END_REASON, ended_at=messages[-1].timestamp)

    def close(self) -> None:
        self.store.close()


class BulkLoader:
    """Writes through the store's bulk path, ``SessionStore.add_whole_sessions``: whole
    sessions, many per transaction, one word-index insert per transaction."""

    name = "bulk"

    def __init__(self, home: Path) -> None:
        self.store = SessionStore.open(home)

    def prepare(self, sessions: Sequence[CorpusSession]) -> list[WholeSession]:
        return [
            WholeSession(
                s.source,
                s.started_at,
                corpus_messages(s),
                title=s.title,
                fields={
                    "cwd": s.cwd,
                    "model": s.model,
                    "ended_at": s.messages[-1].timestamp,
                    "end_reason": END_REASON,
                },
            )
            for s in sessions
        ]

    def load(self, prepared: list[WholeSession]) -> None:
        self.store.add_whole_sessions(prepared)

    def close(self) -> None:
        self.store.close()


_SESSION_INSERT = (
    "INSERT INTO sessions (id, source, title, title_source, model, cwd, started_at, ended_at, "
    "end_reason, last_active_at, message_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_MESSAGE_INSERT = (
    "INSERT INTO messages (session_id, role, content, tool_name, timestamp) VALUES (?, ?, ?, ?, ?)"
)
_FTS_INSERT = (
    "INSERT INTO messages_fts(rowid, content) "
    "SELECT id, content FROM messages_fts_source WHERE id BETWEEN ? AND ?"
)
_CJK_INSERT = "INSERT INTO messages_cjk(rowid, text) VALUES (?, ?)"

PlainInput = list[tuple[tuple[object, ...], list[tuple[str, str, str, str | None, float]]]]


class PlainLoader:
    """Raw SQL on the store's exact schema, one transaction per session."""

    name = "plain"
    triggers = False

    def __init__(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.connection = open_connection(home / STATE_DB_NAME)
        migrate(self.connection)
        if self.triggers:
            self.connection.execute(
                "CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN "
                "INSERT INTO messages_fts(rowid, content) VALUES "
                f"(new.id, substr(new.content, 1, {fulltext.INDEXED_CHARS})); END"
            )

    def prepare(self, sessions: Sequence[CorpusSession]) -> PlainInput:
        prepared: PlainInput = []
        for s in sessions:
            session_id = new_session_id(now=s.started_at)
            last = s.messages[-1].timestamp
            row = (
                session_id,
                s.source,
                s.title,
                "user" if s.title else None,
                s.model,
                s.cwd,
                s.started_at,
                last,
                END_REASON,
                last,
                len(s.messages),
            )
            messages = [
                (session_id, m.role, m.content, m.tool_name, m.timestamp) for m in s.messages
            ]
            prepared.append((row, messages))
        return prepared

    def load(self, prepared: PlainInput) -> None:
        db = self.connection
        for session_row, messages in prepared:
            # The CJK runs are computed inside the timing, as the store does.
            cjk_texts = [fulltext.cjk_runs(m[2]) for m in messages]
            db.execute("BEGIN IMMEDIATE")
            db.execute(_SESSION_INSERT, session_row)
            db.executemany(_MESSAGE_INSERT, messages)
            last_id: int = db.execute("SELECT last_insert_rowid()").fetchone()[0]
            first_id = last_id - len(messages) + 1
            if not self.triggers:
                db.execute(_FTS_INSERT, (first_id, last_id))
            cjk_rows = [(first_id + i, text) for i, text in enumerate(cjk_texts) if text]
            if cjk_rows:
                db.executemany(_CJK_INSERT, cjk_rows)
            db.execute("COMMIT")

    def close(self) -> None:
        self.connection.close()


class TriggerLoader(PlainLoader):
    """``PlainLoader`` with the word index kept by a trigger (context figure)."""

    name = "triggers"
    triggers = True


@dataclass
class IngestResult:
    messages: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    merge_seconds: float = 0.0
    """After the load: merging the store's word index as its background thread would in the
    pauses between writes (FTS5's automatic merging, which ran inside the commits, is off)."""
    bulk_merge_seconds: float = 0.0
    chunk_ratios: list[float] = field(default_factory=list)
    store_rates: list[float] = field(default_factory=list)

    def rate(self, name: str) -> float:
        return self.messages / self.seconds[name]


def fresh_home(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def run_ingest(
    corpus: CorpusFile, sessions: int, root: Path, *, chunk_sessions: int, with_triggers: bool
) -> IngestResult:
    """Load the first ``sessions`` sessions into a fresh store and fresh plain database(s)
    under ``root``; the store is left in ``root/store`` for the other figures."""
    loaders: list[Loader] = [
        StoreLoader(fresh_home(root / "store")),
        PlainLoader(fresh_home(root / "plain")),
        BulkLoader(fresh_home(root / "bulk")),
    ]
    if with_triggers:
        loaders.append(TriggerLoader(fresh_home(root / "triggers")))
    result = IngestResult(seconds={loader.name: 0.0 for loader in loaders})
    try:
        for number, chunk in enumerate(corpus.chunks(sessions, chunk_sessions)):
            prepared = [loader.prepare(chunk) for loader in loaders]
            messages = sum(len(s.messages) for s in chunk)
            gc.collect()
            shift = number % len(loaders)
            chunk_seconds: dict[str, float] = {}
            for position in range(len(loaders)):
                index = (position + shift) % len(loaders)
                started = time.perf_counter()
                loaders[index].load(prepared[index])
                chunk_seconds[loaders[index].name] = time.perf_counter() - started
            for name, seconds in chunk_seconds.items():
                result.seconds[name] += seconds
            result.messages += messages
            result.chunk_ratios.append(chunk_seconds["plain"] / chunk_seconds["store"])
            result.store_rates.append(messages / chunk_seconds["store"])
    finally:
        for loader in loaders:
            loader.close()
    result.bulk_merge_seconds = merge_index(root / "bulk" / STATE_DB_NAME)
    for name in ("plain", "triggers", "bulk"):
        if (root / name).exists():
            shutil.rmtree(root / name)
    result.merge_seconds = merge_index(root / "store" / STATE_DB_NAME)
    return result


def merge_index(db_path: Path) -> float:
    """Merge the word index until it has no work left, in the steps the store's background
    thread takes (``fulltext.merge_step``); returns the seconds it took."""
    connection = open_connection(db_path)
    started = time.perf_counter()
    try:
        working = True
        while working:
            connection.execute("BEGIN IMMEDIATE")
            working = fulltext.merge_step(connection, 256)
            connection.execute("COMMIT")
    finally:
        connection.close()
    return time.perf_counter() - started


def build_store_untimed(corpus: CorpusFile, sessions: int, home: Path, chunk_sessions: int) -> None:
    """Build the store alone (when a figure needs it and (a) did not run)."""
    loader = StoreLoader(fresh_home(home))
    try:
        for chunk in corpus.chunks(sessions, chunk_sessions):
            loader.load(loader.prepare(chunk))
    finally:
        loader.close()
    merge_index(home / STATE_DB_NAME)


def checkpoint(db_path: Path) -> None:
    connection = sqlite3.connect(db_path, isolation_level=None)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
