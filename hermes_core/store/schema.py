"""The store's schema and its migrations.

The schema version lives in ``PRAGMA user_version``. Migrations are ordered functions; each
runs inside one transaction together with the version bump, so a store is always at exactly
one version. Opening a store written by a newer version is refused (never "repaired").

Version history:

1. sessions, messages, the word index ``messages_fts``, system prompts, gateway routing,
   state_meta.
2. ``messages_cjk``: a trigram index over only the CJK runs of messages (backfilled).
3. ``import_files``: the import bookkeeping, one row per foreign log imported (path, size,
   modification time, read cursor, foreign id, the session it became), so re-importing an
   unchanged log does nothing and a grown one appends only its new turns (SPEC D).
4. ``messages.tool_failed``, a generated column (whether a tool result reports a failure, see
   ``insights.TOOL_FAILED_SQL``), and the partial index ``idx_messages_tool_results`` over tool
   results (session, tool name, failure), so ``hermes insights`` counts tool results per tool
   without reading a message row.
5. Every message is searchable up to ``fulltext.INDEXED_CHARS`` (1 MiB) characters — before,
   only the first 2,000 characters of a tool's output were. ``messages_fts_source`` is made
   again, and the messages it now sees differently (tool output past 2,000 characters, any
   message past 1 MiB) are indexed again: their old entries are deleted through the old view
   first (an external-content index must be given the text it indexed). The partial index
   ``idx_messages_indexed_in_part`` lists the messages longer than the cap, so ``hermes
   sessions stats`` counts them without reading the messages. FTS5's automatic merging of the
   word index is turned off (``automerge = 0``): the store's background maintenance thread
   merges instead (:func:`fulltext.merge_step`), off the writer's path.
6. ``sessions.cache_read_tokens`` and ``sessions.cache_write_tokens``: input tokens read from
   and written to the provider's prompt cache, counted apart from ``input_tokens`` (they are
   priced differently). Existing sessions get 0: what their importer counted stays in
   ``input_tokens`` until they are imported again.
7. ``gateway_inbox``: the events the gateway received and acknowledged, one row each until
   its turn stores the user message (see ``inbox``); a platform message id is there once per
   session key (an event without one gets a made-up ``hermes-inbox:…`` id, unique, which its
   user turn carries). No ``AUTOINCREMENT``: its ``sqlite_sequence`` table would be one more
   b-tree for a salvage to tell apart, and ids need not be unique over time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from . import fulltext
from .connection import write_transaction
from .errors import StoreError, StoreTooNew, StoreUnavailable
from .failures import shown

V1_TOOL_OUTPUT_INDEXED_CHARS = 2000
"""What schemas 1–4 indexed of a tool's output (the view of version 1 says so)."""

