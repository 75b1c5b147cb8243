"""Store writes for imported sessions, and the import bookkeeping (schema v3, SPEC D).

An import streams: the session row is created first, messages follow in batches (one write
transaction each, with their index rows and the session's counters), and the last step sets
the title, the end and the totals together with the bookkeeping row of the file. Unlike
:meth:`SessionStore.append_messages`, nothing here asks for an automatic title: an imported
session is titled by its importer.

A file being imported has a bookkeeping row in state ``importing`` from the moment its session
row exists; a crash mid-import leaves that mark, and the next import of the file deletes the
partial session before starting again (:func:`discard_partial_import`).
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hermes_hookspecs import Message, ParentKind

from . import fulltext, rowwrites, session_writes
from .connection import write_transaction
from .statements import SqliteSql

ImportState = Literal["importing", "done"]


@dataclass(frozen=True, slots=True)
class ImportFileRecord:
    """What the store remembers of one imported foreign file."""

    path: str
    importer: str
    size: int
    mtime_ns: int
    cursor: str | None
    foreign_id: str | None
    session_id: str | None
    """The session the file became; None once that session was deleted."""
    state: ImportState
    imported_at: float


_RECORD_COLUMNS = (
    "path, importer, size, mtime_ns, cursor, foreign_id, session_id, state, imported_at"
)


def load_import_files(connection: sqlite3.Connection) -> dict[str, ImportFileRecord]:
    """Every bookkeeping row by path, in one query (a re-scan of thousands of files stats them
    and looks them up here, never opening an unchanged one)."""
    rows = connection.execute(f"SELECT {_RECORD_COLUMNS} FROM import_files")
    return {row[0]: ImportFileRecord(*row) for row in rows}


def save_import_file(db: sqlite3.Connection, record: ImportFileRecord) -> None:
    """Insert or replace the bookkeeping row of ``record.path`` (inside the caller's
    transaction)."""
    db.execute(
        f"INSERT OR REPLACE INTO import_files ({_RECORD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.path,
            record.importer,
            record.size,
            record.mtime_ns,
            record.cursor,
            record.foreign_id,
            record.session_id,
            record.state,
            record.imported_at,
        ),
    )


def update_import_file(connection: sqlite3.Connection, record: ImportFileRecord) -> None:
    """:func:`save_import_file` in its own transaction; an append in progress on that file
    (:func:`mark_append`) is over."""
    with write_transaction(connection) as db:
        save_import_file(db, record)
        db.execute("DELETE FROM state_meta WHERE key = ?", (_APPEND_KEY + record.path,))


APPEND_MARK_PREFIX = "import_append:"
"""``state_meta`` keys of unfinished appends start so (the value: JSON ``session_id``,
``last_id`` — the last message kept)."""
_APPEND_KEY = APPEND_MARK_PREFIX


def mark_append(
    connection: sqlite3.Connection, path: str, session_id: str, last_kept_id: int
) -> None:
    """Note, before appending a grown file's new turns, where the session ended: if the
    process dies before the file's bookkeeping moves on, the next import undoes the partial
    append (:func:`pending_appends`, :func:`discard_messages_after`)."""
    with write_transaction(connection) as db:
        db.execute(
            "INSERT OR REPLACE INTO state_meta(key, value) VALUES (?, ?)",
            (_APPEND_KEY + path, json.dumps({"session_id": session_id, "last_id": last_kept_id})),
        )


def pending_appends(connection: sqlite3.Connection) -> dict[str, tuple[str, int]]:
    """Appends that never finished: path → (session id, last message id kept)."""
    found: dict[str, tuple[str, int]] = {}
    rows = connection.execute(
        "SELECT key, value FROM state_meta WHERE key >= ? AND key < ?",
        (_APPEND_KEY, _APPEND_KEY[:-1] + chr(ord(":") + 1)),
    )
    for key, value in rows:
        try:
            mark = json.loads(value)
            found[key[len(_APPEND_KEY) :]] = (str(mark["session_id"]), int(mark["last_id"]))
        except (ValueError, KeyError, TypeError):
            continue
    return found


def undo_pending_append(
    connection: sqlite3.Connection, path: str, session_id: str, last_id: int
) -> int:
    """Remove what an unfinished append left (see :func:`mark_append`); returns the number of
    messages removed."""
    removed = discard_messages_after(connection, session_id, last_id)
    with write_transaction(connection) as db:
        db.execute("DELETE FROM state_meta WHERE key = ?", (_APPEND_KEY + path,))
    return removed


def session_of_foreign_id(
    connection: sqlite3.Connection, importer: str, foreign_id: str
) -> str | None:
    """The session a foreign session became when some file imported it, else None."""
    found = import_of_foreign_id(connection, importer, foreign_id)
    return None if found is None else found[0]


def import_of_foreign_id(
    connection: sqlite3.Connection, importer: str, foreign_id: str
) -> tuple[str, str] | None:
    """(session id, path) of the first file that imported the foreign session, if its
    session still exists (deleting a session sets ``import_files.session_id`` to NULL)."""
    row = connection.execute(
        "SELECT session_id, path FROM import_files WHERE importer = ? AND foreign_id = ? "
        "AND session_id IS NOT NULL AND state = 'done' ORDER BY imported_at LIMIT 1",
        (importer, foreign_id),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def delegate_of_foreign_id(
    connection: sqlite3.Connection, parent_session_id: str, foreign_id: str
) -> str | None:
    """The delegate child of ``parent_session_id`` imported from ``foreign_id``, if any."""
    row = connection.execute(
        "SELECT id FROM sessions WHERE parent_session_id = ? AND parent_kind = 'delegate' "
        "AND json_extract(metadata, '$.imported_from.foreign_id') = ? LIMIT 1",
        (parent_session_id, foreign_id),
    ).fetchone()
    return None if row is None else str(row[0])


def create_imported_session(
    connection: sqlite3.Connection,
    *,
    source: str,
    started_at: float,
    session_id: str | None = None,
    parent_session_id: str | None = None,
    parent_kind: ParentKind | None = None,
    metadata: Mapping[str, Any] | None = None,
    model_config: Mapping[str, Any] | None = None,
    system_prompt: str | None = None,
    fields: Mapping[str, Any] | None = None,
    bookkeeping: ImportFileRecord | None = None,
) -> str:
    """Create the (still untitled) row of an imported session and, with it, the file's
    bookkeeping row in state ``importing``; returns the session id. ``session_id`` keeps a
    given id (backup restores); otherwise one is drawn from ``started_at``."""
    with write_transaction(connection) as db:
        created = session_writes.insert_session(
            SqliteSql(db),
            source=source,
            session_id=session_id,
            gateway=False,
            started=started_at,
            title=None,
            system_prompt=system_prompt,
            model_config=model_config,
            metadata=metadata,
            parent_session_id=parent_session_id,
            parent_kind=parent_kind,
            fields=dict(fields or {}),
        )
        if bookkeeping is not None:
            save_import_file(
                db,
                dataclasses.replace(bookkeeping, session_id=created, state="importing"),
            )
    return created


def append_imported_messages(
    connection: sqlite3.Connection,
    session_id: str,
    batch: Sequence[Message],
    *,
    default_timestamp: float,
) -> int:
    """Append one batch of messages with their own timestamps (one transaction, counters
    included); returns how many were written."""
    if not batch:
        return 0
    with write_transaction(connection) as db:
        inserted = rowwrites.insert_messages(db, session_id, batch, default_timestamp)
        db.execute(
            "UPDATE sessions SET message_count = message_count + ?, "
            "tool_call_count = tool_call_count + ?, "
            "last_active_at = max(last_active_at, ?) WHERE id = ?",
            (len(batch), inserted.tool_calls, inserted.last_timestamp, session_id),
        )
    return len(batch)


@dataclass(frozen=True, slots=True)
class ImportedTotals:
    """What is known of an imported session once its messages are stored."""

    title_proposal: str | None
    ended_at: float | None
    end_reason: str | None
    input_tokens: int = 0
    """Added to the session's totals (an append adds the new turns' usage)."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cwd: str | None = None
    git_branch: str | None = None
    model: str | None = None
    started_at: float | None = None
    """An earlier start than the one the row was created with (known only at the end)."""
    metadata_updates: Mapping[str, Any] | None = None
    """Merged into ``metadata.imported_from``."""


