"""Several writer processes appending to one store at once, on every backend: each process
its own session and all of them one shared session, as a gateway's workers and CLI commands
share a store. Nothing is lost, counters match the rows, each append's ids are the ids of
exactly its messages, and each writer's messages keep their order."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conformance_types import StoreFactory

pytestmark = pytest.mark.slow

WRITERS = 4
APPENDS = 60
SHARED_EVERY = 4

WRITER = f"""
import json, sys
from hermes_hookspecs import Message
from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url

url, own, shared, writer = sys.argv[1:5]
store = open_url(url, host=PluginHost())
print("READY", flush=True)
if sys.stdin.readline().strip() != "go":
    sys.exit(3)
appended = []
for n in range({APPENDS}):
    batch = [Message("user", f"w{{writer}} n{{n}} part{{k}}") for k in range(1 + n % 3)]
    ids = store.append_messages(own, batch)
    appended.append([ids.start, ids.stop, [m.content for m in batch]])
    if n % {SHARED_EVERY} == 0:
        reply = Message("assistant", f"shared w{{writer}} n{{n}}")
        ids = store.append_messages(shared, [reply], input_tokens=3, output_tokens=5)
        appended.append([ids.start, ids.stop, [reply.content]])
store.close()
print("DONE " + json.dumps(appended), flush=True)
"""


def _writer(url: str, own: str, shared: str, number: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, url, own, shared, str(number)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_writer_processes_appending_at_once_lose_nothing_and_keep_their_order(
    store_factory: StoreFactory, database_url: str
) -> None:
    store = store_factory()
    own = [store.create_session("cli").id for _ in range(WRITERS)]
    shared = store.create_session("telegram").id
    writers = [_writer(database_url, own[n], shared, n) for n in range(WRITERS)]
    appended: list[tuple[int, int, list[str]]] = []
    try:
        for writer in writers:
            assert writer.stdout is not None
            line = writer.stdout.readline().strip()
            assert line == "READY", writer.stderr.read() if writer.stderr else ""
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.close()
        for writer in writers:
            writer.wait(timeout=180)  # what it writes fits in a pipe's buffer
            assert writer.stdout is not None and writer.stderr is not None
            out, err = writer.stdout.read(), writer.stderr.read()
            assert writer.returncode == 0, err
            assert "Traceback" not in err, err
            last = out.strip().splitlines()[-1]
            assert last.startswith("DONE "), err
            appended += [(start, stop, texts) for start, stop, texts in json.loads(last[5:])]
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.wait()

    stored = {
        session_id: store.messages(session_id) for session_id in [*own, shared]
    }
    by_id = {m.id: (session_id, m.content) for session_id, ms in stored.items() for m in ms}
    # Every append's ids are its messages', in its order, and no two appends share an id.
    claimed: set[int] = set()
    for start, stop, texts in appended:
        ids = range(start, stop)
        assert [by_id[i][1] for i in ids] == texts
        assert claimed.isdisjoint(ids)
        claimed.update(ids)
    assert claimed == set(by_id)
    per_writer = sum(1 + n % 3 for n in range(APPENDS))
    shared_per_writer = len(range(0, APPENDS, SHARED_EVERY))
    for number, session_id in enumerate(own):
        contents = [m.content for m in stored[session_id]]
        assert len(contents) == per_writer
        assert contents == [
            f"w{number} n{n} part{k}" for n in range(APPENDS) for k in range(1 + n % 3)
        ]
        assert store.get_session(session_id).message_count == per_writer
    shared_contents = [m.content for m in stored[shared]]
    for number in range(WRITERS):
        mine = [c for c in shared_contents if c.startswith(f"shared w{number} ")]
        assert mine == [f"shared w{number} n{n}" for n in range(0, APPENDS, SHARED_EVERY)]
    together = store.get_session(shared)
    assert together.message_count == WRITERS * shared_per_writer
    assert (together.input_tokens, together.output_tokens) == (
        3 * WRITERS * shared_per_writer,
        5 * WRITERS * shared_per_writer,
    )
    ids = [m.id for m in stored[shared]]
    assert ids == sorted(ids)
