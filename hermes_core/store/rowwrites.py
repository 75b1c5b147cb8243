"""SQLite's own row writes, each run inside the caller's write transaction (``db`` is a
connection that holds the write lock): inserting a batch of messages with their full-text
rows.

The writes both stores take (sessions, titles, system prompts, the rows of a message batch,
deletions) are in :mod:`.session_writes` and :mod:`.deletion`; this is what SQLite does its
own way (``last_insert_rowid``, the FTS tables).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
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