_V1 = f"""
CREATE TABLE system_prompts (
    hash   TEXT PRIMARY KEY,
    prompt TEXT NOT NULL
);

CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    source             TEXT NOT NULL,
    user_id            TEXT,
    title              TEXT,
    title_source       TEXT,
    model              TEXT,
    model_config       TEXT,
    system_prompt_hash TEXT REFERENCES system_prompts(hash),
    parent_session_id  TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    parent_kind        TEXT CHECK (parent_kind IN ('compression', 'branch', 'delegate', 'reset')),
    started_at         REAL NOT NULL,
    ended_at           REAL,
    end_reason         TEXT,
    last_active_at     REAL NOT NULL,
    cwd                TEXT,
    git_branch         TEXT,
    git_repo_root      TEXT,
    chat_id            TEXT,
    chat_type          TEXT,
    thread_id          TEXT,
    session_key        TEXT,
    billing_provider   TEXT,
    cost_actual_usd    REAL,
    cost_estimated_usd REAL,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    message_count      INTEGER NOT NULL DEFAULT 0,
    tool_call_count    INTEGER NOT NULL DEFAULT 0,
    pinned             INTEGER NOT NULL DEFAULT 0,
    archived           INTEGER NOT NULL DEFAULT 0,
    metadata           TEXT
);
CREATE UNIQUE INDEX idx_sessions_title ON sessions(title) WHERE title IS NOT NULL;
CREATE INDEX idx_sessions_activity ON sessions(last_active_at);
CREATE INDEX idx_sessions_started ON sessions(started_at);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id) WHERE parent_session_id IS NOT NULL;
CREATE INDEX idx_sessions_source ON sessions(source, last_active_at);
CREATE INDEX idx_sessions_session_key ON sessions(session_key) WHERE session_key IS NOT NULL;

CREATE TABLE messages (
    id                  INTEGER PRIMARY KEY,
    session_id          TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role                TEXT NOT NULL,
    content             TEXT NOT NULL DEFAULT '',
    tool_calls          TEXT,
    tool_call_id        TEXT,
    tool_name           TEXT,
    reasoning           TEXT,
    timestamp           REAL NOT NULL,
    token_count         INTEGER,
    platform_message_id TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id, id);

-- What the word index covers: every message's content, but only the head of tool output
-- (long logs would otherwise dominate the index). snippet() reads back through this view.
-- (Version 5 covers every message up to 1 MiB characters.)
CREATE VIEW messages_fts_source AS
    SELECT id,
           CASE WHEN role = 'tool' THEN substr(content, 1, {V1_TOOL_OUTPUT_INDEXED_CHARS})
                ELSE content END AS content
    FROM messages;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, content='messages_fts_source', content_rowid='id'
);

CREATE TABLE gateway_routing (
    session_key TEXT PRIMARY KEY,
    session_id  TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    platform    TEXT NOT NULL,
    origin      TEXT,
    updated_at  REAL NOT NULL,
    expires_at  REAL
);

CREATE TABLE state_meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);
"""

_V2 = """
CREATE VIRTUAL TABLE messages_cjk USING fts5(text, tokenize='trigram');
"""


_V3 = """
CREATE TABLE import_files (
    path        TEXT PRIMARY KEY,
    importer    TEXT NOT NULL,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    cursor      TEXT,
    foreign_id  TEXT,
    session_id  TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    state       TEXT NOT NULL DEFAULT 'done' CHECK (state IN ('importing', 'done')),
    imported_at REAL NOT NULL
);
CREATE INDEX idx_import_files_foreign ON import_files(importer, foreign_id);
"""


_V4 = """
ALTER TABLE messages ADD COLUMN tool_failed INTEGER
    GENERATED ALWAYS AS (TOOL_FAILED_SQL) VIRTUAL;
CREATE INDEX idx_messages_tool_results ON messages(session_id, tool_name, tool_failed)
    WHERE role = 'tool';
"""


def _migrate_to_1(connection: sqlite3.Connection) -> None:
    for statement in _split_statements(_V1):
        connection.execute(statement)


def _migrate_to_2(connection: sqlite3.Connection) -> None:
    for statement in _split_statements(_V2):
        connection.execute(statement)
    fulltext.rebuild_cjk_index(connection)


def _migrate_to_3(connection: sqlite3.Connection) -> None:
    for statement in _split_statements(_V3):
        connection.execute(statement)


def _migrate_to_4(connection: sqlite3.Connection) -> None:
    from .insights import TOOL_FAILED_SQL  # imported only when a store is created or upgraded

    for statement in _split_statements(_V4.replace("TOOL_FAILED_SQL", TOOL_FAILED_SQL)):
        connection.execute(statement)


_V5_REINDEXED = (
    f"(role = 'tool' AND length(content) > {V1_TOOL_OUTPUT_INDEXED_CHARS}) "
    f"OR length(content) > {fulltext.INDEXED_CHARS}"
)
"""The messages version 5's view covers differently from version 1's."""

_V5 = f"""
DROP VIEW messages_fts_source;
-- What the word index covers: every message's content up to INDEXED_CHARS characters.
-- snippet() and highlight() read back through this view.
CREATE VIEW messages_fts_source AS
    SELECT id, substr(content, 1, {fulltext.INDEXED_CHARS}) AS content FROM messages;
CREATE INDEX idx_messages_indexed_in_part ON messages(id)
    WHERE {fulltext.INDEXED_IN_PART_SQL};
INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 0)
"""


