"""The store on a full disk, a read-only mount and an immutable file, driven as users run it:
the installed ``hermes`` in subprocesses, beside a long-lived process that holds the store open
as a gateway or a chat does. Every writing command says in one line what is wrong (never a
traceback, never advice to repair), every reading command still answers, and nothing that was
stored is lost or changed (DESIGN §9)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from disks import SmallDisk
from installed_hermes import run_hermes_in
from store_helpers import LineReader, assistant, start_python, user

from hermes_core.store import STATE_DB_NAME, SessionStore
from hermes_core.store.schema import SCHEMA_VERSION

pytestmark = pytest.mark.slow

DAY = 86_400.0

# A long-lived process holding the store open, as a gateway or a chat does. Each line it reads
# asks for one append; it answers ACK, or the class of the error the store raised.
HOLDER = """
import sys
from hermes_hookspecs import Message
from hermes_core.store import SessionStore, StoreError

store = SessionStore.open(sys.argv[1])
session = store.create_session("cli")
print("READY", session.id, flush=True)
for line in sys.stdin:
    try:
        store.append_message(session.id, Message(role="user", content=line.strip()))
    except StoreError as error:
        print("REFUSED", type(error).__name__, error, flush=True)
    else:
        print("ACK", flush=True)
"""

WRITING_COMMANDS = [
    ("sessions", "rename", "deploy notes", "renamed"),
    ("sessions", "pin", "deploy notes"),
    ("sessions", "archive", "--older-than", "30d", "--yes"),
    ("sessions", "prune", "--older-than", "30d", "--yes"),
    ("sessions", "delete", "deploy notes", "--yes"),
    ("sessions", "optimize"),
]
READING_COMMANDS = [
    ("sessions", "list", "--all"),
    ("sessions", "show", "deploy notes"),
    ("sessions", "search", "kubernetes"),
    ("sessions", "stats"),
    ("insights", "--days", "3650"),
]


def _populate(home: Path) -> set[str]:
    """Three ended sessions, idle for 200 days (prune and archive would take them); their ids."""
    old = time.time() - 200 * DAY
    ids = set()
    with SessionStore.open(home) as store:
        for number, title in enumerate(("deploy notes", "kubernetes upgrade", "lunch")):
            session = store.create_session("cli", title=title, started_at=old + number)
            store.append_messages(
                session.id,
                [
                    user(f"{title}: how do I roll the kubernetes deploy back?", timestamp=old),
                    assistant("kubectl rollout undo " * 40, timestamp=old + 1),
                ],
            )
            store.end_session(session.id, "user_exit", ended_at=old + 2)
            ids.add(session.id)
    return ids


Snapshot = tuple[dict[str, tuple[object, ...]], list[tuple[str, str, str]]]


def _snapshot(home: Path) -> Snapshot:
    """Each session's title, flags, counters and end; every message (reads only)."""
    connection = sqlite3.connect(home / STATE_DB_NAME)
    try:
        sessions = {
            row[0]: tuple(row[1:])
            for row in connection.execute(
                "SELECT id, title, pinned, archived, message_count, ended_at FROM sessions"
            )
        }
        messages = connection.execute(
            "SELECT session_id, role, content FROM messages ORDER BY id"
        ).fetchall()
    finally:
        connection.close()
    return sessions, messages


def _integrity(home: Path) -> str:
    connection = sqlite3.connect(home / STATE_DB_NAME)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


def _assert_one_line_refusal(result: subprocess.CompletedProcess[str], says: str) -> None:
    command = " ".join(result.args[3:])
    assert result.returncode == 1, (command, result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("hermes:")]
    assert len(errors) == 1 and says in errors[0], (command, result.stderr)
    assert "Traceback" not in result.stderr, (command, result.stderr)
    assert "repair" not in result.stderr + result.stdout, (command, result.stderr)


def _assert_reads_work(home: Path, tmp_path: Path, session_ids: set[str]) -> None:
    """Every reading command answers; an export holds exactly ``session_ids``."""
    for command in READING_COMMANDS:
        result = run_hermes_in(home, *command)
        assert result.returncode == 0, (command, result.stderr)
        assert "Traceback" not in result.stderr
    shown = run_hermes_in(home, "sessions", "show", "deploy notes")
    assert "roll the kubernetes deploy back" in shown.stdout
    target = tmp_path / "elsewhere.jsonl"
    exported = run_hermes_in(home, "sessions", "export", str(target))
    assert exported.returncode == 0, exported.stderr
    exported_ids = {
        json.loads(line)["session"]["id"]
        for line in target.read_text(encoding="utf-8").splitlines()
    }
    assert exported_ids == session_ids


class Holder:
    """The long-lived process (see HOLDER)."""

    def __init__(self, home: Path) -> None:
        self.process = start_python(HOLDER, str(home))
        self.reader = LineReader(self.process)
        ready = self.reader.readline()
        assert ready is not None and ready.startswith("READY "), ready
        self.session_id = ready.split()[1]

    def append(self, text: str) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{text}\n".encode())
        self.process.stdin.flush()
        answer = self.reader.readline()
        assert answer is not None, "the holder died"
        return answer

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(20)


@pytest.fixture
def holder_factory() -> Iterator[list[Holder]]:
    holders: list[Holder] = []
    try:
        yield holders
    finally:
        for holder in holders:
            holder.kill()


