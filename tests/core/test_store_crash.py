"""kill -9 a writer in the middle of a bulk insert; the store must come back whole (DESIGN §6)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from store_helpers import LineReader, message_counts, start_python

from hermes_core.store import STATE_DB_NAME, SessionStore, fulltext

pytestmark = pytest.mark.slow

BATCH = 200
BATCHES_PER_SESSION = 3

WRITER = f"""
import sys
from hermes_hookspecs import Message
from hermes_core.store import SessionStore

store = SessionStore(sys.argv[1])
sequence = 0
while True:  # until killed
    session = store.create_session("cli")
    for batch in range({BATCHES_PER_SESSION}):
        messages = []
        for i in range({BATCH}):
            sequence += 1
            if i % 10 == 3:
                text = f"crash 崩溃测试 中文内容 {{session.id}} b{{batch}} m{{i}}"
                messages.append(Message(role="user", content=text))
            elif i % 10 == 7:
                text = "tool output line\\n" * 200 + f"{{session.id}} b{{batch}} m{{i}}"
                messages.append(Message(role="tool", content=text, tool_name="terminal"))
            else:
                text = f"crash message {{sequence}} {{session.id}} b{{batch}} m{{i}}"
                messages.append(Message(role="assistant", content=text))
        ids = store.append_messages(session.id, messages)
        print("ACK", session.id, (batch + 1) * {BATCH}, ids[0], ids[-1], flush=True)
"""

# (ACKs to wait for, extra delay before the kill in seconds): varied so the kill lands at
# different points of a batch: right after a commit, and some way into the next one.
CYCLES = [(2, 0.0), (5, 0.002), (3, 0.005), (7, 0.011), (4, 0.017)]


def _kill_mid_write(path: Path, acks_wanted: int, delay: float) -> list[tuple[str, int, int, int]]:
    child = start_python(WRITER, str(path))
    reader = LineReader(child)
    acked: list[tuple[str, int, int, int]] = []
    try:
        while len(acked) < acks_wanted:
            line = reader.readline()
            if line is None or not line.startswith("ACK "):
                child.wait(timeout=20)
                assert child.stderr is not None
                pytest.fail(f"writer stopped: {line!r}\n{child.stderr.read().decode()}")
            _, session_id, total, first, last = line.split()
            acked.append((session_id, int(total), int(first), int(last)))
        if delay:
            time.sleep(delay)  # not synchronisation: only varies where the kill lands
        assert child.poll() is None, "the writer finished on its own; it should loop forever"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    assert child.stderr is not None
    err = child.stderr.read().decode(errors="replace")
    assert "Traceback" not in err, err
    # Lines written after the ones we read are ACKs too.
    while (line := reader.readline()) is not None:
        if line.startswith("ACK "):
            _, session_id, total, first, last = line.split()
            acked.append((session_id, int(total), int(first), int(last)))
    return acked


def _assert_whole(path: Path, acked: list[tuple[str, int, int, int]]) -> None:
    with SessionStore(path) as store:
        db = store.connection
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert fulltext.check(db) is None
        counts = message_counts(db)
        for session_id, (counter, real) in counts.items():
            assert real % BATCH == 0, f"{session_id} holds a partial batch ({real} messages)"
            assert counter == real, f"{session_id}: message_count {counter}, rows {real}"
        for session_id, total, first, last in acked:
            assert counts[session_id][1] >= total
            ids = [
                row[0]
                for row in db.execute(
                    "SELECT id FROM messages WHERE session_id = ? AND id BETWEEN ? AND ?",
                    (session_id, first, last),
                )
            ]
            assert ids == list(range(first, last + 1)), f"ACKed batch of {session_id} incomplete"
        # Every stored message is findable, and nothing else is.
        crash_rows = db.execute(
            "SELECT count(*) FROM messages WHERE content LIKE 'crash %'"
        ).fetchone()[0]
        found = db.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'crash'"
        ).fetchone()[0]
        assert found == crash_rows
        cjk_rows = db.execute("SELECT count(*) FROM messages WHERE content LIKE '%崩溃测试%'")
        cjk_found = db.execute(
            "SELECT count(*) FROM messages_cjk WHERE messages_cjk MATCH '\"崩溃测试\"'"
        )
        assert cjk_found.fetchone()[0] == cjk_rows.fetchone()[0]
        # The store still takes writes after the crash.
        session = store.create_session()
        assert store.get_session(session.id).message_count == 0


def test_kill_9_during_bulk_insert_leaves_only_whole_batches(tmp_path: Path) -> None:
    path = tmp_path / STATE_DB_NAME
    SessionStore(path).close()
    all_acked: list[tuple[str, int, int, int]] = []
    for acks_wanted, delay in CYCLES:
        acked = _kill_mid_write(path, acks_wanted, delay)
        assert len(acked) >= acks_wanted
        all_acked.extend(acked)
        _assert_whole(path, all_acked)
    with SessionStore(path) as store:
        total = store.connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    assert total >= sum(wanted for wanted, _ in CYCLES) * BATCH