def _migrate_to_5(connection: sqlite3.Connection) -> None:
    """Index long tool output (and any message past the new cap) again under the new view."""
    connection.execute(
        "CREATE TEMP TABLE reindexed AS SELECT id FROM messages WHERE " + _V5_REINDEXED
    )
    connection.execute(  # through the old view: the text those entries were made of
        "INSERT INTO messages_fts(messages_fts, rowid, content) "
        "SELECT 'delete', id, content FROM messages_fts_source "
        "WHERE id IN (SELECT id FROM temp.reindexed)"
    )
    for statement in _split_statements(_V5):
        connection.execute(statement)
    connection.execute(
        "INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages_fts_source "
        "WHERE id IN (SELECT id FROM temp.reindexed)"
    )
    connection.execute("DROP TABLE temp.reindexed")


_V6 = """
ALTER TABLE sessions ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0
"""


def _migrate_to_6(connection: sqlite3.Connection) -> None:
    for statement in _split_statements(_V6):
        connection.execute(statement)


_V7 = """
CREATE TABLE gateway_inbox (
    id          INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    platform    TEXT NOT NULL,
    message_id  TEXT,
    event       TEXT NOT NULL,
    received_at REAL NOT NULL,
    UNIQUE (session_key, message_id)
)
"""


def _migrate_to_7(connection: sqlite3.Connection) -> None:
    for statement in _split_statements(_V7):
        connection.execute(statement)


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    _migrate_to_1,
    _migrate_to_2,
    _migrate_to_3,
    _migrate_to_4,
    _migrate_to_5,
    _migrate_to_6,
    _migrate_to_7,
]
SCHEMA_VERSION = len(MIGRATIONS)


def _split_statements(script: str) -> list[str]:
    """Split a script of simple statements (no triggers) for execution inside a transaction;
    ``executescript`` would commit the open transaction first."""
    statements: list[str] = []
    for chunk in script.split(";"):
        lines = [line for line in chunk.splitlines() if not line.strip().startswith("--")]
        text = "\n".join(lines).strip()
        if text:
            statements.append(text)
    return statements


def schema_version(connection: sqlite3.Connection) -> int:
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    return version


def _readable_version(connection: sqlite3.Connection) -> int:
    """The store's schema version; raises :class:`StoreTooNew` past what this code knows."""
    try:
        found = schema_version(connection)
    except sqlite3.DatabaseError as error:
        raise StoreUnavailable(f"cannot read the store: {error}") from error
    if found > SCHEMA_VERSION:
        path = getattr(connection, "store_path", None)
        raise StoreTooNew(too_new_message(found, path))
    return found


def too_new_message(found: int, path: Path | None) -> str:
    """What is said of a store made by a newer Hermes (every command, ``repair`` too)."""
    where = shown(path) if path is not None else "the session store"
    return (
        f"{where} was made by a newer Hermes (schema {found}, this one knows "
        f"{SCHEMA_VERSION}): upgrade hermes-sessions"
    )


def check_readable_schema(connection: sqlite3.Connection, refusal: StoreError) -> None:
    """For a store opened read-only: its schema must be this version's exactly (an older
    one needs an upgrade, which is a write; ``refusal`` says why it cannot be written)."""
    found = _readable_version(connection)
    if found < SCHEMA_VERSION:
        raise type(refusal)(
            f"{refusal}; it was made by an older Hermes (schema {found}) and must be upgraded "
            "before this one can read it, which needs writing"
        )


def migrate(connection: sqlite3.Connection, *, target: int = SCHEMA_VERSION) -> int:
    """Bring the store up to ``target``; returns the version it was at before."""
    found = _readable_version(connection)
    if found >= target:
        return found
    with write_transaction(connection):
        # Another process may have migrated while we waited for the lock.
        current = schema_version(connection)
        for version in range(current + 1, target + 1):
            MIGRATIONS[version - 1](connection)
            connection.execute(f"PRAGMA user_version = {version}")
    return found
