"""What imports store (schema v3, SPEC D): the bookkeeping row of an imported file
(:class:`ImportFileRecord`), what is known of an imported session once its messages are in
(:class:`ImportedTotals`), and SQLite's bulk path for finished sessions
(:func:`write_whole_sessions`).

The import writes and bookkeeping themselves are written once for every backend in
:class:`.import_rows.ImportRows`. Unlike :meth:`SessionStore.append_messages`, nothing there
asks for an automatic title: an imported session is titled by its importer.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hermes_hookspecs import Message

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


def load_import_files(connection: sqlite3.Connection) -> dict[str, ImportFileRecord]:
    """Every bookkeeping row of a SQLite store by path (see
    :func:`.import_rows.load_import_files`)."""
    from .import_rows import load_import_files as load

    return load(SqliteSql(connection))


APPEND_MARK_PREFIX = "import_append:"
"""``state_meta`` keys of unfinished appends start so (the value: JSON ``session_id``,
``last_id`` — the last message kept)."""


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
