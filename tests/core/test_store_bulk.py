"""The store's bulk path, ``SessionStore.add_whole_sessions``: many whole sessions per
transaction, one word-index insert per transaction (issue 24). What it stores must equal what
``create_session`` → ``append_messages`` → ``end_session`` store, and a kill -9 in the middle
must leave only whole sessions, every one of them searchable."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from hermes_hookspecs import Message, ToolCall
from store_helpers import LineReader, cjk_ids, fts_ids, message_counts, start_python

from hermes_core.store import STATE_DB_NAME, SessionStore, TitleInUse, fulltext
from hermes_core.store.imports import BULK_BATCH_MESSAGES, WholeSession

PER_SESSION = 100


def _messages(number: int) -> list[Message]:
    """A session's messages: user, assistant with a tool call, long tool output, CJK."""
    found: list[Message] = []
    for i in range(PER_SESSION):
        at = 1_000.0 + number * 1_000 + i
        kind = i % 4
        if kind == 0:
            found.append(Message("user", f"question s{number}m{i} about bulkword", timestamp=at))
        elif kind == 1:
            found.append(
                Message(
                    "assistant",
                    f"answer s{number}m{i}",
                    timestamp=at,
                    tool_calls=(ToolCall("terminal", '{"cmd": "ls"}', f"c{i}"),),
                )
            )
        elif kind == 2:
            text = "log line\n" * 3_000 + f"deeptoolword s{number}m{i}"
            found.append(Message("tool", text, timestamp=at, tool_name="terminal"))
        else:
            found.append(Message("user", f"中文批量测试 s{number}m{i}", timestamp=at))
    return found


def _whole(number: int, **fields: object) -> WholeSession:
    messages = _messages(number)
    return WholeSession(
        "claude-code",
        messages[0].timestamp or 0.0,
        messages,
        title=f"bulk session {number}",
        fields={
            "model": "m",
            "cwd": "/w",
            "ended_at": messages[-1].timestamp,
            "end_reason": "imported",
            **fields,
        },
    )


def _stored(store: SessionStore, session_id: str) -> tuple[object, ...]:
    s = store.get_session(session_id)
    messages = [
        (m.role, m.content, m.tool_calls, m.tool_name, m.timestamp)
        for m in store.messages(session_id)
    ]
    return (
        s.source,
        s.title,
        s.model,
        s.cwd,
        s.started_at,
        s.ended_at,
        s.end_reason,
        s.last_active_at,
        s.message_count,
        s.tool_call_count,
        messages,
    )