def test_a_full_disk_beside_a_process_holding_the_store(
    small_disk: SmallDisk, tmp_path: Path, holder_factory: list[Holder]
) -> None:
    home = small_disk.mount / "home"
    _populate(home)
    backup = tmp_path / "backup.jsonl"
    assert run_hermes_in(home, "sessions", "export", str(backup)).returncode == 0
    holder = Holder(home)
    holder_factory.append(holder)
    assert holder.append("stored before the disk filled up") == "ACK"
    before = _snapshot(home)

    small_disk.fill()
    refused = holder.append("refused: no room")
    assert refused.startswith("REFUSED StoreFull "), refused
    assert "is full; nothing was written" in refused
    for command in WRITING_COMMANDS:
        _assert_one_line_refusal(run_hermes_in(home, *command), "is full; nothing was written")
    _assert_one_line_refusal(
        run_hermes_in(home, "sessions", "import", "--from", "jsonl", str(backup)), "is full"
    )
    _assert_reads_work(home, tmp_path, set(before[0]))
    assert _snapshot(home) == before

    small_disk.free()
    assert holder.append("stored once there was room again") == "ACK"
    holder.kill()  # kill -9: whatever it acknowledged must be in the file
    sessions, messages = _snapshot(home)
    assert messages == [
        *before[1],
        (holder.session_id, "user", "stored once there was room again"),
    ]
    held = before[0][holder.session_id]
    assert sessions == {**before[0], holder.session_id: (*held[:3], 2, held[4])}
    assert _integrity(home) == "ok"
    renamed = run_hermes_in(home, "sessions", "rename", "deploy notes", "renamed")
    assert renamed.returncode == 0, renamed.stderr


def test_a_full_disk_with_nobody_holding_the_store_still_reads(
    small_disk: SmallDisk, tmp_path: Path
) -> None:
    home = small_disk.mount / "home"
    ids = _populate(home)
    before = _snapshot(home)
    assert not (home / f"{STATE_DB_NAME}-wal").exists(), "closed cleanly: no log left"
    small_disk.fill()
    _assert_reads_work(home, tmp_path, ids)
    for command in WRITING_COMMANDS:
        _assert_one_line_refusal(run_hermes_in(home, *command), "is full; nothing was written")
    small_disk.free()
    assert _snapshot(home) == before
    assert _integrity(home) == "ok"


def test_a_read_only_mount_reads_and_refuses_writes_in_one_line(
    small_disk: SmallDisk, tmp_path: Path, holder_factory: list[Holder]
) -> None:
    home = small_disk.mount / "home"
    ids = _populate(home)
    # A process killed -9 leaves its write-ahead log behind, holding what it acknowledged.
    holder = Holder(home)
    holder_factory.append(holder)
    assert holder.append("only in the write-ahead log") == "ACK"
    holder.kill()
    assert (home / f"{STATE_DB_NAME}-wal").stat().st_size > 0
    small_disk.remount("ro")
    try:
        # What was only in the log is read too.
        _assert_reads_work(home, tmp_path, ids | {holder.session_id})
        for command in [*WRITING_COMMANDS, ("gateway", "run")]:
            _assert_one_line_refusal(run_hermes_in(home, *command), "is read-only")
    finally:
        small_disk.remount("rw")
    assert _integrity(home) == "ok"


def test_a_read_only_mount_of_a_store_closed_cleanly(small_disk: SmallDisk, tmp_path: Path) -> None:
    """No ``-wal``/``-shm`` beside the file and none can be made: read as an immutable file."""
    home = small_disk.mount / "home"
    ids = _populate(home)
    small_disk.remount("ro")
    try:
        _assert_reads_work(home, tmp_path, ids)
        _assert_one_line_refusal(run_hermes_in(home, "sessions", "pin", "lunch"), "is read-only")
    finally:
        small_disk.remount("rw")


def test_an_immutable_store_file_reads_and_refuses_writes(
    tmp_path: Path, make_immutable: Callable[[Path], None]
) -> None:
    home = tmp_path / "home"
    ids = _populate(home)
    before = _snapshot(home)
    make_immutable(home / STATE_DB_NAME)
    _assert_reads_work(home, tmp_path, ids)
    for command in WRITING_COMMANDS:
        _assert_one_line_refusal(run_hermes_in(home, *command), "is read-only")
    assert _snapshot(home) == before


def test_a_store_made_by_a_newer_hermes_is_named_so_by_every_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _populate(home)
    connection = sqlite3.connect(home / STATE_DB_NAME)
    connection.execute("PRAGMA user_version = 999")
    connection.close()
    expected = f"was made by a newer Hermes (schema 999, this one knows {SCHEMA_VERSION}): "
    for command in [*READING_COMMANDS[:2], *WRITING_COMMANDS[:2]]:
        result = run_hermes_in(home, *command)
        _assert_one_line_refusal(result, expected + "upgrade hermes-sessions")


@pytest.mark.parametrize("damage", ["garbage header", "truncated at half"])
def test_a_store_that_fails_to_open_leaves_no_connection_behind(
    tmp_path: Path, damage: str
) -> None:
    """A failed open closes what it opened: this process may then read the file by path
    (as repair's salvage does) without dropping locks it does not hold."""
    from damaged_stores import DAMAGES

    from hermes_core.store import StoreDamaged
    from hermes_core.store.connection import holds_open

    home = tmp_path / "home"
    _populate(home)
    path = home / STATE_DB_NAME
    DAMAGES[damage](path)
    with pytest.raises(StoreDamaged):
        SessionStore(path).close()
    assert not holds_open(path)
