"""SQLite's own row writes, each run inside the caller's write transaction (``db`` is a
connection that holds the write lock): inserting a batch of messages with their full-text
rows, finding a deletion's delegates, deleting sessions with their index rows.

The writes both stores take (sessions, titles, system prompts, the rows of a message batch)
are in :mod:`.session_writes`; these are what SQLite does its own way (``last_insert_rowid``,
the FTS tables, ``IN (…)`` lists in chunks).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from hermes_hookspecs import Message

from . import fulltext
from .session_writes import message_rows


def insert_messages(
    db: sqlite3.Connection,
    session_id: str,
    messages: Iterable[Message],
    default_timestamp: float,
    *,
    index: bool = True,
) -> InsertedMessages:
    """Insert messages with their index rows (a message without a timestamp gets
    ``default_timestamp``). Session counters are the caller's business. With ``index=False``
    the index rows are left to the caller, who writes them for a whole batch of sessions in
    the same transaction (:func:`fulltext.index_new_messages` over the batch's ids, with the
    returned ``cjk_rows``)."""
    built = message_rows(session_id, messages, default_timestamp)
    rows = built.rows
    if not rows:
        return InsertedMessages(range(0), 0, False, None, [])
    db.executemany(
        "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, "
        "tool_name, reasoning, timestamp, token_count, platform_message_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    # One writer holds the lock, so the new ids are the consecutive ones ending here.
    last_id: int = db.execute("SELECT last_insert_rowid()").fetchone()[0]
    first_id = last_id - len(rows) + 1
    cjk_texts = (fulltext.cjk_runs(row[2]) for row in rows)
    cjk_rows = [(first_id + i, text) for i, text in enumerate(cjk_texts) if text]
    if index:
        fulltext.index_new_messages(db, first_id, last_id, cjk_rows)
    return InsertedMessages(
        range(first_id, last_id + 1),
        built.tool_calls,
        built.has_assistant,
        built.last_timestamp,
        cjk_rows,
    )


class InsertedMessages(NamedTuple):
    """What :func:`insert_messages` wrote."""

    ids: range
    tool_calls: int
    has_assistant: bool
    last_timestamp: float | None
    cjk_rows: list[tuple[int, str]]
    """(message id, CJK runs) of the messages holding CJK text (see ``index``)."""


def with_delegates(db: sqlite3.Connection, session_ids: Sequence[str]) -> list[str]:
    """``session_ids`` plus every delegate/subagent session working for them, recursively."""
    found = list(dict.fromkeys(session_ids))
    frontier = list(found)
    while frontier:
        marks = ",".join("?" for _ in frontier)
        children = [
            row[0]
            for row in db.execute(
                f"SELECT id FROM sessions WHERE parent_kind = 'delegate' "
                f"AND parent_session_id IN ({marks})",
                frontier,
            )
        ]
        frontier = [c for c in children if c not in found]
        found.extend(frontier)
    return found


def delete_sessions(db: sqlite3.Connection, session_ids: Sequence[str]) -> int:
    """Delete sessions with their messages and index rows; children that are not deleted
    lose their parent link (and its kind). Returns how many sessions were deleted."""
    total = 0
    for start in range(0, len(session_ids), 500):
        chunk = list(session_ids[start : start + 500])
        marks = ",".join("?" for _ in chunk)
        fulltext.unindex_messages(db, f"session_id IN ({marks})", chunk)
        db.execute(
            f"UPDATE sessions SET parent_session_id = NULL, parent_kind = NULL "
            f"WHERE parent_session_id IN ({marks}) AND id NOT IN ({marks})",
            chunk + chunk,
        )
        db.execute(f"DELETE FROM messages WHERE session_id IN ({marks})", chunk)
        total += db.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk).rowcount
    db.execute(
        "DELETE FROM system_prompts WHERE hash NOT IN "
        "(SELECT system_prompt_hash FROM sessions WHERE system_prompt_hash IS NOT NULL)"
    )
    return total
