"""Salvaging a damaged store: every row still readable, copied into a fresh store.

``repair`` calls :func:`salvage` when SQLite itself cannot read the file through (a file cut
short, a page overwritten, a garbage header). The damaged file is read with
:mod:`.fileformat` — page by page, without SQLite — and what it yields goes into a new store
made with the normal schema and migrations:

* rows of ``sessions``, ``messages``, ``system_prompts``, ``state_meta``,
  ``gateway_routing``, ``gateway_inbox`` (messages a gateway acknowledged and had not turned
  yet; the next gateway answers them) and ``import_files``, from their b-trees and from leaf
  pages whose parent page was lost (recognised by the shape of their rows); the inbox rows'
  claims (``state_meta``) are left behind, as a copy of the store leaves them;
* a session whose row was lost but whose messages survived is rebuilt from what the file's
  indexes still say of it (id, title, origin, start and last activity, session key, parent),
  or from its messages alone (origin ``unknown``); it is marked ended and its ``metadata``
  says it was rebuilt;
* references to rows that were lost are cleared (a parent link, a system prompt, a routing
  row's or an import's session), as deleting those rows would have done;
* the full-text indexes are rebuilt and every session's counters recomputed.

How many sessions and messages the file *held* is counted from every trace of them: table
rows, and the entries of the indexes that list every session (its primary-key index) and
every message (``idx_messages_session``, the word index's per-message sizes). The count is
exact when one of those trees was read whole, else a lower bound (:attr:`Count.exact`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import counters, fulltext
from .connection import holds_open, open_connection, write_transaction
from .fileformat import LEAF_TABLE, BTreePage, PageFile, TreeWalk, Value, record_types
from .inbox import CLAIM_PREFIX
from .schema import migrate

SESSION_COLUMNS = (
    "id", "source", "user_id", "title", "title_source", "model", "model_config",
    "system_prompt_hash", "parent_session_id", "parent_kind", "started_at", "ended_at",
    "end_reason", "last_active_at", "cwd", "git_branch", "git_repo_root", "chat_id",
    "chat_type", "thread_id", "session_key", "billing_provider", "cost_actual_usd",
    "cost_estimated_usd", "input_tokens", "output_tokens", "message_count", "tool_call_count",
    "pinned", "archived", "metadata", "cache_read_tokens", "cache_write_tokens",
)  # fmt: skip
"""The stored columns of ``sessions``, in the order of the file's records. Rows written before
schema 6 added the last two columns end before them (SQLite reads them as their default)."""
ADDED_SESSION_COLUMNS = 2
"""How many of the last ``SESSION_COLUMNS`` a row may lack (added by ``ALTER TABLE``: 0)."""
MESSAGE_COLUMNS = (
    "id", "session_id", "role", "content", "tool_calls", "tool_call_id", "tool_name",
    "reasoning", "timestamp", "token_count", "platform_message_id",
)  # fmt: skip
"""The stored columns of ``messages`` (``tool_failed`` is generated, not stored)."""
PROMPT_COLUMNS = ("hash", "prompt")
STATE_COLUMNS = ("key", "value")
ROUTING_COLUMNS = ("session_key", "session_id", "platform", "origin", "updated_at", "expires_at")
INBOX_COLUMNS = ("id", "session_key", "platform", "message_id", "event", "received_at")
"""The columns of ``gateway_inbox`` (``id`` is the rowid: its record holds NULL there)."""
IMPORT_COLUMNS = (
    "path", "importer", "size", "mtime_ns", "cursor", "foreign_id", "session_id", "state",
    "imported_at",
)  # fmt: skip

SESSION_INDEXES: dict[str, tuple[str, ...]] = {
    "sqlite_autoindex_sessions_1": ("id",),
    "idx_sessions_title": ("title",),
    "idx_sessions_activity": ("last_active_at",),
    "idx_sessions_started": ("started_at",),
    "idx_sessions_parent": ("parent_session_id",),
    "idx_sessions_source": ("source", "last_active_at"),
    "idx_sessions_session_key": ("session_key",),
}
"""The indexes on ``sessions`` and the columns their keys hold (then the row's rowid)."""
MESSAGE_INDEXES: dict[str, int] = {"idx_messages_session": 0, "idx_messages_tool_results": 0}
"""Indexes listing messages, and which key column holds the session id."""
ALL_MESSAGES_INDEXES = ("idx_messages_session",)
"""Indexes with an entry for every message (one read whole gives the exact count)."""
DOCSIZE_TABLE = "messages_fts_docsize"
"""The word index's table of document sizes: one row per message, keyed by its id."""

_NULL, _INT, _FLOAT, _TEXT, _BLOB = "null", "int", "float", "text", "blob"
_HEX64 = re.compile(r"[0-9a-f]{64}")
REBUILT_NOTE = "this session's row was lost to damage; rebuilt from {what}"


@dataclass(frozen=True, slots=True)
class Count:
    """How many rows a damaged file held: ``exact``, or at least ``value``."""

    value: int
    exact: bool

    def __str__(self) -> str:
        return f"{self.value:,}" if self.exact else f"at least {self.value:,}"


@dataclass
class SalvageReport:
    """What :func:`salvage` kept of what the damaged file held."""

    sessions_kept: int = 0
    sessions_held: Count = field(default_factory=lambda: Count(0, False))
    messages_kept: int = 0
    messages_held: Count = field(default_factory=lambda: Count(0, False))
    sessions_rebuilt: int = 0
    """Sessions among the kept whose own row was lost (rebuilt from indexes or messages)."""
    other_rows: dict[str, int] = field(default_factory=dict)
    """Rows kept of the other tables (``state_meta``, ``gateway_routing``…), by table."""
    damaged_pages: int = 0
    """Pages of the store's tables that were missing or did not parse."""
    schema_found: bool = False
    """Whether the file's table of tables was readable (else rows were recognised by shape)."""

    @property
    def lost_anything(self) -> bool:
        return not (
            self.sessions_held.exact
            and self.messages_held.exact
            and self.sessions_kept - self.sessions_rebuilt >= self.sessions_held.value
            and self.messages_kept >= self.messages_held.value
        )


@dataclass
class Trace:
    """What a damaged file showed of its sessions and messages, kept or not: what merging a
    backup into the salvage goes by (a session of the backup the file still showed was lost
    to the damage; one it did not show was deleted since — when the file's record of its
    sessions was read whole)."""

    session_ids: set[str] = field(default_factory=set)
    message_ids: set[int] = field(default_factory=set)
    sessions_complete: bool = False
    """``session_ids`` is every session the file held."""
    messages_complete: bool = False
    """``message_ids`` is every message the file held."""


# ---------------------------------------------------------------------- row shapes


def _kind(serial: int) -> str:
    if serial == 0:
        return _NULL
    if serial == 7:
        return _FLOAT
    if serial < 12:
        return _INT
    return _BLOB if serial % 2 == 0 else _TEXT


_NUMBER = (_INT, _FLOAT)
_TEXT_OR_NULL = (_TEXT, _NULL)
_NUMBER_OR_NULL = (_INT, _FLOAT, _NULL)
_INT_OR_NULL = (_INT, _NULL)


@dataclass(frozen=True, slots=True)
class _Shape:
    """A table's record layout: the kinds of value each column may hold."""

    table: str
    columns: Sequence[str]
    kinds: Sequence[tuple[str, ...]]
    check: Callable[[list[Value]], bool] = lambda values: True
    added: int = 0
    """How many trailing columns were added to the table later (``ALTER TABLE … ADD COLUMN``,
    default 0): a record written before has that many fewer values."""

    def _counts(self, found: int) -> bool:
        return len(self.kinds) - self.added <= found <= len(self.kinds)

    def fits(self, serials: list[int]) -> bool:
        if not self._counts(len(serials)):
            return False
        return all(_kind(s) in allowed for s, allowed in zip(serials, self.kinds, strict=False))

    def row(self, values: list[Value], whole: bool) -> tuple[Value, ...] | None:
        """The row's values when the record is whole and fits the shape (the columns added
        later filled with their default, as SQLite reads them)."""
        if not whole or not self._counts(len(values)):
            return None
        for value, allowed in zip(values, self.kinds, strict=False):
            if _value_kind(value) not in allowed:
                return None
        if not self.check(values):
            return None
        return tuple(values) + (0,) * (len(self.kinds) - len(values))


def _value_kind(value: Value) -> str:
    if value is None:
        return _NULL
    if isinstance(value, bool | int):
        return _INT
    if isinstance(value, float):
        return _FLOAT
    return _TEXT if isinstance(value, str) else _BLOB


_SESSION_KINDS: list[tuple[str, ...]] = [_TEXT_OR_NULL] * len(SESSION_COLUMNS)
_SESSION_KINDS[0] = (_TEXT,)  # id
_SESSION_KINDS[1] = (_TEXT,)  # source
for _name in ("started_at", "last_active_at"):
    _SESSION_KINDS[SESSION_COLUMNS.index(_name)] = _NUMBER
for _name in ("ended_at", "cost_actual_usd", "cost_estimated_usd"):
    _SESSION_KINDS[SESSION_COLUMNS.index(_name)] = _NUMBER_OR_NULL
for _name in (
    "input_tokens", "output_tokens", "message_count", "tool_call_count", "pinned",
    "cache_read_tokens", "cache_write_tokens",
):  # fmt: skip
    _SESSION_KINDS[SESSION_COLUMNS.index(_name)] = (_INT,)
_SESSION_KINDS[SESSION_COLUMNS.index("archived")] = (_INT,)

_MESSAGE_KINDS: list[tuple[str, ...]] = [
    (_NULL, _INT),  # id: the rowid (stored as NULL)
    (_TEXT,),  # session_id
    (_TEXT,),  # role
    (_TEXT,),  # content
    _TEXT_OR_NULL,  # tool_calls
    _TEXT_OR_NULL,  # tool_call_id
    _TEXT_OR_NULL,  # tool_name
    _TEXT_OR_NULL,  # reasoning
    _NUMBER,  # timestamp
    _INT_OR_NULL,  # token_count
    _TEXT_OR_NULL,  # platform_message_id
]

SESSIONS = _Shape("sessions", SESSION_COLUMNS, _SESSION_KINDS, added=ADDED_SESSION_COLUMNS)
MESSAGES = _Shape("messages", MESSAGE_COLUMNS, _MESSAGE_KINDS)
PROMPTS = _Shape(
    "system_prompts",
    PROMPT_COLUMNS,
    [(_TEXT,), (_TEXT,)],
    lambda values: bool(_HEX64.fullmatch(str(values[0]))),
)
STATE = _Shape(
    "state_meta",
    STATE_COLUMNS,
    [(_TEXT,), _TEXT_OR_NULL],
    lambda values: not _HEX64.fullmatch(str(values[0])),
)
ROUTING = _Shape(
    "gateway_routing",
    ROUTING_COLUMNS,
    [(_TEXT,), _TEXT_OR_NULL, (_TEXT,), _TEXT_OR_NULL, _NUMBER, _NUMBER_OR_NULL],
)
INBOX = _Shape(
    "gateway_inbox",
    INBOX_COLUMNS,
    [(_NULL,), (_TEXT,), (_TEXT,), _TEXT_OR_NULL, (_TEXT,), _NUMBER],
    lambda values: str(values[4]).startswith("{"),
)
IMPORTS = _Shape(
    "import_files",
    IMPORT_COLUMNS,
    [
        (_TEXT,),  # path
        (_TEXT,),  # importer
        (_INT,),  # size
        (_INT,),  # mtime_ns
        _TEXT_OR_NULL,  # cursor
        _TEXT_OR_NULL,  # foreign_id
        _TEXT_OR_NULL,  # session_id
        (_TEXT,),  # state
        _NUMBER,  # imported_at
    ],
    lambda values: values[7] in ("importing", "done"),
)
SCHEMA = _Shape(
    "sqlite_master",
    ("type", "name", "tbl_name", "rootpage", "sql"),
    [(_TEXT,), (_TEXT,), (_TEXT,), _INT_OR_NULL, _TEXT_OR_NULL],
    lambda values: values[0] in ("table", "index", "view", "trigger"),
)
TABLE_SHAPES = (SESSIONS, MESSAGES, PROMPTS, STATE, ROUTING, INBOX, IMPORTS)


# ---------------------------------------------------------------------- reading


@dataclass
class _Found:
    """Rows read out of the damaged file, and the traces of rows that were not."""

    sessions: dict[str, tuple[Value, ...]] = field(default_factory=dict)
    session_rowids: dict[int, str] = field(default_factory=dict)
    """rowid → id of every session row read (whole or not) and every primary-key entry."""
    session_traces: dict[int, dict[str, Value]] = field(default_factory=dict)
    """rowid → columns the session indexes hold of it."""
    message_ids: set[int] = field(default_factory=set)
    """Every message the file shows a trace of: a row (whole or not) or an index entry."""
    message_sessions: dict[str, set[int]] = field(default_factory=dict)
    """Session id → ids of its messages that were kept."""
    rows: dict[str, dict[object, tuple[Value, ...]]] = field(default_factory=dict)
    """The other tables' rows, by table and key."""
    session_rows: set[int] = field(default_factory=set)
    """rowids of every session row of the table (whole or not)."""
    exact_sessions: int | None = None
    exact_messages: int | None = None
    listed_sessions: set[int] | None = None
    """rowids of every session, when a tree listing them all was read whole."""
    listed_messages: set[int] | None = None
    """ids of every message, when a tree listing them all was read whole."""
    damaged_pages: int = 0


class _Salvager:
    """Reads one damaged file and writes what it finds into the new store's connection."""

    def __init__(self, pages: PageFile, target: sqlite3.Connection) -> None:
        self.pages = pages
        self.target = target
        self.found = _Found()
        self.claimed: set[int] = set()
        self.batch: list[tuple[Value, ...]] = []
        self.kept_messages: set[int] = set()
        self.messages_kept = 0
        self.complete_tables: set[str] = set()

    # The steps, in order.

    def run(self) -> tuple[SalvageReport, Trace]:
        roots = self._schema()
        for shape in TABLE_SHAPES:
            root = roots.get(shape.table)
            if root is not None:
                self._read_table(shape, root)
        self._read_traces(roots)
        self._read_unclaimed()
        self._flush_messages()
        report = self._write_the_rest()
        report.schema_found = bool(roots)
        found = self.found
        trace = Trace(
            session_ids=set(found.session_rowids.values()) | set(found.message_sessions),
            message_ids=found.message_ids | self.kept_messages,
            sessions_complete=report.sessions_held.exact,
            messages_complete=report.messages_held.exact,
        )
        return report, trace

    def _schema(self) -> dict[str, int]:
        """Table and index name → root page, from the file's table of tables (page 1), with
        rows of it found on pages cut off from page 1 when that tree is damaged."""
        walk = TreeWalk(1)
        entries: list[tuple[Value, ...]] = []
        for _rowid, values, whole in self.pages.table_rows(1, walk):
            row = SCHEMA.row(values, whole)
            if row is not None:
                entries.append(row)
        self.claimed |= walk.pages
        if not walk.complete or not entries:
            for page in self.pages.unclaimed_table_leaves(self.claimed):
                if _page_shape(page) is SCHEMA:
                    for _rowid, values, whole in self.pages.leaf_rows(page):
                        row = SCHEMA.row(values, whole)
                        if row is not None:
                            entries.append(row)
        roots: dict[str, int] = {}
        for kind, name, _table, root, _sql in entries:
            if kind in ("table", "index") and isinstance(root, int) and root > 1:
                roots.setdefault(str(name), root)
        return roots

    def _read_table(self, shape: _Shape, root: int) -> None:
        walk = TreeWalk(root)
        rowids: set[int] = set()
        for rowid, values, whole in self.pages.table_rows(root, walk):
            rowids.add(rowid)
            self._take(shape, rowid, values, whole)
        self.claimed |= walk.pages
        self.found.damaged_pages += walk.damaged_pages
        if walk.damaged_pages == 0:
            # Every page of the tree was read: no leaf of this table can be cut off from it,
            # and every row of it is counted (a row whose record is damaged too).
            self.complete_tables.add(shape.table)
            if shape is SESSIONS:
                self.found.exact_sessions = len(rowids)
                self.found.listed_sessions = rowids
            elif shape is MESSAGES:
                self.found.exact_messages = len(rowids)
                self.found.listed_messages = rowids

    def _read_traces(self, roots: dict[str, int]) -> None:
        """What the indexes say of sessions and messages (also those whose rows were lost)."""
        for name, columns in SESSION_INDEXES.items():
            root = roots.get(name)
            if root is None:
                continue
            walk = TreeWalk(root)
            listed: set[int] = set()
            for key in self.pages.index_keys(root, walk):
                rowid = key[-1]
                if len(key) != len(columns) + 1 or not isinstance(rowid, int):
                    continue
                listed.add(rowid)
                trace = self.found.session_traces.setdefault(rowid, {})
                trace.update(zip(columns, key[:-1], strict=True))
                if name == "sqlite_autoindex_sessions_1" and isinstance(key[0], str):
                    self.found.session_rowids.setdefault(rowid, key[0])
            self.claimed |= walk.pages
            if name == "sqlite_autoindex_sessions_1" and walk.complete:
                self._listed_sessions(listed)
        for name in MESSAGE_INDEXES:
            root = roots.get(name)
            if root is None:
                continue
            walk = TreeWalk(root)
            listed = set()
            for key in self.pages.index_keys(root, walk):
                if isinstance(key[-1], int):
                    listed.add(key[-1])
            self.found.message_ids |= listed
            self.claimed |= walk.pages
            if name in ALL_MESSAGES_INDEXES and walk.complete:
                self._listed_messages(listed)
        root = roots.get(DOCSIZE_TABLE)
        if root is not None:
            walk = TreeWalk(root)
            listed = {rowid for rowid, _values, _whole in self.pages.table_rows(root, walk)}
            self.found.message_ids |= listed
            self.claimed |= walk.pages
            if walk.complete:
                self._listed_messages(listed)

    def _listed_sessions(self, rowids: set[int]) -> None:
        """A tree listing every session was read whole."""
        if self.found.listed_sessions is None:
            self.found.listed_sessions = rowids
            self.found.exact_sessions = len(rowids)

    def _listed_messages(self, ids: set[int]) -> None:
        """A tree listing every message was read whole."""
        if self.found.listed_messages is None:
            self.found.listed_messages = ids
            self.found.exact_messages = len(ids)

    def _read_unclaimed(self) -> None:
        """Rows on leaf pages no tree walk reached: subtrees cut off from their parents.
        A page of a table whose tree was read whole is not one (it is stale: a page freed
        while the free-page list was lost); nor is a row that a tree listing every row of
        its table, read whole, does not list."""
        for page in self.pages.unclaimed_table_leaves(self.claimed):
            shape = _page_shape(page)
            if shape is None or shape is SCHEMA or shape.table in self.complete_tables:
                continue
            listed = {
                "sessions": self.found.listed_sessions,
                "messages": self.found.listed_messages,
            }
            rows = listed.get(shape.table)
            for rowid, values, whole in self.pages.leaf_rows(page):
                if rows is None or rowid in rows:
                    self._take(shape, rowid, values, whole)

    def _take(self, shape: _Shape, rowid: int, values: list[Value], whole: bool) -> None:
        """Keep one row read from the file (its trace counts even when it cannot be kept)."""
        if shape is MESSAGES:
            self.found.message_ids.add(rowid)
        elif shape is SESSIONS:
            self.found.session_rows.add(rowid)
            if values and isinstance(values[0], str):
                self.found.session_rowids.setdefault(rowid, values[0])
        row = shape.row(values, whole)
        if row is None:
            return
        if shape is MESSAGES:
            self._keep_message(rowid, row)
        elif shape is SESSIONS:
            self.found.sessions.setdefault(str(row[0]), row)
        elif shape is INBOX:
            self.found.rows.setdefault(shape.table, {}).setdefault(rowid, (rowid, *row[1:]))
        else:
            self.found.rows.setdefault(shape.table, {}).setdefault(row[0], row)

    def _keep_message(self, rowid: int, row: tuple[Value, ...]) -> None:
        if rowid in self.kept_messages:
            return
        self.kept_messages.add(rowid)
        self.found.message_sessions.setdefault(str(row[1]), set()).add(rowid)
        self.batch.append((rowid, *row[1:]))
        if len(self.batch) >= 500:
            self._flush_messages()

    def _flush_messages(self) -> None:
        if not self.batch:
            return
        columns = ", ".join(MESSAGE_COLUMNS)
        marks = ", ".join("?" for _ in MESSAGE_COLUMNS)
        self.target.executemany(f"INSERT INTO messages ({columns}) VALUES ({marks})", self.batch)
        self.messages_kept += len(self.batch)
        self.batch = []

    # Writing what is not messages, once every message is in.

    def _write_the_rest(self) -> SalvageReport:
        found = self.found
        prompts = found.rows.get("system_prompts", {})
        self._insert("system_prompts", PROMPT_COLUMNS, list(prompts.values()))
        sessions = dict(found.sessions)
        rebuilt = self._rebuilt_sessions(sessions)
        kept_ids = set(sessions) | set(rebuilt)
        rows = [_linked(row, kept_ids, set(prompts)) for row in sessions.values()]
        rows.extend(rebuilt.values())
        self._insert_sessions(rows)
        other: dict[str, int] = {}
        for shape, session_column in ((STATE, None), (ROUTING, 1), (INBOX, None), (IMPORTS, 6)):
            table_rows = list(found.rows.get(shape.table, {}).values())
            if shape is STATE:
                table_rows = [row for row in table_rows if not str(row[0]).startswith(CLAIM_PREFIX)]
            if session_column is not None:
                table_rows = [
                    _without_lost_session(row, session_column, kept_ids) for row in table_rows
                ]
            self._insert(shape.table, shape.columns, table_rows)
            other[shape.table] = len(table_rows)
        counters.recount(self.target)
        fulltext.rebuild(self.target)
        session_ids = set(found.session_rowids.values()) | set(found.message_sessions)
        rowids = found.session_rows | set(found.session_rowids) | set(found.session_traces)
        held_sessions = max(len(session_ids), len(rowids), len(kept_ids))
        held_messages = max(len(found.message_ids), self.messages_kept)
        return SalvageReport(
            sessions_kept=len(kept_ids),
            sessions_held=_count(held_sessions, found.exact_sessions),
            messages_kept=self.messages_kept,
            messages_held=_count(held_messages, found.exact_messages),
            sessions_rebuilt=len(rebuilt),
            other_rows=other,
            damaged_pages=found.damaged_pages,
        )

    def _rebuilt_sessions(
        self, sessions: dict[str, tuple[Value, ...]]
    ) -> dict[str, tuple[Value, ...]]:
        """Rows for the sessions whose messages were kept but whose own row was not."""
        by_id: dict[str, dict[str, Value]] = {}
        for rowid, session_id in self.found.session_rowids.items():
            by_id[session_id] = self.found.session_traces.get(rowid, {})
        rebuilt: dict[str, tuple[Value, ...]] = {}
        missing = [sid for sid in self.found.message_sessions if sid not in sessions]
        for session_id in missing:
            first, last = self.target.execute(
                "SELECT min(timestamp), max(timestamp) FROM messages WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            trace = by_id.get(session_id)
            what = "its index entries and messages" if trace else "its messages"
            values: dict[str, Value] = {
                "id": session_id,
                "source": "unknown",
                "started_at": first,
                "last_active_at": last,
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
                "message_count": 0,
                "tool_call_count": 0,
                "pinned": 0,
                "archived": 0,
            }
            for name, value in (trace or {}).items():
                if value is not None:
                    values[name] = value
            values["ended_at"] = values["last_active_at"]
            values["metadata"] = json.dumps({"repair": REBUILT_NOTE.format(what=what)})
            if "parent_session_id" in values:
                values["parent_kind"] = None  # its kind was in the lost row
            rebuilt[session_id] = tuple(values.get(name) for name in SESSION_COLUMNS)
        return rebuilt

    def _insert_sessions(self, rows: list[tuple[Value, ...]]) -> None:
        columns = ", ".join(SESSION_COLUMNS)
        marks = ", ".join("?" for _ in SESSION_COLUMNS)
        titles: set[str] = set()
        title_at = SESSION_COLUMNS.index("title")
        kind_at = SESSION_COLUMNS.index("parent_kind")
        parent_at = SESSION_COLUMNS.index("parent_session_id")
        cleaned = []
        for row in rows:
            values = list(row)
            title = values[title_at]
            if isinstance(title, str) and title in titles:
                values[title_at] = None  # a second row with one title: stale, keep it untitled
            elif isinstance(title, str):
                titles.add(title)
            if values[parent_at] is None:
                values[kind_at] = None
            elif values[kind_at] is None:
                values[parent_at] = None
            cleaned.append(tuple(values))
        self.target.executemany(f"INSERT INTO sessions ({columns}) VALUES ({marks})", cleaned)

    def _insert(self, table: str, columns: Sequence[str], rows: list[tuple[Value, ...]]) -> None:
        if not rows:
            return
        names = ", ".join(columns)
        marks = ", ".join("?" for _ in columns)
        self.target.executemany(f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})", rows)


def _page_shape(page: BTreePage) -> _Shape | None:
    """The table whose rows most of this leaf page's records look like (None: none)."""
    if page.kind != LEAF_TABLE or not page.cells:
        return None
    votes: dict[str, int] = {}
    shapes = {shape.table: shape for shape in (*TABLE_SHAPES, SCHEMA)}
    for cell in page.cells:
        serials = record_types(cell.local)
        if serials is None:
            continue
        for shape in shapes.values():
            if shape.fits(serials):
                votes[shape.table] = votes.get(shape.table, 0) + 1
                break
    if not votes:
        return None
    table, count = max(votes.items(), key=lambda item: item[1])
    return shapes[table] if count * 2 >= len(page.cells) else None


def _linked(row: tuple[Value, ...], sessions: set[str], prompts: set[object]) -> tuple[Value, ...]:
    """A session row whose links to lost rows (parent, system prompt) are cleared."""
    values = list(row)
    parent_at = SESSION_COLUMNS.index("parent_session_id")
    if values[parent_at] is not None and values[parent_at] not in sessions:
        values[parent_at] = None
        values[SESSION_COLUMNS.index("parent_kind")] = None
    prompt_at = SESSION_COLUMNS.index("system_prompt_hash")
    if values[prompt_at] is not None and values[prompt_at] not in prompts:
        values[prompt_at] = None
    return tuple(values)


def _without_lost_session(
    row: tuple[Value, ...], column: int, sessions: set[str]
) -> tuple[Value, ...]:
    if row[column] is None or row[column] in sessions:
        return row
    values = list(row)
    values[column] = None
    return tuple(values)


def _count(seen: int, exact: int | None) -> Count:
    if exact is not None and exact >= seen:
        return Count(exact, True)
    return Count(seen, False)


# ---------------------------------------------------------------------- entry point


def salvage(damaged: Path, target: Path) -> tuple[SalvageReport, Trace]:
    """Copy every readable row of the damaged store ``damaged`` into a new store at
    ``target`` (a path that must not exist yet), and report what was kept of what the file
    held, with the :class:`Trace` of what it showed. ``damaged`` (and its ``-wal``) are only
    read, by path: no SQLite connection of this process may be open on them (DESIGN §9).
    Raises the store's errors when ``target`` cannot be written (a full disk…); ``target``
    is then left for the caller to remove."""
    if holds_open(damaged):
        raise RuntimeError(f"{damaged}: this process holds a connection on it (DESIGN §9)")
    if target.exists():
        raise FileExistsError(target)
    connection = open_connection(target)
    try:
        migrate(connection)
        connection.execute("PRAGMA foreign_keys = OFF")
        with PageFile(damaged) as pages, write_transaction(connection):
            report, trace = _Salvager(pages, connection).run()
            dangling = connection.execute("PRAGMA foreign_key_check").fetchall()
            if dangling:
                raise RuntimeError(f"salvage left {len(dangling)} dangling references")
        connection.execute("PRAGMA foreign_keys = ON")
    finally:
        connection.close()
    return report, trace