def finish_imported_session(
    connection: sqlite3.Connection,
    session_id: str,
    totals: ImportedTotals,
    *,
    title_source: str = "import",
    bookkeeping: ImportFileRecord | None = None,
) -> str | None:
    """Title (made unique; an existing title is kept), end, totals and workspace of an
    imported session, with its file's final bookkeeping row, in one transaction. Returns the
    session's title."""
    with write_transaction(connection) as db:
        row = db.execute(
            "SELECT title, metadata FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            return None
        title: str | None = row[0]
        if title is None and totals.title_proposal:
            title = session_writes.unique_title(SqliteSql(db), totals.title_proposal, session_id)
            if title is not None:
                session_writes.write_title(SqliteSql(db), session_id, title, title_source)
        metadata = json.loads(row[1]) if row[1] else {}
        if totals.metadata_updates:
            provenance = dict(metadata.get("imported_from") or {})
            provenance.update(totals.metadata_updates)
            metadata["imported_from"] = provenance
        db.execute(
            "UPDATE sessions SET started_at = min(started_at, coalesce(?, started_at)), "
            "ended_at = CASE WHEN ? IS NULL THEN ended_at "
            "  ELSE max(coalesce(ended_at, ?), ?) END, "
            "end_reason = coalesce(?, end_reason), "
            "last_active_at = max(last_active_at, coalesce(?, last_active_at)), "
            "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
            "cache_read_tokens = cache_read_tokens + ?, "
            "cache_write_tokens = cache_write_tokens + ?, "
            "cwd = coalesce(cwd, ?), git_branch = coalesce(?, git_branch), "
            "model = coalesce(?, model), metadata = ? WHERE id = ?",
            (
                totals.started_at,
                totals.ended_at,
                totals.ended_at,
                totals.ended_at,
                totals.end_reason,
                totals.ended_at,
                totals.input_tokens,
                totals.output_tokens,
                totals.cache_read_tokens,
                totals.cache_write_tokens,
                totals.cwd,
                totals.git_branch,
                totals.model,
                json.dumps(metadata) if metadata else None,
                session_id,
            ),
        )
        if bookkeeping is not None:
            save_import_file(db, bookkeeping)
    return title


def discard_partial_import(connection: sqlite3.Connection, record: ImportFileRecord) -> int:
    """Delete what an interrupted import of ``record.path`` left behind (its session and that
    session's delegates) and forget the file; returns how many sessions were deleted."""
    with write_transaction(connection) as db:
        deleted = 0
        if record.session_id is not None and session_writes.session_exists(
            SqliteSql(db), record.session_id
        ):
            doomed = rowwrites.with_delegates(db, [record.session_id])
            deleted = rowwrites.delete_sessions(db, doomed)
        db.execute("DELETE FROM import_files WHERE path = ?", (record.path,))
    return deleted


def last_message_id(connection: sqlite3.Connection, session_id: str, back: int = 0) -> int:
    """The id of the session's newest message, or of the one ``back`` places before it (0
    when there is none)."""
    if back == 0:
        row = connection.execute(
            "SELECT coalesce(max(id), 0) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()
        return int(row[0])
    row = connection.execute(
        "SELECT id FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
        (session_id, back),
    ).fetchone()
    return int(row[0]) if row else 0


def discard_messages_after(
    connection: sqlite3.Connection,
    session_id: str,
    last_kept_id: int,
    up_to_id: int | None = None,
) -> int:
    """Delete the session's messages newer than ``last_kept_id`` (up to ``up_to_id`` when
    given), with their index rows, and recount its counters: an append that failed half-way
    undone, or messages read again replaced. Returns how many messages went."""
    where = "session_id = ? AND id > ?"
    params: list[object] = [session_id, last_kept_id]
    if up_to_id is not None:
        where += " AND id <= ?"
        params.append(up_to_id)
    with write_transaction(connection) as db:
        fulltext.unindex_messages(db, where, params)
        removed = db.execute(f"DELETE FROM messages WHERE {where}", params)
        db.execute(
            "UPDATE sessions SET "
            "message_count = (SELECT count(*) FROM messages WHERE session_id = sessions.id), "
            "tool_call_count = (SELECT coalesce(sum(json_array_length(tool_calls)), 0) "
            "  FROM messages WHERE session_id = sessions.id AND tool_calls IS NOT NULL) "
            "WHERE id = ?",
            (session_id,),
        )
    return removed.rowcount


@dataclass(frozen=True, slots=True)
class WholeSession:
    """A finished conversation stored in one go by :func:`write_whole_sessions` (bulk loads:
    a whole history, a copy of another store)."""

    source: str
    started_at: float
    messages: Sequence[Message]
    title: str | None = None
    """A title as a person gives it: checked and refused when used elsewhere (S4)."""
    fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Other session columns, as ``create_session`` takes them (``model``, ``cwd``,
    ``ended_at``, ``end_reason``…: ``validation.CREATABLE_FIELDS``)."""
    metadata: Mapping[str, Any] | None = None


BULK_BATCH_MESSAGES = 5_000
"""Messages per transaction of :func:`write_whole_sessions` (whole sessions, never split)."""
BULK_BATCH_CHARS = 16 << 20
"""Characters of text per transaction, whichever of the two limits comes first."""
BULK_INDEX_HASH_BYTES = 64 << 20
"""The word index's pending-terms memory during a bulk transaction (FTS5 ``hashsize``; the
default, 1 MiB, flushes a new small segment to disk every ~1 MB of text, which later merges
must rewrite). Set within each bulk transaction and put back before it commits."""
_DEFAULT_INDEX_HASH_BYTES = 1 << 20


def write_whole_sessions(
    connection: sqlite3.Connection, sessions: Iterable[WholeSession]
) -> list[str]:
    """Store finished sessions with their messages; returns their new ids, in order.

    The bulk path: sessions go in transactions of up to :data:`BULK_BATCH_MESSAGES` messages
    (or :data:`BULK_BATCH_CHARS` of text), each holding whole sessions — their rows, their
    messages with one ``executemany``, and one word-index insert for the whole batch. A crash
    leaves every session of a batch or none of it. Nothing is announced (no
    ``session_started``/``session_ended``, no automatic title): these are records, as imports
    are. A session that cannot be stored (a bad message, a title in use) raises; the
    sessions of its batch are not written, those of earlier batches are."""
    written: list[str] = []
    batch: list[WholeSession] = []
    messages = chars = 0
    for session in sessions:
        size = sum(len(m.content) for m in session.messages if isinstance(m.content, str))
        if batch and (
            messages + len(session.messages) > BULK_BATCH_MESSAGES
            or chars + size > BULK_BATCH_CHARS
        ):
            written.extend(_write_batch(connection, batch))
            batch, messages, chars = [], 0, 0
        batch.append(session)
        messages += len(session.messages)
        chars += size
    if batch:
        written.extend(_write_batch(connection, batch))
    return written


def _write_batch(connection: sqlite3.Connection, batch: Sequence[WholeSession]) -> list[str]:
    ids: list[str] = []
    with write_transaction(connection) as db:
        first_message: int | None = None
        last_message = 0
        cjk_rows: list[tuple[int, str]] = []
        for session in batch:
            session_id = session_writes.insert_session(
                SqliteSql(db),
                source=session.source,
                session_id=None,
                gateway=False,
                started=session.started_at,
                title=session.title,
                system_prompt=None,
                model_config=None,
                metadata=session.metadata,
                parent_session_id=None,
                parent_kind=None,
                fields=dict(session.fields),
            )
            inserted = rowwrites.insert_messages(
                db, session_id, session.messages, session.started_at, index=False
            )
            if inserted.ids:
                if first_message is None:
                    first_message = inserted.ids.start
                last_message = inserted.ids.stop - 1
                cjk_rows.extend(inserted.cjk_rows)
                db.execute(
                    "UPDATE sessions SET message_count = ?, tool_call_count = ?, "
                    "last_active_at = max(last_active_at, ?) WHERE id = ?",
                    (len(inserted.ids), inserted.tool_calls, inserted.last_timestamp, session_id),
                )
            ids.append(session_id)
        if first_message is not None:
            # One writer holds the lock: the batch's messages are the ids first..last.
            fulltext.set_index_hash_bytes(db, BULK_INDEX_HASH_BYTES)
            fulltext.index_new_messages(db, first_message, last_message, cjk_rows)
            fulltext.set_index_hash_bytes(db, _DEFAULT_INDEX_HASH_BYTES)
    return ids
