"""Keeping the full-text indexes in step with ``messages``.

Two indexes:

* ``messages_fts`` — FTS5 with the ``unicode61`` tokenizer, *external content* (the text is
  stored once, in ``messages``) read through the ``messages_fts_source`` view: every word of
  every message, tool output included, up to ``INDEXED_CHARS`` (1 MiB) characters of each;
  the rest of a longer message is kept but not searchable (``hermes sessions stats`` counts
  such messages).
* ``messages_cjk`` — FTS5 ``trigram`` over only the CJK runs of messages (of the whole
  message, tool output included). ``unicode61`` keeps a run of CJK characters as one token,
  so a Chinese or Japanese word inside a sentence cannot be found through the word index; the
  trigram index finds 3+ character substrings, and a scan of this small table finds 1–2
  character ones (see :func:`find_cjk`). Few messages contain CJK, so it stays small (a
  trigram index over everything is 2–3× the text).

The application writes index rows itself, in the same transaction as the messages, instead of
triggers: triggers make bulk loads 2.6–3.3× slower (see DESIGN §3). Every write to
``messages`` goes through the store, which calls these functions.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Iterable, Sequence

from .errors import StoreDamaged

INDEXED_CHARS = 1 << 20
"""How much of each message is searchable (1,048,576 characters): every word of almost every
message, and a bound on what one message costs the index. Changing it needs a migration that
indexes the affected messages again (see ``schema._migrate_to_5``)."""

_CJK_RUN_PATTERN = (
    "["
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\U00020000-\U0002fa1f"  # CJK extensions
    "]+"
)


@functools.cache
def _cjk_run() -> re.Pattern[str]:
    """The compiled pattern, made on first use (compiling it costs every start ~1.5 ms)."""
    return re.compile(_CJK_RUN_PATTERN)


INDEXED_IN_PART_SQL = f"length(content) > {INDEXED_CHARS}"
"""The messages searchable only up to the cap (the predicate of the partial index
``idx_messages_indexed_in_part``, which a query must state as written here to use it)."""


def indexed_in_part(connection: sqlite3.Connection) -> int:
    """How many messages are longer than the cap: their words past it are not searchable."""
    row = connection.execute(
        f"SELECT count(*) FROM messages INDEXED BY idx_messages_indexed_in_part "
        f"WHERE {INDEXED_IN_PART_SQL}"
    ).fetchone()
    return int(row[0])


def indexed_text(content: str) -> str:
    """The part of a message the word index covers (mirrors ``messages_fts_source``)."""
    return content[:INDEXED_CHARS]


def cjk_runs(text: str) -> str | None:
    """The CJK runs of ``text`` joined by spaces, or None when it has none."""
    if text.isascii():  # most text: no scan (the regex costs ~13 µs per 1 kB message)
        return None
    runs = _cjk_run().findall(text)
    return " ".join(runs) if runs else None


def index_new_messages(
    connection: sqlite3.Connection, first_id: int, last_id: int, cjk_rows: Sequence[tuple[int, str]]
) -> None:
    """Index messages ``first_id``..``last_id`` just inserted in this transaction."""
    connection.execute(
        "INSERT INTO messages_fts(rowid, content) "
        "SELECT id, content FROM messages_fts_source WHERE id BETWEEN ? AND ?",
        (first_id, last_id),
    )
    if cjk_rows:
        connection.executemany("INSERT INTO messages_cjk(rowid, text) VALUES (?, ?)", cjk_rows)


def set_index_hash_bytes(connection: sqlite3.Connection, size: int) -> None:
    """How much memory the word index's pending terms may use before FTS5 writes them out as
    a new segment (its ``hashsize``, default 1 MiB; kept in the index's config table)."""
    connection.execute(
        "INSERT INTO messages_fts(messages_fts, rank) VALUES ('hashsize', ?)", (size,)
    )


def unindex_messages(
    connection: sqlite3.Connection, where_sql: str, params: Iterable[object]
) -> None:
    """Remove the index rows of the messages matching ``where_sql`` (on table ``messages``),
    before those messages are deleted or changed. External-content deletes must be given the
    exact text that was indexed, which the source view still returns at this point."""
    params = list(params)
    connection.execute(
        "INSERT INTO messages_fts(messages_fts, rowid, content) "
        "SELECT 'delete', id, content FROM messages_fts_source "
        f"WHERE id IN (SELECT id FROM messages WHERE {where_sql})",
        params,
    )
    connection.execute(
        f"DELETE FROM messages_cjk WHERE rowid IN (SELECT id FROM messages WHERE {where_sql})",
        params,
    )


def rebuild_cjk_index(connection: sqlite3.Connection, batch: int = 5000) -> int:
    """Refill ``messages_cjk`` from ``messages``; returns how many messages hold CJK text."""
    connection.execute("DELETE FROM messages_cjk")
    cursor = connection.execute("SELECT id, content FROM messages ORDER BY id")
    found = 0
    while rows := cursor.fetchmany(batch):
        cjk_rows = []
        for message_id, content in rows:
            runs = cjk_runs(content or "")
            if runs:
                cjk_rows.append((message_id, runs))
        if cjk_rows:
            connection.executemany("INSERT INTO messages_cjk(rowid, text) VALUES (?, ?)", cjk_rows)
            found += len(cjk_rows)
    return found


def rebuild(connection: sqlite3.Connection) -> None:
    """Rebuild both indexes from ``messages`` (for repair)."""
    connection.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    rebuild_cjk_index(connection)


def check(connection: sqlite3.Connection) -> str | None:
    """None when the word index matches ``messages``; otherwise what is wrong."""
    try:
        connection.execute(
            "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)"
        )
    except (sqlite3.DatabaseError, StoreDamaged) as error:
        return f"full-text index out of step with messages ({error.__cause__ or error})"
    return _cjk_orphans(connection)


def _cjk_orphans(connection: sqlite3.Connection) -> str | None:
    indexed = connection.execute("SELECT count(*) FROM messages_cjk").fetchone()[0]
    orphaned = connection.execute(
        "SELECT count(*) FROM messages_cjk WHERE rowid NOT IN (SELECT id FROM messages)"
    ).fetchone()[0]
    if orphaned:
        return f"CJK index holds {orphaned} of {indexed} rows for deleted messages"
    return None


def check_read_only(connection: sqlite3.Connection) -> str | None:
    """What :func:`check` can see without writing (its FTS5 ``integrity-check`` is an
    INSERT): that the word index has exactly one entry per message (its per-document size
    table), and that the CJK index holds no deleted messages. Whether each entry's words
    match the text is not seen."""
    missing = connection.execute(
        "SELECT count(*) FROM messages WHERE id NOT IN (SELECT id FROM messages_fts_docsize)"
    ).fetchone()[0]
    extra = connection.execute(
        "SELECT count(*) FROM messages_fts_docsize WHERE id NOT IN (SELECT id FROM messages)"
    ).fetchone()[0]
    if missing or extra:
        return (
            f"full-text index out of step with messages ({missing} message(s) not indexed, "
            f"{extra} entries for messages that are gone)"
        )
    return _cjk_orphans(connection)


MERGE_STEP_PAGES = 16
"""Pages of index one background merge step writes (about a millisecond of the write lock)."""


def merge_step(connection: sqlite3.Connection, pages: int = MERGE_STEP_PAGES) -> bool:
    """Merge up to ``pages`` pages of the word index's segments, in the caller's write
    transaction; returns whether there was work to do.

    The store turns FTS5's automatic merging off (``automerge = 0``, schema 5): it ran inside
    the commit of whichever write crossed a 64-page work unit and wrote 64 pages per level of
    the index there and then — 70–180 ms, one single-message append in 50 on a 1M-message
    store. The background maintenance thread does the same work in small steps instead. A
    level reaching 16 segments is still merged by the write that makes it (FTS5's
    ``crisismerge``), should the background fall behind."""
    before = connection.total_changes
    connection.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', ?)", (pages,))
    return connection.total_changes - before >= 2


def optimize(connection: sqlite3.Connection) -> None:
    """Merge every index's segments into one b-tree (smaller and faster to query)."""
    connection.execute("INSERT INTO messages_fts(messages_fts) VALUES ('optimize')")
    connection.execute("INSERT INTO messages_cjk(messages_cjk) VALUES ('optimize')")


def find_cjk(connection: sqlite3.Connection, text: str, *, limit: int = 1000) -> list[int]:
    """Ids of messages whose CJK text contains ``text``, newest first, at most ``limit``.

    Three characters or more use the trigram index. Shorter strings scan ``messages_cjk`` (a
    bounded scan: only messages holding CJK are in it) with ``instr``: on SQLite 3.40 a
    ``LIKE`` against a trigram table is handed to FTS5, which finds nothing for patterns under
    three characters.
    """
    needle = text.strip()
    if not needle:
        return []
    if len(needle) >= 3:
        quoted = '"' + needle.replace('"', '""') + '"'
        rows = connection.execute(
            "SELECT rowid FROM messages_cjk WHERE messages_cjk MATCH ? ORDER BY rowid DESC LIMIT ?",
            (quoted, limit),
        )
    else:
        rows = connection.execute(
            "SELECT rowid FROM messages_cjk WHERE instr(text, ?) > 0 ORDER BY rowid DESC LIMIT ?",
            (needle, limit),
        )
    return [row[0] for row in rows]
