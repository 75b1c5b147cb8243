"""Hermes Agent ``state.db`` files built in the test, from the schema as documented (the
tables, columns and migration history in ``reference/hermes-agent-sessions.md`` §1), in three
shapes: early (v2: no titles, no lineage), middle (v11: titles, lineage, billing, reasoning)
and latest (v30: every documented column, ``system_prompts``, ``gateway_routing``).

``sample_store`` fills one with the same conversation set in each shape: a compression chain
of three, a delegate and a branch (where the shape has lineage), CJK text, tool calls with
their results, reasoning, pinned/archived flags and routing rows (where the shape has them).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EARLY_SESSIONS = """
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
    message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0
"""
EARLY_MESSAGES = """
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT
"""
MIDDLE_SESSIONS = (
    EARLY_SESSIONS
    + """,
    parent_session_id TEXT REFERENCES sessions(id), title TEXT, cwd TEXT,
    billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT,
    estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT, cost_source TEXT,
    pricing_version TEXT, api_call_count INTEGER DEFAULT 0
"""
)
MIDDLE_MESSAGES = (
    EARLY_MESSAGES
    + """,
    reasoning TEXT, reasoning_details TEXT, codex_reasoning_items TEXT, codex_message_items TEXT
"""
)
LATEST_SESSIONS = """
    id TEXT PRIMARY KEY, source TEXT NOT NULL, created_source TEXT, user_id TEXT,
    session_key TEXT, chat_id TEXT, chat_type TEXT, thread_id TEXT, display_name TEXT,
    origin_json TEXT, expiry_finalized INTEGER DEFAULT 0,
    model TEXT, model_config TEXT, system_prompt TEXT,
    system_prompt_hash TEXT REFERENCES system_prompts(hash),
    parent_session_id TEXT REFERENCES sessions(id),
    started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
    message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    cwd TEXT, git_branch TEXT, git_repo_root TEXT,
    git_metadata_generation INTEGER NOT NULL DEFAULT 0,
    billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT,
    estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT, cost_source TEXT,
    pricing_version TEXT,
    title TEXT, title_source TEXT, last_activity_at REAL, last_activity_description TEXT,
    last_activity_provenance TEXT, api_call_count INTEGER DEFAULT 0,
    handoff_state TEXT, handoff_platform TEXT, handoff_error TEXT,
    compression_failure_cooldown_until REAL, compression_failure_error TEXT,
    compression_fallback_streak INTEGER, compression_ineffective_count INTEGER,
    compression_recovery_deadline REAL, compression_overload_streak INTEGER,
    profile_name TEXT, transport_profile TEXT,
    rewind_count INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0, hidden INTEGER NOT NULL DEFAULT 0,
    last_read_at REAL, tool_names TEXT
"""
LATEST_MESSAGES = """
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    effect_disposition TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT,
    reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT, codex_reasoning_items TEXT,
    codex_message_items TEXT, platform_message_id TEXT, observed INTEGER DEFAULT 0,
    _compressed_summary INTEGER NOT NULL DEFAULT 0, active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0, api_content TEXT, display_kind TEXT,
    display_metadata TEXT, display_identity BLOB, display_order INTEGER
