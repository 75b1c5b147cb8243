"""Store writes for importing another tool's whole database (a Hermes Agent ``state.db``).

Such a file holds many sessions and changes in place, so its import is keyed per session, not
per file: every session keeps ``metadata.imported_from`` (tool, path, foreign id, the time of
the run that created it, and ``seen``, a fingerprint of the foreign row's totals), which maps
a foreign session to the session it became even when its id was taken here and it got a new
one. The engine in :mod:`hermes_core.importing.databases` reaches these functions through
:class:`~hermes_core.store.import_bookkeeping.SqliteImportBookkeeping`; the rest of the import
writes (creating sessions, appending messages, the file's bookkeeping row) are shared with log
imports in :mod:`.imports`, and routing rows go through :mod:`.routing`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_hookspecs import ParentKind

from . import rowwrites
from .connection import write_transaction
from .imports import pending_appends, undo_pending_append

REFRESHABLE_FIELDS = frozenset({
    "ended_at", "end_reason", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "cost_actual_usd", "cost_estimated_usd", "billing_provider",
})  # fmt: skip
"""Columns a later read of the foreign database may bring up to date (its session ended,
used more tokens); titles, pins and the archive flag stay as the person left them here."""


@dataclass(frozen=True, slots=True)
class ImportedEntry:
    """A session this store holds from a foreign database."""

    session_id: str
    seen: str | None
    """The fingerprint of the foreign row when it was last read."""


def imported_sessions(connection: sqlite3.Connection, tool: str) -> dict[str, ImportedEntry]:
    """Foreign session id → the session it became, for every session imported by ``tool``
    (one scan: a re-import of a store with thousands of sessions looks them up here)."""
    rows = connection.execute(
        "SELECT id, json_extract(metadata, '$.imported_from.foreign_id'), "
        "json_extract(metadata, '$.imported_from.seen') FROM sessions "
        "WHERE metadata IS NOT NULL AND json_extract(metadata, '$.imported_from.tool') = ?",
        (tool,),
    )
    return {
        str(foreign): ImportedEntry(str(session_id), None if seen is None else str(seen))
        for session_id, foreign, seen in rows
        if foreign is not None
    }


def message_texts(connection: sqlite3.Connection, session_id: str) -> list[tuple[str, str]]:
    """(role, content) of every message of a session, in order: what an import compares
    with a foreign session carrying the same id."""
    rows = connection.execute(
        "SELECT role, content FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
    )
    return [(str(role), str(content or "")) for role, content in rows]


def refresh_imported_session(
    connection: sqlite3.Connection,
    session_id: str,
    fields: Mapping[str, Any],
    *,
    seen: str,
    last_active_at: float | None = None,
) -> None:
    """Bring an imported session's totals and end up to date with the foreign row (only
    :data:`REFRESHABLE_FIELDS`) and remember the fingerprint ``seen``, in one transaction."""
    unknown = set(fields) - REFRESHABLE_FIELDS
    if unknown:
        raise TypeError(f"not refreshable: {', '.join(sorted(unknown))}")
    with write_transaction(connection) as db:
        row = db.execute("SELECT metadata FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            return
        metadata = json.loads(row[0]) if row[0] else {}
        provenance = dict(metadata.get("imported_from") or {})
        provenance["seen"] = seen
        metadata["imported_from"] = provenance
        assignments = [f"{name} = ?" for name in fields]
        values: list[Any] = list(fields.values())
        assignments.append("last_active_at = max(last_active_at, coalesce(?, last_active_at))")
        values.append(last_active_at)
        assignments.append("metadata = ?")
        values.append(json.dumps(metadata))
        db.execute(
            f"UPDATE sessions SET {', '.join(assignments)} WHERE id = ?", [*values, session_id]
        )


def link_parent(
    connection: sqlite3.Connection, session_id: str, parent_id: str, kind: ParentKind
) -> None:
    """Attach ``session_id`` to ``parent_id`` (a parent imported after its child)."""
    with write_transaction(connection) as db:
        db.execute(
            "UPDATE sessions SET parent_session_id = ?, parent_kind = ? WHERE id = ?",
            (parent_id, kind, session_id),
        )


def append_mark_key(path_key: str, session_id: str) -> str:
    """The key under which an append to one session of a database import is marked (see
    :func:`hermes_core.store.imports.mark_append`)."""
    return f"{path_key}#{session_id}"


def clear_append_marks(connection: sqlite3.Connection, path_key: str) -> None:
    """The appends of the last database import of ``path_key`` are kept: drop their marks."""
    prefix = "import_append:" + path_key + "#"
    with write_transaction(connection) as db:
        db.execute(
            "DELETE FROM state_meta WHERE key >= ? AND key < ?",
            (prefix, prefix[:-1] + chr(ord("#") + 1)),
        )


def forget_import_file(connection: sqlite3.Connection, path_key: str) -> None:
    """Drop the bookkeeping row of ``path_key`` (a first import that was undone)."""
    with write_transaction(connection) as db:
        db.execute("DELETE FROM import_files WHERE path = ?", (path_key,))


def discard_interrupted_run(
    connection: sqlite3.Connection, path_key: str, tool: str, run_started: float
) -> int:
    """Undo what a database import of ``path_key`` that died half-way wrote: the sessions it
    created (stamped with its start time) and its unfinished appends. Returns how many
    sessions were deleted; the next run reads the same part of the database again."""
    for mark_key, (session_id, last_id) in pending_appends(connection).items():
        if mark_key.startswith(path_key + "#"):
            undo_pending_append(connection, mark_key, session_id, last_id)
    with write_transaction(connection) as db:
        doomed = [
            str(row[0])
            for row in db.execute(
                "SELECT id FROM sessions WHERE metadata IS NOT NULL "
                "AND json_extract(metadata, '$.imported_from.tool') = ? "
                "AND json_extract(metadata, '$.imported_from.path') = ? "
                "AND json_extract(metadata, '$.imported_from.imported_at') = ?",
                (tool, path_key, run_started),
            )
        ]
        return rowwrites.delete_sessions(db, doomed) if doomed else 0
