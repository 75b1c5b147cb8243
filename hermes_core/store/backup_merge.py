"""Adding to a salvaged store what a rolling backup holds of what the damage took.

The salvage is newer than any backup (it has what came after it), the backup whole where the
damage struck. :func:`merge` keeps every salvaged row and adds from the backup, by id:

* a session the salvage lacks, when the damaged file still showed a trace of it (it was lost
  to the damage) — or, when the file's record of its sessions was itself lost, any session
  the backup has (whether it was deleted since the backup cannot be told; keeping it loses
  nothing) — with its messages and its system prompt;
* for a session whose row the salvage had to rebuild from indexes, the backup's full row
  (origin, model, times, costs…) in place of the rebuilt one;
* the messages of kept sessions that the salvage lacks, on the same terms (messages are never
  deleted one by one, only with their session); a message id the salvage already uses for
  another message stays the salvage's;
* ``state_meta`` keys, routing rows and import records the salvage lacks (a link to a session
  that is not kept is cleared);
* gateway inbox rows (messages acknowledged, not turned yet) the salvage lacks, by session key
  and message id, with ids of the salvage's numbering; one whose turn the salvage holds is
  harmless (the gateway finds it stored and drops it). The rows' claims are not merged.

Then every session's counters are recomputed and the full-text indexes rebuilt.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from . import counters, fulltext
from .connection import read_only_uri, write_transaction
from .failures import store_error
from .inbox import CLAIM_PREFIX
from .salvage import (
    IMPORT_COLUMNS,
    INBOX_COLUMNS,
    MESSAGE_COLUMNS,
    ROUTING_COLUMNS,
    SESSION_COLUMNS,
    STATE_COLUMNS,
    Trace,
)

_REBUILT = "json_valid(s.metadata) AND json_extract(s.metadata, '$.repair') IS NOT NULL"


def merge(connection: sqlite3.Connection, backup: Path, trace: Trace) -> tuple[int, int]:
    """Add to the store on ``connection`` (the salvage) what ``backup`` holds that the
    damage took (see the module doc); returns (sessions, messages) added."""
    connection.execute("PRAGMA foreign_keys = OFF")
    try:
        connection.execute("ATTACH DATABASE ? AS backup", (read_only_uri(backup, immutable=True),))
    except sqlite3.Error as error:
        connection.execute("PRAGMA foreign_keys = ON")
        raise store_error(error, backup) from error
    try:
        with write_transaction(connection) as db:
            _load_trace(db, trace)
            sessions = _add_sessions(db, trace)
            messages = _add_messages(db, trace)
            _add_other_rows(db)
            _clear_lost_links(db)
            counters.recount(db)
            fulltext.rebuild(db)
            dangling = db.execute("PRAGMA main.foreign_key_check").fetchall()
            if dangling:
                raise RuntimeError(f"merge left {len(dangling)} dangling references")
    except sqlite3.Error as error:
        raise store_error(error, backup) from error
    finally:
        with contextlib.suppress(sqlite3.Error):
            connection.execute("DETACH DATABASE backup")
        connection.execute("PRAGMA foreign_keys = ON")
    return sessions, messages


def _load_trace(db: sqlite3.Connection, trace: Trace) -> None:
    db.execute("CREATE TEMP TABLE traced_sessions (id TEXT PRIMARY KEY)")
    db.execute("CREATE TEMP TABLE traced_messages (id INTEGER PRIMARY KEY)")
    db.executemany("INSERT INTO traced_sessions VALUES (?)", [(i,) for i in trace.session_ids])
    db.executemany("INSERT INTO traced_messages VALUES (?)", [(i,) for i in trace.message_ids])


def _wanted(trace_complete: bool, table: str, column: str) -> str:
    """SQL: the row of the backup was lost to the damage (or cannot be told apart)."""
    if not trace_complete:
        return "1"
    return f"{column} IN (SELECT id FROM temp.{table})"


def _backup_column(name: str, present: set[str]) -> str:
    """The backup's value of a session column; a column a backup of an older schema lacks
    (they were added with default 0) reads as that default."""
    return f"b.{name}" if name in present else "0"


def _add_sessions(db: sqlite3.Connection, trace: Trace) -> int:
    names = ", ".join(SESSION_COLUMNS)
    present = {str(row[1]) for row in db.execute("PRAGMA backup.table_info(sessions)")}
    picked = ", ".join(
        "CASE WHEN b.title IN (SELECT title FROM main.sessions WHERE title IS NOT NULL) "
        "THEN NULL ELSE b.title END"
        if name == "title"
        else _backup_column(name, present)
        for name in SESSION_COLUMNS
    )
    wanted = _wanted(trace.sessions_complete, "traced_sessions", "b.id")
    added = db.execute(
        f"INSERT INTO main.sessions ({names}) SELECT {picked} FROM backup.sessions b "
        f"WHERE b.id NOT IN (SELECT id FROM main.sessions) AND {wanted}"
    ).rowcount
    # Rows the salvage rebuilt from indexes: the backup's row says more.
    rebuilt = [
        row[0]
        for row in db.execute(
            f"SELECT s.id FROM main.sessions s WHERE {_REBUILT} "
            "AND s.id IN (SELECT id FROM backup.sessions)"
        )
    ]
    for session_id in rebuilt:
        columns = [name for name in SESSION_COLUMNS if name not in ("id", "title")]
        assignments = ", ".join(f"{name} = {_backup_column(name, present)}" for name in columns)
        db.execute(
            f"UPDATE main.sessions AS s SET {assignments} FROM backup.sessions AS b "
            "WHERE s.id = ? AND b.id = s.id",
            (session_id,),
        )
    db.execute(
        "INSERT OR IGNORE INTO main.system_prompts (hash, prompt) "
        "SELECT hash, prompt FROM backup.system_prompts "
        "WHERE hash IN (SELECT system_prompt_hash FROM main.sessions)"
    )
    return int(added)


def _add_messages(db: sqlite3.Connection, trace: Trace) -> int:
    names = ", ".join(MESSAGE_COLUMNS)
    picked = ", ".join(f"b.{name}" for name in MESSAGE_COLUMNS)
    wanted = _wanted(trace.messages_complete, "traced_messages", "b.id")
    added = db.execute(
        f"INSERT INTO main.messages ({names}) SELECT {picked} FROM backup.messages b "
        "WHERE b.session_id IN (SELECT id FROM main.sessions) "
        "AND b.id NOT IN (SELECT id FROM main.messages) "
        # a session added from the backup comes with all its messages
        f"AND ({wanted} OR b.session_id NOT IN (SELECT id FROM temp.traced_sessions))"
    ).rowcount
    return int(added)


def _add_other_rows(db: sqlite3.Connection) -> None:
    for table, columns, key in (
        ("state_meta", STATE_COLUMNS, "key"),
        ("gateway_routing", ROUTING_COLUMNS, "session_key"),
        ("import_files", IMPORT_COLUMNS, "path"),
    ):
        if not db.execute(
            "SELECT 1 FROM backup.sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone():
            continue  # a backup older than that table
        names = ", ".join(columns)
        db.execute(
            f"INSERT INTO main.{table} ({names}) SELECT {names} FROM backup.{table} "
            f"WHERE {key} NOT IN (SELECT {key} FROM main.{table})"
            + (" AND substr(key, 1, ?) != ?" if table == "state_meta" else ""),
            (len(CLAIM_PREFIX), CLAIM_PREFIX) if table == "state_meta" else (),
        )
    _add_inbox_rows(db)


def _add_inbox_rows(db: sqlite3.Connection) -> None:
    if not db.execute(
        "SELECT 1 FROM backup.sqlite_master WHERE type = 'table' AND name = 'gateway_inbox'"
    ).fetchone():
        return  # a backup older than the inbox
    names = ", ".join(INBOX_COLUMNS[1:])
    db.execute(
        f"INSERT INTO main.gateway_inbox ({names}) SELECT {names} FROM backup.gateway_inbox b "
        "WHERE NOT EXISTS (SELECT 1 FROM main.gateway_inbox m "
        "WHERE m.session_key = b.session_key AND m.message_id = b.message_id) ORDER BY b.id"
    )


def _clear_lost_links(db: sqlite3.Connection) -> None:
    """Links to sessions or prompts that are not in the store, cleared as a delete would."""
    db.execute(
        "UPDATE main.sessions SET parent_session_id = NULL, parent_kind = NULL "
        "WHERE parent_session_id IS NOT NULL "
        "AND parent_session_id NOT IN (SELECT id FROM main.sessions)"
    )
    db.execute(
        "UPDATE main.sessions SET system_prompt_hash = NULL WHERE system_prompt_hash IS NOT NULL "
        "AND system_prompt_hash NOT IN (SELECT hash FROM main.system_prompts)"
    )
    for table in ("gateway_routing", "import_files"):
        db.execute(
            f"UPDATE main.{table} SET session_id = NULL WHERE session_id IS NOT NULL "
            "AND session_id NOT IN (SELECT id FROM main.sessions)"
        )
