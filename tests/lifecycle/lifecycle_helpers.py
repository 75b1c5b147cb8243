"""Helpers shared by the lifecycle tests: sessions with chosen attributes and ages, and store
checks (plain functions, no fixtures)."""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path

from hermes_hookspecs import Message, ToolCall

from hermes_core.store import SessionStore, fulltext
from hermes_core.store.protocol import Store

REPO_ROOT = Path(__file__).resolve().parents[2]
DAY = 86_400.0


def make(
    store: SessionStore,
    source: str = "cli",
    *,
    days_ago: float = 1.0,
    idle_days: float | None = None,
    messages: int = 2,
    tool_calls: int = 0,
    ended: bool = True,
    end_reason: str = "user_exit",
    text: str = "hello there",
    **fields: object,
) -> str:
    """A session started ``days_ago`` days ago, last active ``idle_days`` ago (default: its
    start), with ``messages`` messages (the first ``tool_calls`` assistant ones call a tool)."""
    started = time.time() - days_ago * DAY
    last = time.time() - (idle_days if idle_days is not None else days_ago) * DAY
    session = store.create_session(source, started_at=started, **fields)  # type: ignore[arg-type]
    batch = []
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        calls = (ToolCall("terminal"),) if role == "assistant" and i // 2 < tool_calls else ()
        stamp = started + (last - started) * (i + 1) / max(messages, 1)
        batch.append(Message(role, f"{text} {i}", timestamp=stamp, tool_calls=calls))
    if messages:
        store.append_messages(session.id, batch)
    if ended:
        store.end_session(session.id, end_reason, ended_at=last)
    return session.id


def ids(store: Store) -> set[str]:
    """Every session id of the store (through the store protocol: any backend)."""
    return {session.id for session in store.iter_selected()}


def archived(store: Store) -> set[str]:
    return {session.id for session in store.iter_selected() if session.archived}


def assert_whole(store: Store) -> None:
    """:func:`assert_store_whole` for a SQLite store; for another backend, what the protocol
    can tell: every session's message counter equals its messages."""
    if isinstance(store, SessionStore):
        assert_store_whole(store.connection)
        return
    for session in store.iter_selected():
        real = store.message_count(session.id)
        assert session.message_count == real, f"{session.id}: counter {session.message_count}"


def found_words(store: Store, word: str) -> int:
    """Messages the store's word index finds for ``word`` (any backend)."""
    return len(store.search_index.ranked_matches(word, 100_000))


def assert_store_whole(connection: sqlite3.Connection) -> None:
    """Integrity ok, both indexes in step, no message without its session, every session's
    message counter equal to its rows."""
    assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
    assert fulltext.check(connection) is None
    counts = connection.execute(
        "SELECT s.id, s.message_count, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) "
        "FROM sessions s"
    ).fetchall()
    for session_id, counter, real in counts:
        assert counter == real, f"{session_id}: counter {counter}, rows {real}"
    orphans = connection.execute(
        "SELECT count(*) FROM messages WHERE session_id NOT IN (SELECT id FROM sessions)"
    ).fetchone()[0]
    assert orphans == 0
    stray = connection.execute(
        "SELECT count(*) FROM messages_cjk WHERE rowid NOT IN (SELECT id FROM messages)"
    ).fetchone()[0]
    assert stray == 0


def word_hits(connection: sqlite3.Connection, word: str) -> int:
    """Messages the word index finds for ``word``."""
    hits: int = connection.execute(
        "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (word,)
    ).fetchone()[0]
    return hits


FILTER_CASES: list[tuple[list[str], dict[str, object], dict[str, object]]] = [
    (["--older-than", "10"], {"days_ago": 20}, {"days_ago": 5}),
    (["--newer-than", "10"], {"days_ago": 5}, {"days_ago": 20}),
    (["--before", "10"], {"days_ago": 20, "idle_days": 1}, {"days_ago": 5, "idle_days": 1}),
    (["--after", "10"], {"days_ago": 5, "idle_days": 1}, {"days_ago": 20, "idle_days": 1}),
    (["--source", "telegram"], {"source": "telegram"}, {"source": "cli"}),
    (["--end-reason", "timeout"], {"end_reason": "timeout"}, {"end_reason": "user_exit"}),
    (["--user", "u1"], {"user_id": "u1"}, {"user_id": "u2"}),
    (["--chat-id", "c1"], {"chat_id": "c1"}, {"chat_id": "c2"}),
    (["--chat-type", "group"], {"chat_type": "group"}, {"chat_type": "dm"}),
    (["--provider", "openrouter"], {"billing_provider": "openrouter"}, {"billing_provider": "x"}),
    (["--title", "smoke"], {"title": "Smoke test run"}, {"title": "real work"}),
    (["--model", "gpt-5"], {"model": "openai/GPT-5-mini"}, {"model": "claude-opus"}),
    (["--branch", "feature/old"], {"git_branch": "feature/old-exp"}, {"git_branch": "main"}),
    (["--cwd", "/tmp/scratch"], {"cwd": "/tmp/scratch/x"}, {"cwd": "/tmp/scratchpad"}),
    (["--min-messages", "5"], {"messages": 6}, {"messages": 2}),
    (["--max-messages", "3"], {"messages": 2}, {"messages": 6}),
    (["--min-tokens", "1000"], {"input_tokens": 800, "output_tokens": 400}, {"input_tokens": 10}),
    (["--max-tokens", "500"], {"input_tokens": 100}, {"input_tokens": 800, "output_tokens": 400}),
    (["--min-cost", "1"], {"cost_actual_usd": 2.0}, {"cost_actual_usd": 0.5}),
    (["--max-cost", "0.01"], {"cost_estimated_usd": 0.005}, {"cost_actual_usd": 2.0}),
    (["--min-tool-calls", "2"], {"messages": 4, "tool_calls": 2}, {"messages": 4}),
    (["--max-tool-calls", "0"], {"messages": 4}, {"messages": 4, "tool_calls": 2}),
]
"""(filter arguments, attributes of a session they match, attributes of one they do not)."""


PYTHON = sys.executable
