"""Store-wide services: counts for ``stats``, ``optimize`` and ``repair``."""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from . import fulltext
from .connection import write_transaction
from .failures import store_error


@dataclass(frozen=True, slots=True)
class StoreStats:
    """What ``hermes sessions stats`` prints."""

    total_sessions: int
    total_messages: int
    sessions_by_source: list[tuple[str, int]]
    database_bytes: int
    active_sessions: int
    pinned_sessions: int
    archived_sessions: int
    indexed_in_part: int = 0
    """Messages longer than the full-text cap (``INDEXED_CHARS``): kept whole, searchable
    only up to the cap."""


def file_bytes(path: Path) -> int:
    """The store's size on disk, its write-ahead log included."""
    total = 0
    for candidate in (path, path.with_name(path.name + "-wal")):
        with contextlib.suppress(FileNotFoundError):
            total += candidate.stat().st_size
    return total


def collect_stats(connection: sqlite3.Connection, path: Path) -> StoreStats:
    totals = connection.execute(
        "SELECT count(*), coalesce(sum(message_count), 0), "
        "coalesce(sum(ended_at IS NULL), 0), coalesce(sum(pinned), 0), coalesce(sum(archived), 0) "
        "FROM sessions"
    ).fetchone()
    by_source = connection.execute(
        "SELECT source, count(*) FROM sessions GROUP BY source ORDER BY count(*) DESC, source"
    ).fetchall()
    return StoreStats(
        total_sessions=totals[0],
        total_messages=totals[1],
        sessions_by_source=[(row[0], row[1]) for row in by_source],
        database_bytes=file_bytes(path),
        active_sessions=totals[2],
        pinned_sessions=totals[3],
        archived_sessions=totals[4],
        indexed_in_part=fulltext.indexed_in_part(connection),
    )


@dataclass(frozen=True, slots=True)
class SizeSplit:
    """Where the store's pages go: messages, the full-text indexes, everything else."""

    messages_bytes: int
    """The ``messages`` table and its index."""
    fulltext_bytes: int
    """``messages_fts`` and ``messages_cjk`` with their shadow tables."""
    other_bytes: int
    """Sessions, system prompts, routing, free pages…"""
    measured: bool
    """True when counted from the store's own page or relation sizes; False when estimated from
    text lengths."""
    how: str = ""
    """How the split was made, as ``hermes sessions stats`` says it (``counted with dbstat``,
    ``sizes of PostgreSQL's relations``…)."""


_ESTIMATED = "estimated: dbstat is not available"
_MESSAGE_OBJECTS = ("messages", "idx_messages_session")
_FULLTEXT_PREFIXES = ("messages_fts", "messages_cjk")


def size_split(connection: sqlite3.Connection) -> SizeSplit:
    """Split the database file (not its write-ahead log) by what the pages hold.

    With SQLite's ``dbstat`` virtual table the pages of each table and index are counted
    (page counts times the page size: ``sum(pgsize)`` overflows past 2 GiB on SQLite 3.40).
    Without it, the sizes are estimated from the stored text and index blocks.
    """
    page_size: int = connection.execute("PRAGMA page_size").fetchone()[0]
    page_count: int = connection.execute("PRAGMA page_count").fetchone()[0]
    total = page_size * page_count
    try:
        rows = connection.execute("SELECT name, count(*) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.OperationalError:
        rows = None
    if rows is not None:
        pages = {str(name): int(count) for name, count in rows}
        messages = sum(pages.get(name, 0) for name in _MESSAGE_OBJECTS) * page_size
        fulltext = sum(n for name, n in pages.items() if name.startswith(_FULLTEXT_PREFIXES))
        fulltext *= page_size
        return SizeSplit(
            messages, fulltext, max(0, total - messages - fulltext), True, "counted with dbstat"
        )
    # Estimate: the payload bytes of each part, then the file's pages shared out in proportion
    # (free pages and page slack are spread over all three).
    messages = connection.execute(
        "SELECT coalesce(sum(length(CAST(content AS BLOB)) + coalesce(length(tool_calls), 0) "
        "+ coalesce(length(reasoning), 0) + 40), 0) FROM messages"
    ).fetchone()[0]
    fulltext = 0
    for table in ("messages_fts_data", "messages_cjk_data", "messages_cjk_content"):
        fulltext += connection.execute(
            f"SELECT coalesce(sum(length(CAST(coalesce({_payload(table)}, '') AS BLOB))), 0) "
            f"FROM {table}"
        ).fetchone()[0]
    other = connection.execute(
        "SELECT coalesce(sum(length(id) + coalesce(length(title), 0) + coalesce(length(cwd), 0) "
        "+ coalesce(length(model_config), 0) + coalesce(length(metadata), 0) + 200), 0) "
        "FROM sessions"
    ).fetchone()[0]
    other += connection.execute(
        "SELECT coalesce(sum(length(prompt) + 64), 0) FROM system_prompts"
    ).fetchone()[0]
    payload = messages + fulltext + other
    if not payload:
        return SizeSplit(0, 0, total, False, _ESTIMATED)
    messages_share = round(total * messages / payload)
    fulltext_share = round(total * fulltext / payload)
    return SizeSplit(
        messages_share,
        fulltext_share,
        max(0, total - messages_share - fulltext_share),
        False,
        _ESTIMATED,
    )


def _payload(table: str) -> str:
    """The column holding a shadow table's bytes."""
    return "block" if table.endswith("_data") else "c0"


def optimize(connection: sqlite3.Connection, path: Path) -> tuple[int, int]:
    """Merge full-text index segments, checkpoint and VACUUM. Touches no session data.
    Returns the size on disk before and after."""
    before = file_bytes(path)
    with write_transaction(connection):
        fulltext.optimize(connection)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.execute("VACUUM")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return before, file_bytes(path)


@dataclass
class RepairReport:
    """What a backend's own ``repair`` found and did (the PostgreSQL store's; a SQLite store
    is repaired by :mod:`.repair`)."""

    problems: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    backup: Path | None = None
    healthy_after: bool = True


def backup_copy(connection: sqlite3.Connection, target: Path) -> Path:
    """Copy the store through SQLite's online backup API into ``target`` (a new file, mode
    0600) and return it. Never a file copy: this process holds the store open, and closing a
    descriptor of its file would drop the process's locks on it (DESIGN §9); the backup API
    also sees what is still in the write-ahead log. All pages in one step: one read
    transaction, which writers do not wait for (a copy in steps would start over each time
    another process writes). A copy that fails (a full disk) is removed and raised as the
    store's error."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(descriptor)
    except OSError as error:
        raise store_error(error, target) from error
    try:
        destination = sqlite3.connect(target)
        try:
            connection.backup(destination, pages=-1)
        finally:
            destination.close()
    except BaseException as error:
        target.unlink(missing_ok=True)
        if isinstance(error, sqlite3.Error | OSError):
            raise store_error(error, target) from error
        raise
    return target


def backup_files(connection: sqlite3.Connection, path: Path) -> Path:
    """Back the store up next to itself, named with the time; returns the copy's path."""
    stamp = _dt.datetime.now().strftime("%Y%m%d_%H%M%S")
    target = path.with_name(f"{path.name}.backup-{stamp}")
    suffix = 1
    while target.exists():
        suffix += 1
        target = path.with_name(f"{path.name}.backup-{stamp}-{suffix}")
    return backup_copy(connection, target)