def test_bulk_sessions_equal_those_written_one_call_at_a_time(tmp_path: Path) -> None:
    sessions = [_whole(n) for n in range(2 * BULK_BATCH_MESSAGES // PER_SESSION + 3)]
    with SessionStore(tmp_path / "bulk" / STATE_DB_NAME) as bulk:
        bulk_ids = bulk.add_whole_sessions(sessions)
        with SessionStore(tmp_path / "api" / STATE_DB_NAME) as api:
            for whole, bulk_id in zip(sessions, bulk_ids, strict=True):
                created = api.create_session(
                    whole.source,
                    title=whole.title,
                    started_at=whole.started_at,
                    model="m",
                    cwd="/w",
                )
                api.append_messages(created.id, whole.messages)
                api.end_session(created.id, "imported", ended_at=whole.messages[-1].timestamp)
                assert _stored(api, created.id) == _stored(bulk, bulk_id)
        db = bulk.connection
        assert len(set(bulk_ids)) == len(sessions)
        assert fulltext.check(db) is None
        assert {counter == real for counter, real in message_counts(db).values()} == {True}
        everything = len(sessions) * PER_SESSION // 4
        assert len(fts_ids(db, "bulkword")) == everything
        assert len(fts_ids(db, "deeptoolword")) == everything  # 27 kB into a tool output
        assert len(cjk_ids(db, "批量测试")) == everything


def test_lone_surrogates_are_repaired_in_bulk_as_in_single_writes(tmp_path: Path) -> None:
    messages = [
        Message("user", "clean first", timestamp=1.0),
        Message("user", "high \ud800 alone", timestamp=2.0),
        Message("user", "clean between", timestamp=3.0),
        Message("assistant", "low \udc00 alone", timestamp=4.0, reasoning="why \ud800"),
    ]
    with SessionStore(tmp_path / STATE_DB_NAME) as store:
        (session_id,) = store.add_whole_sessions([WholeSession("cli", 1.0, messages)])
        stored = store.messages(session_id)
        assert [m.content for m in stored] == [
            "clean first",
            "high \ufffd alone",
            "clean between",
            "low \ufffd alone",
        ]
        assert stored[3].reasoning == "why \ufffd"
        assert store.get_session(session_id).message_count == 4
        assert fulltext.check(store.connection) is None


def test_a_session_that_cannot_be_stored_costs_its_batch_only(tmp_path: Path) -> None:
    per_batch = BULK_BATCH_MESSAGES // PER_SESSION  # short messages: batches end by count
    short = [Message("user", f"short {i}", timestamp=float(i)) for i in range(PER_SESSION)]
    sessions = [
        WholeSession("cli", 0.0, short, title=f"bulk session {n}") for n in range(per_batch + 2)
    ]
    with SessionStore(tmp_path / STATE_DB_NAME) as store:
        store.create_session("cli", title="taken")
        sessions.append(WholeSession("cli", 0.0, short, title="taken"))
        with pytest.raises(TitleInUse):
            store.add_whole_sessions(sessions)
        titles = {s.title for s in store.list_sessions(limit=None)}
        assert titles == {"taken"} | {f"bulk session {n}" for n in range(per_batch)}
        assert fulltext.check(store.connection) is None
        bad = WholeSession("cli", 1.0, [Message("user", "fine"), Message("robot", "no")])
        with pytest.raises(ValueError, match="message 2: role 'robot'"):
            store.add_whole_sessions([bad])
        assert len(store.list_sessions(limit=None)) == per_batch + 1


WRITER = f"""
import sys
from hermes_hookspecs import Message
from hermes_core.store import SessionStore
from hermes_core.store.imports import WholeSession

store = SessionStore(sys.argv[1])
number = 0
while True:  # until killed
    batch = []
    for _ in range(30):
        number += 1
        messages = [
            Message("user", f"crashbulk {{number}} m{{i}} 崩溃批量 " + "word " * (i * 40),
                    timestamp=float(number * 1000 + i))
            for i in range({PER_SESSION})
        ]
        batch.append(WholeSession("cli", float(number * 1000), messages, title=f"s{{number}}"))
    ids = store.add_whole_sessions(batch)
    print("ACK", " ".join(ids), flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("acks_wanted", [1, 3])
def test_kill_9_mid_bulk_load_leaves_whole_searchable_sessions(
    tmp_path: Path, acks_wanted: int
) -> None:
    path = tmp_path / STATE_DB_NAME
    SessionStore(path).close()
    child = start_python(WRITER, str(path))
    reader = LineReader(child)
    acked: list[str] = []
    try:
        while len(acked) < acks_wanted * 30:
            line = reader.readline()
            if line is None or not line.startswith("ACK "):
                child.wait(timeout=20)
                assert child.stderr is not None
                pytest.fail(f"writer stopped: {line!r}\n{child.stderr.read().decode()}")
            acked.extend(line.split()[1:])
        assert child.poll() is None, "the writer finished on its own; it should loop forever"
        child.send_signal(signal.SIGKILL)  # mid-way through the next call (it never stops)
        child.wait(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    with SessionStore(path) as store:
        db = store.connection
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert fulltext.check(db) is None
        counts = message_counts(db)
        assert set(acked) <= set(counts)
        assert {counts[s] for s in counts} == {(PER_SESSION, PER_SESSION)}
        stored = sum(real for _, real in counts.values())
        assert len(fts_ids(db, "crashbulk")) == stored
        assert len(cjk_ids(db, "崩溃批量")) == stored
        # The store takes writes (single and bulk) after the crash.
        store.add_whole_sessions([WholeSession("cli", 1.0, [Message("user", "after")])])
        assert fts_ids(db, "after")
