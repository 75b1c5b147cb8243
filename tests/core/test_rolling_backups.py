"""Rolling backups as users get them: the installed ``hermes`` (and a long-lived writer, as a
chat or the gateway is) takes a backup of ``state.db`` when the newest is older than the
interval, keeps the newest ``store.backups.keep``, never while another process is taking one,
and a backup that cannot be written (a full disk) leaves nothing behind and disturbs no
writer. How long writers wait meanwhile is a bench figure (``bench/backups.py``), not a test."""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from damaged_stores import build_corpus, contents
from disks import SmallDisk, fill
from installed_hermes import run_hermes_in
from store_helpers import LineReader, start_python, wait_for_backups

from hermes_core.store import STATE_DB_NAME
from hermes_core.store.backups import (
    INLINE_BACKUP_BYTES,
    LAST_FAILURE_KEY,
    PARTIAL_SUFFIX,
    BackupSettings,
    list_backups,
    take_backup,
)

pytestmark = pytest.mark.slow

DAY = 86_400.0

# A long-lived writer, as a chat or the gateway is: it takes rolling backups as configured in
# its home's config.yaml (what the command line does for every process that opens the store
# for writing), and appends one message per line it reads, answering ACK or the error.
WRITER = """
import sys
from hermes_hookspecs import Message
from hermes_core.config import load_config
from hermes_core.store import SessionStore, StoreError
from hermes_core.store.backups import BackupSettings

home = sys.argv[1]
store = SessionStore.open(home)
store.start_backups(BackupSettings.from_config(load_config(store.path.parent)))
session = store.create_session("cli", title="writer")
print("READY", session.id, flush=True)
for line in sys.stdin:
    try:
        store.append_message(session.id, Message(role="user", content=line.strip() * 50))
    except StoreError as error:
        print("REFUSED", type(error).__name__, error, flush=True)
    else:
        print("ACK", flush=True)
store.close()
print("CLOSED", flush=True)
"""


class Writer:
    def __init__(self, home: Path) -> None:
        self.process = start_python(WRITER, str(home))
        self.reader = LineReader(self.process)
        ready = self.reader.readline(timeout=60)
        assert ready is not None and ready.startswith("READY "), (ready, self._stderr())
        self.session_id = ready.split()[1]

    def append(self, text: str) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{text}\n".encode())
        self.process.stdin.flush()
        answer = self.reader.readline(timeout=60)
        assert answer is not None, self._stderr()
        return answer

    def close(self) -> None:
        """End it as a user does (end of input): the store closes, the backup finishes."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.reader.readline(timeout=120) == "CLOSED", self._stderr()
        self.process.wait(30)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(20)

    def _stderr(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        assert self.process.stderr is not None
        return self.process.stderr.read().decode(errors="replace")


@pytest.fixture
def writers() -> Iterator[list[Writer]]:
    started: list[Writer] = []
    try:
        yield started
    finally:
        for writer in started:
            writer.kill()


def _config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text, encoding="utf-8")


def _sound(path: Path) -> tuple[str, int, int]:
    """A backup's integrity_check, sessions and messages (read-only, leaving no files)."""
    connection = sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True)
    try:
        return (
            str(connection.execute("PRAGMA integrity_check").fetchone()[0]),
            connection.execute("SELECT count(*) FROM sessions").fetchone()[0],
            connection.execute("SELECT count(*) FROM messages").fetchone()[0],
        )
    finally:
        connection.close()


def _failure(store: Path) -> str | None:
    connection = sqlite3.connect(f"{store.absolute().as_uri()}?mode=ro", uri=True)
    try:
        row = connection.execute(
            "SELECT value FROM state_meta WHERE key = ?", (LAST_FAILURE_KEY,)
        ).fetchone()
    finally:
        connection.close()
    return None if row is None else str(json.loads(row[0])["error"])


