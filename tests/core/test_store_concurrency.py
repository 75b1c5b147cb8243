"""Several writer processes on one store at once (SPEC S1: many readers, one writer)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from store_helpers import LineReader, count, fts_ids, message_counts, start_python

from hermes_core.store import STATE_DB_NAME, SessionStore, fulltext

pytestmark = pytest.mark.slow

WRITERS = 4
OWN_APPENDS = 200
SHARED_EVERY = 10  # every 10th append of each writer also goes to the shared session

WRITER = f"""
import sys
from hermes_hookspecs import Message
from hermes_core.store import SessionStore

path, own, shared, writer = sys.argv[1:5]
with SessionStore(path) as store:
    print("READY", flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit(3)
    for n in range({OWN_APPENDS}):
        text = f"writer{{writer}} message{{n}} concurrency 并发写入测试"
        store.append_message(own, Message(role="user" if n % 2 else "assistant", content=text))
        if n % {SHARED_EVERY} == 0:
            store.append_message(shared, Message(role="user", content=f"shared {{writer}} {{n}}"))
print("DONE", flush=True)
"""

OPENER = """
import sys
from hermes_hookspecs import Message
from hermes_core.store import SessionStore

path = sys.argv[1]
print("READY", flush=True)
if sys.stdin.readline().strip() != "go":
    sys.exit(3)
with SessionStore(path) as store:
    session = store.create_session("cli")
    store.append_messages(session.id, [Message(role="user", content="first open race")] * 5)
print("DONE", session.id, flush=True)
"""


def _release_all(children: list[subprocess.Popen[bytes]]) -> list[str]:
    """Wait until every child said READY, then let them all go at once; returns their last
    lines after they finished."""
    readers = [LineReader(child) for child in children]
    for child, reader in zip(children, readers, strict=True):
        line = reader.readline()
        if line != "READY":
            _, err = child.communicate(timeout=20)
            pytest.fail(f"child did not start: {line!r}\n{err.decode(errors='replace')}")
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        child.stdin.flush()
        child.stdin.close()
    finals = []
    for child, reader in zip(children, readers, strict=True):
        line = reader.readline(timeout=60)
        child.wait(timeout=60)
        assert child.stderr is not None
        err = child.stderr.read().decode(errors="replace")
        assert child.returncode == 0, err
        assert "database is locked" not in err
        assert "Traceback" not in err, err
        assert line is not None and line.startswith("DONE"), err
        finals.append(line)
    return finals


def _kill_all(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / STATE_DB_NAME
    with SessionStore(path) as store:
        own = [store.create_session("cli").id for _ in range(WRITERS)]
        shared = store.create_session("cli").id
    children = [start_python(WRITER, str(path), own[n], shared, str(n)) for n in range(WRITERS)]
    try:
        _release_all(children)
    finally:
        _kill_all(children)

    shared_per_writer = len(range(0, OWN_APPENDS, SHARED_EVERY))
    with SessionStore(path) as store:
        db = store.connection
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert fulltext.check(db) is None
        counts = message_counts(db)
        for session_id in own:
            assert counts[session_id] == (OWN_APPENDS, OWN_APPENDS)
        assert counts[shared] == (WRITERS * shared_per_writer,) * 2
        total = WRITERS * (OWN_APPENDS + shared_per_writer)
        assert count(db, "SELECT count(*) FROM messages") == total
        assert len(fts_ids(db, "concurrency")) == WRITERS * OWN_APPENDS
        assert count(db, "SELECT count(*) FROM messages_cjk") == WRITERS * OWN_APPENDS
        for n, session_id in enumerate(own):
            contents = [m.content for m in store.messages(session_id)]
            # Each writer's messages arrive in the order it wrote them.
            assert [int(c.split()[1].removeprefix("message")) for c in contents] == list(
                range(OWN_APPENDS)
            )
            assert all(c.startswith(f"writer{n} ") for c in contents)
        shared_contents = [m.content for m in store.messages(shared)]
        for n in range(WRITERS):
            mine = [c for c in shared_contents if c.startswith(f"shared {n} ")]
            assert mine == [f"shared {n} {i}" for i in range(0, OWN_APPENDS, SHARED_EVERY)]
        ids = [row[0] for row in db.execute("SELECT id FROM messages ORDER BY id")]
        assert ids == list(range(ids[0], ids[0] + total))


def test_processes_opening_a_new_store_at_once_agree_on_one_schema(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / STATE_DB_NAME
    children = [start_python(OPENER, str(path)) for _ in range(WRITERS)]
    try:
        finals = _release_all(children)
    finally:
        _kill_all(children)
    created = {line.split()[1] for line in finals}
    assert len(created) == WRITERS
    with SessionStore(path) as store:
        db = store.connection
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert fulltext.check(db) is None
        assert {row[0] for row in db.execute("SELECT id FROM sessions")} == created
        assert set(message_counts(db).values()) == {(5, 5)}
