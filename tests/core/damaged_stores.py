"""A realistic store to damage, what it holds, and the ways a file gets damaged (the tests of
``repair``, salvage and rolling backups).

The store is written through ``SessionStore`` as a chat would write it: sessions of user,
assistant, tool-call and tool-result messages of realistic lengths; a quarter of the tool
results are 12,000–30,000 characters, so they spill onto overflow pages; every user message
carries a word of its own (:func:`marker`) to search for."""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hermes_hookspecs import Message, ToolCall

from hermes_core.store import SessionStore

PAGE = 4096
_WORDS = [
    "deploy",
    "kubernetes",
    "rollback",
    "pod",
    "error",
    "trace",
    "function",
    "file",
    "config",
    "yaml",
    "retry",
    "timeout",
    "cache",
    "index",
    "query",
    "session",
    "token",
    "build",
    "cluster",
    "migrate",
    "schema",
    "volume",
    "secret",
    "branch",
    "commit",
]


def marker(session: int, message: int) -> str:
    """The word only user message ``message`` of session number ``session`` holds."""
    return f"mark{session}q{message}z"


def _text(rng: random.Random, length: int) -> str:
    words: list[str] = []
    size = 0
    while size < length:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:length]


def build_corpus(home: Path, *, sessions: int = 40, per_session: int = 100, seed: int = 7) -> None:
    """Write ``sessions`` ended sessions of ``per_session`` messages each into ``home``'s
    store, and close it cleanly (no write-ahead log left)."""
    rng = random.Random(seed)
    start = time.time() - 30 * 86_400
    with SessionStore.open(home) as store:
        for number in range(sessions):
            began = start + number * 3600
            session = store.create_session(
                "cli" if number % 3 else "telegram",
                title=f"session {number}",
                started_at=began,
                system_prompt=f"You are agent {number % 4}.",
                model="gpt-test",
                cwd=f"/work/project{number % 5}",
            )
            batch: list[Message] = []
            for index in range(per_session):
                moment = began + index
                kind = index % 4
                if kind == 0:
                    text = f"{marker(number, index)} {_text(rng, rng.randint(20, 400))}"
                    if index % 40 == 0:
                        text += " 部署回滚失败了吗"
                    batch.append(Message(role="user", content=text, timestamp=moment))
                elif kind == 1:
                    call = ToolCall(
                        name="terminal", arguments='{"command": "kubectl get pods"}',
                        id=f"call_{number}_{index}",
                    )  # fmt: skip
                    batch.append(
                        Message(
                            role="assistant",
                            content=_text(rng, rng.randint(200, 3000)),
                            tool_calls=(call,),
                            timestamp=moment,
                        )
                    )
                elif kind == 2:
                    length = rng.choice((600, 1500, 12_000, 30_000))
                    batch.append(
                        Message(
                            role="tool",
                            content=_text(rng, length),
                            tool_call_id=f"call_{number}_{index - 1}",
                            tool_name="terminal",
                            timestamp=moment,
                        )
                    )
                else:
                    batch.append(
                        Message(
                            role="assistant",
                            content=_text(rng, rng.randint(200, 2000)),
                            timestamp=moment,
                        )
                    )
                if len(batch) == 10:
                    store.append_messages(session.id, batch)
                    batch = []
            if batch:
                store.append_messages(session.id, batch)
            store.end_session(session.id, "user_exit", ended_at=began + per_session + 60)


@dataclass(frozen=True)
class Contents:
    """Every session and message row of a store, by id (all stored columns)."""

    sessions: dict[str, tuple[object, ...]]
    messages: dict[int, tuple[object, ...]]


SESSION_SQL = (
    "SELECT id, source, user_id, title, title_source, model, model_config, system_prompt_hash, "
    "parent_session_id, parent_kind, started_at, ended_at, end_reason, last_active_at, cwd, "
    "git_branch, git_repo_root, chat_id, chat_type, thread_id, session_key, billing_provider, "
    "cost_actual_usd, cost_estimated_usd, input_tokens, output_tokens, message_count, "
    "tool_call_count, pinned, archived, metadata, cache_read_tokens, cache_write_tokens "
    "FROM sessions"
)
MESSAGE_SQL = (
    "SELECT id, session_id, role, content, tool_calls, tool_call_id, tool_name, reasoning, "
    "timestamp, token_count, platform_message_id FROM messages"
)
COUNTERS = slice(26, 28)
"""Where ``message_count`` and ``tool_call_count`` sit in a session row of SESSION_SQL."""
METADATA = 30
"""Where ``metadata`` sits in a session row of SESSION_SQL."""


def contents(path: Path) -> Contents:
    """Read every row (read-only, leaving no ``-wal``/``-shm``: the file is not in use)."""
    connection = sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True)
    try:
        sessions = {row[0]: tuple(row) for row in connection.execute(SESSION_SQL)}
        messages = {row[0]: tuple(row) for row in connection.execute(MESSAGE_SQL)}
    finally:
        connection.close()
    return Contents(sessions, messages)


def integrity(path: Path) -> tuple[str, bool]:
    """``PRAGMA integrity_check``'s first line, and whether FTS5's integrity-check passes
    for the word index (compared with the messages)."""
    connection = sqlite3.connect(path)
    try:
        verdict = str(connection.execute("PRAGMA integrity_check").fetchone()[0])
        try:
            connection.execute(
                "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)"
            )
            index_ok = True
        except sqlite3.DatabaseError:
            index_ok = False
    finally:
        connection.close()
    return verdict, index_ok


def real_counts(path: Path) -> dict[str, tuple[int, int, int, int]]:
    """Session id → (message_count, real messages, tool_call_count, real tool calls)."""
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT s.id, s.message_count, "
            "(SELECT count(*) FROM messages m WHERE m.session_id = s.id), s.tool_call_count, "
            "(SELECT coalesce(sum(json_array_length(m.tool_calls)), 0) FROM messages m "
            " WHERE m.session_id = s.id AND m.tool_calls IS NOT NULL) FROM sessions s"
        ).fetchall()
    finally:
        connection.close()
    return {row[0]: tuple(row[1:]) for row in rows}


def _truncate_half(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as file:
        file.truncate(size // 2 // PAGE * PAGE)


def _cut_last_page(path: Path) -> None:
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size - PAGE)


def _zero_middle_page(path: Path) -> None:
    pages = path.stat().st_size // PAGE
    with path.open("r+b") as file:
        file.seek(pages // 2 * PAGE)
        file.write(b"\0" * PAGE)


def _garbage_header(path: Path) -> None:
    with path.open("r+b") as file:
        file.write(random.Random(11).randbytes(100))


def _garbage_first_page(path: Path) -> None:
    with path.open("r+b") as file:
        file.write(random.Random(12).randbytes(PAGE))


DAMAGES: dict[str, Callable[[Path], None]] = {
    "truncated at half": _truncate_half,
    "last page cut": _cut_last_page,
    "middle page zeroed": _zero_middle_page,
    "garbage header": _garbage_header,
    "garbage first page": _garbage_first_page,
}