def _backup_done(store: Path, since: float, settings: BackupSettings | None = None) -> bool:
    """Whether a backup taken at ``since`` or later is in place and its process is done with
    the folder (renamed and rotated: both happen under the folder's lock, now free)."""
    settings = settings or BackupSettings()
    found = list_backups(store, settings)
    if not found or found[0].taken_at < since - 1:
        return False
    descriptor = os.open(found[0].path.parent / ".lock", os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(descriptor)  # closing releases the lock
    return True


def _wait_for(condition: object, what: str, timeout: float = 120.0) -> None:
    """Wait until ``condition()`` is true (polling; the deadline only stops a hung test)."""
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def _leftovers(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(PARTIAL_SUFFIX))


def test_a_command_takes_a_backup_when_due_and_the_newest_keep_stay(tmp_path: Path) -> None:
    home = tmp_path / "home"
    build_corpus(home, sessions=6, per_session=40)
    store = home / STATE_DB_NAME
    settings = BackupSettings()  # keep: 3
    now = time.time()
    # Four backups taken on earlier days (by this very code, as earlier runs with a larger
    # keep would have).
    for days in (5, 4, 3, 2):
        take_backup(store, BackupSettings(keep=10), now=now - days * DAY, only_if_due=False)
    before = [backup.path.name for backup in list_backups(store, settings)]
    assert len(before) == 4

    listed = run_hermes_in(home, "sessions", "list")
    assert listed.returncode == 0, listed.stderr
    _wait_for(lambda: _backup_done(store, now), "the backup process finished")
    after = list_backups(store, settings)
    assert len(after) == 3
    assert [b.path.name for b in after[1:]] == before[:2], "the newest old ones stay"
    assert now - 60 < after[0].taken_at <= time.time() + 1
    held = contents(store)
    for backup in after:
        assert _sound(backup.path) == ("ok", len(held.sessions), len(held.messages))
        assert oct(backup.path.stat().st_mode & 0o777) == "0o600"
    folder = after[0].path.parent
    assert _leftovers(folder) == []
    assert not [n for n in os.listdir(folder) if n.endswith(("-wal", "-shm", "-journal"))]

    again = run_hermes_in(home, "sessions", "list")
    assert again.returncode == 0, again.stderr
    assert list_backups(store, settings) == after, "not due again for a day"
    assert _leftovers(folder) == [], "and no backup process was started"
    stats = run_hermes_in(home, "sessions", "stats")
    assert f"Last backup: {after[0].local_time} (3 kept in " in stats.stdout
    assert "Last backup failure: none" in stats.stdout


def test_backups_can_be_turned_off_and_moved(tmp_path: Path) -> None:
    home = tmp_path / "home"
    build_corpus(home, sessions=2, per_session=8)
    _config(home, "store:\n  backups:\n    keep: 0\n")
    assert run_hermes_in(home, "sessions", "list").returncode == 0
    assert not (home / "backups").exists()
    stats = run_hermes_in(home, "sessions", "stats")
    assert "Last backup: never — off (store.backups.interval_hours or keep is 0)" in stats.stdout

    elsewhere = tmp_path / "elsewhere"
    _config(home, f"store:\n  backups:\n    folder: {elsewhere}\n    keep: 2\n")
    started = time.time()
    assert run_hermes_in(home, "sessions", "list").returncode == 0
    moved = BackupSettings(folder=elsewhere)
    _wait_for(lambda: _backup_done(home / STATE_DB_NAME, started, moved), "a backup elsewhere")
    assert [p.name.endswith(".db") for p in elsewhere.iterdir() if p.name != ".lock"] == [True]
    bad = _hermes_config_error(home, "store:\n  backups:\n    interval_hours: daily\n")
    assert "store.backups.interval_hours must be a number of hours ≥ 0" in bad


def _hermes_config_error(home: Path, text: str) -> str:
    _config(home, text)
    result = run_hermes_in(home, "sessions", "list")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    return result.stderr


def test_no_two_processes_take_one_at_once_and_a_dead_ones_partial_is_removed(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    build_corpus(home, sessions=2, per_session=8)
    folder = home / "backups"
    folder.mkdir(mode=0o700)
    # Another process is taking one: it holds the folder's lock.
    descriptor = os.open(folder / ".lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        assert run_hermes_in(home, "sessions", "list").returncode == 0
        # The backup process it started finds the lock held and gives up.
        wait_for_backups(home / STATE_DB_NAME)  # it gave up
        assert list_backups(home / STATE_DB_NAME, BackupSettings()) == []
    finally:
        os.close(descriptor)
    # A process killed while writing one left its partial file behind.
    (folder / f"state-20260101T000000Z.db{PARTIAL_SUFFIX}").write_bytes(b"half a backup")
    started = time.time()
    assert run_hermes_in(home, "sessions", "list").returncode == 0
    _wait_for(lambda: _backup_done(home / STATE_DB_NAME, started), "the backup")
    assert len(list_backups(home / STATE_DB_NAME, BackupSettings())) == 1
    assert _leftovers(folder) == []


def test_a_backup_is_taken_while_a_writer_keeps_writing(
    tmp_path: Path, writers: list[Writer]
) -> None:
    home = tmp_path / "home"
    build_corpus(home, sessions=20, per_session=100)
    _config(home, "store:\n  backups:\n    keep: 0\n")  # the writer takes none itself
    writer = Writer(home)
    writers.append(writer)
    acknowledged = 0
    for number in range(20):
        assert writer.append(f"before {number}") == "ACK"
        acknowledged += 1
    _config(home, "")  # backups on again, for the next process
    # Large enough to be copied by a detached backup process, which the command does not wait for.
    assert (home / STATE_DB_NAME).stat().st_size > INLINE_BACKUP_BYTES
    started = time.time()
    assert run_hermes_in(home, "sessions", "list").returncode == 0  # starts the backup process
    during = 0
    while not _backup_done(home / STATE_DB_NAME, started):
        assert writer.append(f"during {during}") == "ACK"
        during += 1
    for number in range(20):
        assert writer.append(f"after {number}") == "ACK"
    (backup,) = list_backups(home / STATE_DB_NAME, BackupSettings())
    verdict, sessions, messages = _sound(backup.path)
    assert verdict == "ok" and sessions == 21
    assert 2000 + acknowledged <= messages <= 2000 + acknowledged + during
    writer.close()
    assert len(contents(home / STATE_DB_NAME).messages) == 2000 + acknowledged + during + 20


def test_a_backup_on_a_full_disk_leaves_nothing_and_the_writer_goes_on(
    tmp_path: Path, small_disk: SmallDisk, writers: list[Writer]
) -> None:
    """Backups kept on another disk, which is full: the copy fails part-way."""
    home = tmp_path / "home"
    build_corpus(home, sessions=4, per_session=40)
    folder = small_disk.mount / "backups"
    folder.mkdir()
    _config(home, f"store:\n  backups:\n    folder: {folder}\n")
    small_disk.fill()
    writer = Writer(home)
    writers.append(writer)
    store = home / STATE_DB_NAME
    _wait_for(lambda: _failure(store) is not None, "the failure is recorded")
    assert "is full" in str(_failure(store))
    for number in range(30):
        assert writer.append(f"still writing {number}") == "ACK"
    assert list_backups(store, BackupSettings(folder=folder)) == []
    assert _leftovers(folder) == []
    stats = run_hermes_in(home, "sessions", "stats")
    assert "Last backup: never" in stats.stdout
    assert "Last backup failure: " in stats.stdout and "is full" in stats.stdout
    writer.close()
    assert len(contents(store).messages) == 160 + 30

    small_disk.free()
    started = time.time()
    assert run_hermes_in(home, "sessions", "list").returncode == 0
    _wait_for(lambda: _backup_done(store, started, BackupSettings(folder=folder)), "a backup")
    _wait_for(lambda: _failure(store) is None, "a backup that worked clears the failure")
    assert len(list_backups(store, BackupSettings(folder=folder))) == 1


def test_no_backup_takes_the_room_the_writer_needs(
    small_disk: SmallDisk, writers: list[Writer]
) -> None:
    """The store's own disk has room for the writer but not for a copy: no backup is
    started, the reason is recorded, and the writer goes on."""
    home = small_disk.mount / "home"
    build_corpus(home, sessions=5, per_session=60)  # fits the 8 MB disk, log included
    store = home / STATE_DB_NAME
    # Room for the store's size and half a MiB more: the writer's log fits, a copy would
    # leave less than the 1 MiB a backup must leave free.
    fill(small_disk.mount, leave=store.stat().st_size + (1 << 19))
    writer = Writer(home)
    writers.append(writer)
    _wait_for(lambda: _failure(store) is not None, "the refusal is recorded")
    assert "not enough room on the store's disk" in str(_failure(store))
    for number in range(30):
        assert writer.append(f"room for me {number}") == "ACK"
    assert list_backups(store, BackupSettings()) == []
    assert _leftovers(home / "backups") == []
    writer.close()
