"""A long-lived writer (a gateway: several stores on one file in one process, each thread its
own) while short processes open and close the same store over and over, then kill -9 of the
writer: every write it acknowledged is in the store, and its write-ahead log was never deleted
under it (DESIGN §9 — one ``open()``/``close()`` of ``state.db`` by path in the writer used to
drop its POSIX locks, so the next short process checkpointed and deleted the WAL)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from installed_hermes import hermes_command
from store_helpers import REPO_ROOT, LineReader, message_counts, start_python

from hermes_core.store import STATE_DB_NAME

pytestmark = pytest.mark.slow

# Each round the writer opens one more store on the file (a new worker thread of a gateway,
# the automatic-title thread), appends a message with the first store, and says ACK. Opening
# a store in a process that already holds one is what used to drop the locks.
WRITER = """
import sys
from hermes_hookspecs import Message
from hermes_core.store import SessionStore

first = SessionStore.open(sys.argv[1])
session = first.create_session("cli")
others = []
print("SESSION", session.id, flush=True)
for line in sys.stdin:  # one round per line the test sends
    others.append(SessionStore.open(sys.argv[1]))
    if len(others) > 3:
        others.pop(0).close()
    number = int(line)
    first.append_message(session.id, Message(role="user", content=f"turn {number}"))
    print("ACK", number, flush=True)
"""

SHORT_PROCESS = """
import sys
from hermes_core.store import SessionStore

with SessionStore.open(sys.argv[1]) as store:
    store.list_sessions()
"""


def _deleted_store_files(pid: int) -> list[str]:
    """What the process has open of the store that no longer has a name (a deleted WAL)."""
    found = []
    for descriptor in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{descriptor}")
        except OSError:
            continue
        if STATE_DB_NAME in target and target.endswith("(deleted)"):
            found.append(target)
    return found


def _short_process(home: Path, kind: str) -> None:
    if kind == "library":
        command = [sys.executable, "-c", SHORT_PROCESS, str(home)]
    else:
        command = [hermes_command(), "--home", str(home), "sessions", "list", "--all"]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("kind", ["library", "cli"])
def test_short_processes_beside_a_writer_lose_nothing_it_acknowledged(
    tmp_path: Path, kind: str
) -> None:
    writer = start_python(WRITER, str(tmp_path))
    reader = LineReader(writer)
    assert writer.stdin is not None
    try:
        first = reader.readline()
        assert first is not None and first.startswith("SESSION "), first
        session_id = first.split()[1]
        acknowledged = []
        for number in range(12):
            writer.stdin.write(f"{number}\n".encode())
            writer.stdin.flush()
            assert reader.readline() == f"ACK {number}"
            acknowledged.append(number)
            _short_process(tmp_path, kind)
            assert _deleted_store_files(writer.pid) == [], "the WAL was deleted under the writer"
        writer.kill()
        assert writer.wait(20) == -signal.SIGKILL
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait(20)
    with sqlite3.connect(tmp_path / STATE_DB_NAME) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = [
            row[0]
            for row in connection.execute(
                "SELECT content FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
            )
        ]
        counts = message_counts(connection)
    assert stored == [f"turn {number}" for number in acknowledged]
    assert counts[session_id] == (len(acknowledged), len(acknowledged))


# A process holding its store asks the importers about its own files, or points an export at
# one (Hermes Agent's default home is ~/.hermes, this tool's too): the importers' discover /
# sniff and the export sink used to open the file by path, and closing it dropped the locks.
OWN_FILES = """
import os
import sys
from pathlib import Path
from hermes_hookspecs import Message
from hermes_core.exporting.errors import ExportError
from hermes_core.exporting.sink import FileSink
from hermes_core.importing import gather_candidates, importer_for_path
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

root, action = Path(sys.argv[1]), sys.argv[2]
home = root / ".hermes"
store = SessionStore.open(home)
session = store.create_session("cli")
store.append_message(session.id, Message(role="user", content="turn before"))
own = home / "state.db"
importers = PluginHost().importers()


def locks():
    # This process's POSIX locks on the store and its -shm (SQLite's), from /proc/locks:
    # "N: POSIX ADVISORY READ|WRITE PID MAJ:MIN:INODE START END".
    inodes = {os.stat(str(own) + suffix).st_ino for suffix in ("", "-shm")}
    held = []
    with open("/proc/locks") as listing:
        for line in listing:
            fields = line.split()
            if fields[1] != "POSIX" or int(fields[4]) != os.getpid():
                continue
            if int(fields[5].rsplit(":", 1)[1]) in inodes:
                held.append(" ".join(fields[3:]))
    return sorted(held)


before = locks()
if action == "discover":
    found = gather_candidates(importers, {"HOME": str(root)})
    print("RESULT", [str(log.candidate.path) for log in found], flush=True)
elif action.startswith("sniff"):
    path = Path(str(own) + action.removeprefix("sniff"))
    print("RESULT", importer_for_path(path, importers), flush=True)
else:
    try:
        FileSink("file", Path(str(own) + action.removeprefix("export"))).open_binary("x")
        print("RESULT written", flush=True)
    except ExportError as error:
        print("RESULT", str(error), flush=True)
after = locks()
print("LOCKS", len(before), "kept" if after == before else f"dropped: {before} -> {after}")
print("SESSION", session.id, flush=True)
for line in sys.stdin:
    number = int(line)
    store.append_message(session.id, Message(role="user", content=f"turn {number}"))
    print("ACK", number, flush=True)
"""


@pytest.mark.parametrize(
    ("action", "result"),
    [
        ("discover", "[]"),
        ("sniff", "None"),
        ("sniff-shm", "None"),
        ("export", "is a file of the session store in use"),
        ("export-wal", "is a file of the session store in use"),
    ],
)
def test_a_process_never_opens_its_own_store_for_the_importers_or_an_export(
    tmp_path: Path, action: str, result: str
) -> None:
    writer = start_python(OWN_FILES, str(tmp_path), action)
    reader = LineReader(writer)
    assert writer.stdin is not None
    home = tmp_path / ".hermes"
    try:
        said = reader.readline()
        assert said is not None and said.startswith("RESULT ") and result in said, said
        locks = reader.readline()
        assert locks is not None and locks.endswith(" kept"), locks
        assert int(locks.split()[1]) >= 2, locks  # on the file and on its -shm
        first = reader.readline()
        assert first is not None and first.startswith("SESSION "), first
        session_id = first.split()[1]
        for number in range(3):
            _short_process(home, "cli")
            assert _deleted_store_files(writer.pid) == [], "the WAL was deleted under the writer"
            writer.stdin.write(f"{number}\n".encode())
            writer.stdin.flush()
            assert reader.readline() == f"ACK {number}"
        writer.kill()
        assert writer.wait(20) == -signal.SIGKILL
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait(20)
    with sqlite3.connect(home / STATE_DB_NAME) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = [
            row[0]
            for row in connection.execute(
                "SELECT content FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
            )
        ]
    assert stored == ["turn before", "turn 0", "turn 1", "turn 2"]
