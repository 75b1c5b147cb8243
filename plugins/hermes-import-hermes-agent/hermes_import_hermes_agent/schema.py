"""Which Hermes Agent schema a store has, and whether it is one at all.

Hermes Agent records its schema version in a one-row ``schema_version`` table and adds
missing columns declaratively at start-up, so what a store holds is best read from its
columns (``PRAGMA table_info``); the version number tells which data migrations ran. The
versions that change what an import can bring over:

====  ==============================================================================
v1-2  sessions and messages; ``finish_reason`` (v2). No titles, no lineage.
v3-4  ``title`` and its unique index; ``parent_session_id`` lineage (compression
      continuations).
v5-9  billing and cost columns, reasoning columns, ``api_call_count``.
v16   delegate children carry a ``_delegate_from`` marker in ``model_config``.
v18   the ``gateway_routing`` table.
v25   system prompts deduplicated into ``system_prompts`` (by sha256), the legacy
      ``sessions.system_prompt`` column kept as a fallback.
v30   the latest documented shape (the trigram index leaves out subagents).
====  ==============================================================================

Markers in ``model_config`` (``_branched_from``, ``_reset_from``) and flags (``pinned``,
``archived``, ``active``/``compacted`` on messages) are used wherever they are present.
A version newer than :data:`NEWEST_KNOWN_VERSION` is refused: its meaning is unknown.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from hermes_hookspecs import UserFacingError

NEWEST_KNOWN_VERSION = 30

REQUIRED_SESSION_COLUMNS = frozenset({"id", "source", "started_at"})
REQUIRED_MESSAGE_COLUMNS = frozenset({"id", "session_id", "role", "content", "timestamp"})


class NotAHermesAgentStore(UserFacingError):
    """An SQLite file that is not a Hermes Agent store (or is this tool's own store)."""


class NewerSchema(UserFacingError):
    """A Hermes Agent store written by a version newer than this importer knows."""


@dataclass(frozen=True, slots=True)
class StoreShape:
    """What one Hermes Agent store holds."""

    version: int
    """The schema version (0 when the store records none)."""
    session_columns: frozenset[str]
    message_columns: frozenset[str]
    tables: frozenset[str]

    @property
    def has_system_prompts(self) -> bool:
        """The v25 deduplicated prompts table, referenced by ``system_prompt_hash``."""
        return "system_prompts" in self.tables and "system_prompt_hash" in self.session_columns

    @property
    def has_routing(self) -> bool:
        """A ``gateway_routing`` table in the documented shape."""
        return "gateway_routing" in self.tables

    def sessions_have(self, column: str) -> bool:
        return column in self.session_columns

    def messages_have(self, column: str) -> bool:
        return column in self.message_columns


def detect_shape(connection: sqlite3.Connection) -> StoreShape:
    """The shape of the store open on ``connection``; raises :class:`NotAHermesAgentStore`
    or :class:`NewerSchema` with one line."""
    tables = frozenset(
        str(row[0])
        for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')"
        )
    )
    if "sessions" not in tables or "messages" not in tables:
        raise NotAHermesAgentStore(
            "not a Hermes Agent store (it has no sessions and messages tables)"
        )
    session_columns = _columns(connection, "sessions")
    message_columns = _columns(connection, "messages")
    if "import_files" in tables or "parent_kind" in session_columns:
        raise NotAHermesAgentStore(
            "this is a Hermes sessions store, not a Hermes Agent one "
            "(move sessions between Hermes sessions stores with a jsonl export)"
        )
    missing = sorted(REQUIRED_SESSION_COLUMNS - session_columns) + sorted(
        REQUIRED_MESSAGE_COLUMNS - message_columns
    )
    if missing:
        raise NotAHermesAgentStore(
            f"not a Hermes Agent store (its tables lack {', '.join(missing)})"
        )
    version = _version(connection, tables)
    if version > NEWEST_KNOWN_VERSION:
        raise NewerSchema(
            f"this Hermes Agent store has schema v{version}, newer than this importer knows "
            f"(up to v{NEWEST_KNOWN_VERSION}): upgrade hermes-import-hermes-agent"
        )
    return StoreShape(version, session_columns, message_columns, tables)


def _columns(connection: sqlite3.Connection, table: str) -> frozenset[str]:
    return frozenset(str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})"))


def _version(connection: sqlite3.Connection, tables: frozenset[str]) -> int:
    if "schema_version" in tables:
        try:
            row = connection.execute("SELECT max(version) FROM schema_version").fetchone()
        except sqlite3.DatabaseError:
            row = None
        if row is not None and isinstance(row[0], int):
            return row[0]
    found: int = connection.execute("PRAGMA user_version").fetchone()[0]
    return found