"""

SHAPES: dict[int, tuple[str, str]] = {
    2: (EARLY_SESSIONS, EARLY_MESSAGES),
    11: (MIDDLE_SESSIONS, MIDDLE_MESSAGES),
    30: (LATEST_SESSIONS, LATEST_MESSAGES),
}


def create_store(path: Path, version: int, *, wal: bool = False) -> sqlite3.Connection:
    """An empty Hermes Agent store of schema ``version`` (2, 11 or 30, or a made-up newer
    number, which gets the latest shape); returns a connection that commits each statement."""
    sessions, messages = SHAPES.get(version, SHAPES[30])
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA synchronous=OFF")  # a test file: no fsync per statement
    if wal:
        connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    connection.execute("INSERT INTO schema_version VALUES (?)", (version,))
    if version >= 25:
        connection.execute(
            "CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL)"
        )
    connection.execute(f"CREATE TABLE sessions ({sessions})")
    connection.execute(f"CREATE TABLE messages ({messages})")
    connection.execute("CREATE INDEX idx_messages_session ON messages(session_id, timestamp)")
    connection.execute("CREATE INDEX idx_sessions_started ON sessions(started_at DESC)")
    if version >= 3:
        connection.execute(
            "CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL"
        )
        connection.execute("CREATE INDEX idx_sessions_parent ON sessions(parent_session_id)")
    if version >= 18:
        connection.execute(
            "CREATE TABLE gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT NOT NULL, "
            "entry_json TEXT NOT NULL, updated_at REAL NOT NULL, PRIMARY KEY(scope, session_key))"
        )
        connection.execute("CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT)")
    if version >= 23:
        # The external-content word index over a view (tool output truncated), as documented.
        connection.execute(
            "CREATE VIEW messages_fts_src AS SELECT id, content, tool_name, tool_calls FROM messages"
        )
        connection.execute(
            "CREATE VIRTUAL TABLE messages_fts USING fts5(content, tool_name, tool_calls, "
            "content='messages_fts_src', content_rowid='id')"
        )
    elif version >= 10:
        connection.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content)")
        connection.execute(
            "CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram')"
        )
    return connection


@dataclass
class AgentStore:
    """A Hermes Agent store being written by the test."""

    path: Path
    version: int
    connection: sqlite3.Connection
    session_columns: set[str] = field(default_factory=set)
    message_columns: set[str] = field(default_factory=set)

    @classmethod
    def create(cls, path: Path, version: int, *, wal: bool = False) -> AgentStore:
        connection = create_store(path, version, wal=wal)
        store = cls(path, version, connection)
        store.session_columns = {r[1] for r in connection.execute("PRAGMA table_info(sessions)")}
        store.message_columns = {r[1] for r in connection.execute("PRAGMA table_info(messages)")}
        return store

    @classmethod
    def open(cls, path: Path, version: int) -> AgentStore:
        """A store of schema ``version`` made earlier, to write more into."""
        connection = sqlite3.connect(path, isolation_level=None)
        store = cls(path, version, connection)
        store.session_columns = {r[1] for r in connection.execute("PRAGMA table_info(sessions)")}
        store.message_columns = {r[1] for r in connection.execute("PRAGMA table_info(messages)")}
        return store

    def has(self, column: str) -> bool:
        return column in self.session_columns

    def add_session(self, **columns: Any) -> str:
        """Insert a session; a column this shape lacks is a test mistake (KeyError)."""
        unknown = set(columns) - self.session_columns
        if unknown:
            raise KeyError(f"schema v{self.version} has no {sorted(unknown)}")
        names = ", ".join(columns)
        marks = ", ".join("?" for _ in columns)
        values = [json.dumps(v) if isinstance(v, dict) else v for v in columns.values()]
        self.connection.execute(f"INSERT INTO sessions ({names}) VALUES ({marks})", values)
        return str(columns["id"])

    def add_message(
        self, session_id: str, role: str, content: object, timestamp: float, **columns: Any
    ) -> int:
        unknown = set(columns) - self.message_columns
        if unknown:
            raise KeyError(f"schema v{self.version} messages have no {sorted(unknown)}")
        values: dict[str, Any] = {
            "session_id": session_id,
            "role": role,
            "content": json.dumps(content) if isinstance(content, list | dict) else content,
            "timestamp": timestamp,
            **{k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in columns.items()},
        }
        names = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        cursor = self.connection.execute(
            f"INSERT INTO messages ({names}) VALUES ({marks})", list(values.values())
        )
        self.connection.execute(
            "UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (session_id,)
        )
        return int(cursor.lastrowid or 0)

    def add_prompt(self, prompt: str) -> str:
        digest = hashlib.sha256(prompt.encode()).hexdigest()
        self.connection.execute(
            "INSERT OR IGNORE INTO system_prompts VALUES (?, ?)", (digest, prompt)
        )
        return digest

    def add_route(
        self, scope: str, session_key: str, entry: dict[str, Any], updated_at: float
    ) -> None:
        self.connection.execute(
            "INSERT INTO gateway_routing VALUES (?, ?, ?, ?)",
            (scope, session_key, json.dumps(entry), updated_at),
        )

    def close(self) -> None:
        self.connection.close()


# Ids in Hermes Agent's format (YYYYMMDD_HHMMSS_<6 hex>, 8 hex for gateway sessions).
ROOT = "20260301_090000_a1a1a1"
CONTINUATION = "20260301_100000_b2b2b2"
TIP = "20260301_110000_c3c3c3"
DELEGATE = "20260301_093000_d4d4d4"
BRANCH = "20260301_094500_e5e5e5"
TELEGRAM = "20260302_080000_f6f6f6f6"
ARCHIVED = "20260303_120000_0a0a0a"
T0 = 1_772_355_600.0  # 2026-03-01 09:00 UTC
SYSTEM_PROMPT = "You are Hermes, a careful engineering assistant."
CJK_QUESTION = "请帮我检查数据库迁移计划"
TOOL_CALL = {
    "id": "call_grep_1",
    "type": "function",
    "function": {"name": "terminal", "arguments": json.dumps({"command": "grep -rn migrate ."})},
}


@dataclass(frozen=True)
class Sample:
    """What :func:`sample_store` wrote, for the assertions."""

    path: Path
    version: int
    session_ids: tuple[str, ...]
    message_count: int
    """Visible messages (what an import brings)."""


def sample_store(
    path: Path, version: int, *, wal: bool = False, keep_open: bool = False
) -> tuple[Sample, AgentStore]:
    """A store of schema ``version`` holding the sample conversations."""
    store = AgentStore.create(path, version, wal=wal)
    lineage = store.has("parent_session_id")
    latest = store.has("pinned")
    visible = 0

    def session(**columns: Any) -> str:
        return store.add_session(**{k: v for k, v in columns.items() if store.has(k)})

    prompt_columns: dict[str, Any] = {"system_prompt": SYSTEM_PROMPT}
    if store.has("system_prompt_hash"):
        prompt_columns = {
            "system_prompt": None,
            "system_prompt_hash": store.add_prompt(SYSTEM_PROMPT),
        }
    session(
        id=ROOT, source="cli", user_id="ana", model="gpt-5", started_at=T0, ended_at=T0 + 3000,
        end_reason="compression", input_tokens=1200, output_tokens=340,
        model_config={"temperature": 0.2, "reasoning_effort": "high"},
        title="my project", title_source="user", cwd="/home/ana/shop", git_branch="main",
        git_repo_root="/home/ana/shop", billing_provider="openrouter", actual_cost_usd=0.042,
        estimated_cost_usd=0.05, cache_read_tokens=800, api_call_count=3,
        last_activity_at=T0 + 2990, **prompt_columns,
    )  # fmt: skip
    store.add_message(ROOT, "user", CJK_QUESTION, T0 + 10)
    reasoning = (
        {"reasoning": "The user wants the migration plan checked."}
        if store.message_columns >= {"reasoning"}
        else {}
    )
    store.add_message(
        ROOT, "assistant", "Let me look for the migration scripts.", T0 + 20,
        tool_calls=[TOOL_CALL], **reasoning,
    )  # fmt: skip
    store.add_message(
        ROOT, "tool", "db/migrate/001_init.sql\ndb/migrate/002_orders.sql", T0 + 25,
        tool_call_id="call_grep_1", tool_name="terminal",
    )  # fmt: skip
    store.add_message(
        ROOT, "assistant", "Two migrations: init and orders. 计划看起来没问题。", T0 + 30
    )
    visible += 4
    if store.message_columns >= {"active", "compacted"}:
        store.add_message(ROOT, "user", "an undone question", T0 + 40, active=0, compacted=0)
        store.add_message(
            ROOT, "user", "an early question compacted away", T0 + 41, active=0, compacted=1
        )
        store.add_message(ROOT, "session_meta", "{}", T0 + 42)
        visible += 1
    ids = [ROOT]
    if lineage:
        session(
            id=CONTINUATION, source="cli", user_id="ana", model="gpt-5", started_at=T0 + 3600,
            ended_at=T0 + 7000, end_reason="compression", parent_session_id=ROOT,
            title="my project #2", title_source="user", cwd="/home/ana/shop",
        )  # fmt: skip
        store.add_message(
            CONTINUATION, "user", "Continue with the orders migration rollback plan", T0 + 3610
        )
        store.add_message(
            CONTINUATION, "assistant",
            [{"type": "text", "text": "Here is the rollback plan."}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}],
            T0 + 3620,
        )  # fmt: skip
        session(
            id=TIP, source="cli", user_id="ana", model="gpt-5", started_at=T0 + 7200,
            parent_session_id=CONTINUATION, title="my project #3", cwd="/home/ana/shop",
        )  # fmt: skip
        store.add_message(TIP, "user", "Ship it", T0 + 7210)
        store.add_message(TIP, "assistant", "Shipped.", T0 + 7220)
        delegate_config: dict[str, Any] = {"_delegate_from": ROOT} if version >= 16 else {}
        session(
            id=DELEGATE, source="subagent", model="gpt-5-mini", started_at=T0 + 1800,
            ended_at=T0 + 1900, end_reason="done", parent_session_id=ROOT,
            model_config=delegate_config or None,
        )  # fmt: skip
        store.add_message(DELEGATE, "user", "Find every migration file", T0 + 1810)
        store.add_message(DELEGATE, "assistant", "Found two files.", T0 + 1820)
        session(
            id=BRANCH, source="cli", model="gpt-5", started_at=T0 + 2700, ended_at=T0 + 2800,
            end_reason="user_exit", parent_session_id=ROOT, title="what if we used postgres",
            title_source="llm", model_config={"_branched_from": ROOT, "temperature": 0.7},
        )  # fmt: skip
        store.add_message(BRANCH, "user", "What if we used postgres instead?", T0 + 2710)
        store.add_message(BRANCH, "assistant", "Then the orders table needs a sequence.", T0 + 2720)
        visible += 2 + 2 + 2 + 2
        ids += [CONTINUATION, TIP, DELEGATE, BRANCH]
    session(
        id=TELEGRAM, source="telegram", user_id="555", model="gpt-5", started_at=T0 + 82800,
        ended_at=T0 + 86000, end_reason="session_reset", chat_id="42", chat_type="dm",
        session_key="agent:main:telegram:dm:42", pinned=1, input_tokens=50, output_tokens=20,
        title="東京の天気" if store.has("title") else None, display_name="Ana",
        origin_json={"platform": "telegram", "chat_id": "42"},
    )  # fmt: skip
    store.add_message(
        TELEGRAM,
        "user",
        "明日の東京の天気は？",
        T0 + 82810,
        **({"platform_message_id": "9001"} if latest else {}),
    )
    store.add_message(TELEGRAM, "assistant", "Sunny tomorrow in Tokyo.", T0 + 82820)
    visible += 2
    ids.append(TELEGRAM)
    if latest:
        session(id=ARCHIVED, source="api_server", started_at=T0 + 172800, ended_at=T0 + 172900,
                end_reason="agent_close", archived=1)  # fmt: skip
        store.add_message(ARCHIVED, "user", "archived question about invoices", T0 + 172810)
        visible += 1
        ids.append(ARCHIVED)
        entry = {"session_key": "agent:main:telegram:dm:42", "session_id": TELEGRAM,
                 "platform": "telegram", "chat_type": "dm", "origin": {"platform": "telegram", "chat_id": "42", "user_id": "555"}}  # fmt: skip
        store.add_route(
            "/home/ana/.hermes/sessions", "agent:main:telegram:dm:42", entry, T0 + 86000
        )
        store.add_route(
            "/old/sessions", "agent:main:telegram:dm:42", {**entry, "platform": "old"}, T0 + 100
        )
        store.add_route(
            "/home/ana/.hermes/sessions", "agent:main:discord:dm:7", {"session_id": "gone"}, T0
        )
    sample = Sample(path, version, tuple(ids), visible)
    if not keep_open:
        store.close()
    return sample, store


def file_state(path: Path) -> dict[str, tuple[str, int]]:
    """SHA-256 and modification time of a database and its -wal / -shm (those present)."""
    found: dict[str, tuple[str, int]] = {}
    for suffix in ("", "-wal", "-shm"):
        candidate = Path(str(path) + suffix)
        if candidate.exists():
            found[suffix or "db"] = (
                hashlib.sha256(candidate.read_bytes()).hexdigest(),
                os.stat(candidate).st_mtime_ns,
            )
    return found
