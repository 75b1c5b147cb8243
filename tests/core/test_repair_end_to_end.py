"""``hermes sessions repair`` as a user runs it: the installed command, in a subprocess, on real
damaged files. A damaged store is salvaged into a new one — the damaged file kept, the report's
kept/held figures true, every kept row exactly what was written, the new store sound and
searchable — and a rolling backup is offered for what the damage took. Everything repair
cannot help with is one line, the right exit code, nothing changed, no traceback, and never
the advice to run repair."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from damaged_stores import (
    COUNTERS,
    DAMAGES,
    METADATA,
    Contents,
    build_corpus,
    contents,
    integrity,
    real_counts,
)
from disks import SmallDisk
from installed_hermes import hermes_command, run_hermes_in
from store_helpers import REPO_ROOT, LineReader, start_python, wait_for_backups

from hermes_core.cli.errors import REPAIR_HINT
from hermes_core.store import STATE_DB_NAME, SessionStore
from hermes_core.store.backups import BackupSettings, list_backups, take_backup
from hermes_core.store.schema import SCHEMA_VERSION

pytestmark = pytest.mark.slow

SESSIONS, MESSAGES = 40, 4000
KEPT = re.compile(
    r"kept (?P<sessions>[\d,]+) of (?P<sessions_held>(?:at least )?[\d,]+) sessions, "
    r"(?P<messages>[\d,]+) of (?P<messages_held>(?:at least )?[\d,]+) messages"
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Contents]:
    """40 sessions of 100 messages (long tool output on overflow pages), closed cleanly."""
    home = tmp_path_factory.mktemp("corpus")
    build_corpus(home, sessions=SESSIONS, per_session=MESSAGES // SESSIONS)
    path = home / STATE_DB_NAME
    truth = contents(path)
    assert (len(truth.sessions), len(truth.messages)) == (SESSIONS, MESSAGES)
    return path, truth


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _listing(folder: Path) -> dict[str, str]:
    """Every file in ``folder`` (recursively) and its digest."""
    return {
        str(path.relative_to(folder)): _digest(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _never_advises_repair(result: subprocess.CompletedProcess[str]) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert REPAIR_HINT not in output and "run repair" not in output, output


def _one_line(result: subprocess.CompletedProcess[str], says: str, code: int = 1) -> None:
    _never_advises_repair(result)
    assert result.returncode == code, (result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("hermes: "), result.stderr
    assert says in errors[0], (says, errors[0])


def _number(text: str) -> tuple[int, bool]:
    exact = not text.startswith("at least ")
    return int(text.removeprefix("at least ").replace(",", "")), exact


def _check_repaired(path: Path, truth: Contents, kept_line: str) -> tuple[int, int]:
    """The new store holds exactly what the report says it kept, each row as written, and is
    sound; returns (sessions, messages) kept."""
    match = KEPT.search(kept_line)
    assert match, kept_line
    kept = contents(path)
    sessions, messages = (
        int(match["sessions"].replace(",", "")),
        int(match["messages"].replace(",", "")),
    )
    assert (sessions, messages) == (len(kept.sessions), len(kept.messages))
    for held_text, written, kept_count in (
        (match["sessions_held"], SESSIONS, sessions),
        (match["messages_held"], MESSAGES, messages),
    ):
        held, exact = _number(held_text)
        if exact:
            assert held == written, kept_line
        else:
            assert kept_count <= held <= written, kept_line
    for message_id, row in kept.messages.items():
        assert row == truth.messages[message_id], message_id
    for session_id, row in kept.sessions.items():
        if "lost to damage" in str(row[METADATA]):
            continue  # rebuilt from its index entries: checked by test_store_salvage
        original = truth.sessions[session_id]
        assert row[: COUNTERS.start] == original[: COUNTERS.start], session_id
        assert row[COUNTERS.stop :] == original[COUNTERS.stop :], session_id
    for counted, real, calls, real_calls in real_counts(path).values():
        assert (counted, calls) == (real, real_calls)
    assert integrity(path) == ("ok", True)
    return sessions, messages


def _a_kept_marker(path: Path) -> tuple[str, str]:
    """A word of a salvaged user message, and its session."""
    connection = sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True)
    try:
        content, session_id = connection.execute(
            "SELECT content, session_id FROM messages WHERE role = 'user' ORDER BY id DESC LIMIT 1"
        ).fetchone()
    finally:
        connection.close()
    return str(content).split()[0], str(session_id)


FIGURES: dict[str, str] = {}
EMPTY = hashlib.sha256(b"").hexdigest()


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_repair_salvages_a_damaged_store(
    corpus: tuple[Path, Contents], tmp_path: Path, damage: str
) -> None:
    source, truth = corpus
    home = tmp_path / "home"
    home.mkdir()
    path = home / STATE_DB_NAME
    shutil.copyfile(source, path)
    DAMAGES[damage](path)
    damaged = _digest(path)
    listed = run_hermes_in(home, "sessions", "list")  # a damaged page may be one it never reads
    assert listed.returncode == 0 or REPAIR_HINT in listed.stderr  # the way back
    wait_for_backups(path)  # the rolling backup it started (past 8 MB: a process of its own)
    assert _digest(path) == damaged
    shutil.rmtree(home / "backups", ignore_errors=True)  # its backup failed: nothing in it

    checked = run_hermes_in(home, "sessions", "repair", "--check-only")
    assert checked.returncode == 1, checked.stderr
    assert "A repair would keep" in checked.stdout
    assert _digest(path) == damaged and sorted(os.listdir(home)) == [STATE_DB_NAME]

    repaired = run_hermes_in(home, "sessions", "repair")
    _never_advises_repair(repaired)
    assert repaired.returncode == 0, (repaired.stdout, repaired.stderr)
    (line,) = [line for line in repaired.stdout.splitlines() if line.startswith("Salvaged")]
    _sessions, messages = _check_repaired(path, truth, line)
    assert line.split("kept ", 1)[1] in checked.stdout, "check-only foretold it"
    (kept_as,) = [name for name in os.listdir(home) if ".damaged-" in name]
    assert _digest(home / kept_as) == damaged, "the damaged file is kept as it was"
    assert f"Kept the damaged file as {home / kept_as}" in repaired.stdout

    word, session_id = _a_kept_marker(path)
    found = run_hermes_in(home, "sessions", "search", word)
    assert found.returncode == 0 and session_id in found.stdout, found.stdout
    if damage == "last page cut":
        assert messages >= 0.95 * MESSAGES
    FIGURES[damage] = line
    print(f"\n{damage}: {line}")


def test_repair_of_a_store_held_open_by_another_process_changes_nothing(
    corpus: tuple[Path, Contents], tmp_path: Path
) -> None:
    source, _truth = corpus
    home = tmp_path / "home"
    home.mkdir()
    path = home / STATE_DB_NAME
    shutil.copyfile(source, path)
    DAMAGES["middle page zeroed"](path)
    holder = start_python(
        "import sqlite3, sys\n"
        "connection = sqlite3.connect(sys.argv[1])\n"
        "connection.execute('SELECT count(*) FROM sqlite_master').fetchone()\n"
        "print('HOLDING', flush=True)\n"
        "sys.stdin.read()\n",
        str(path),
    )
    try:
        assert LineReader(holder).readline() == "HOLDING"
        before = _listing(home)
        refused = run_hermes_in(home, "sessions", "repair")
        _one_line(refused, f"is open in another process (pid {holder.pid}")
        assert "stop it (a running gateway or chat) and try again; nothing was changed" in (
            refused.stderr
        )
        assert _listing(home) == before
    finally:
        holder.kill()
        holder.wait(20)
    repaired = run_hermes_in(home, "sessions", "repair")
    assert repaired.returncode == 0, repaired.stderr


def _store_with(tmp_path: Path, change: Callable[[sqlite3.Connection], None]) -> Path:
    home = tmp_path / "home"
    build_corpus(home, sessions=4, per_session=20)
    connection = sqlite3.connect(home / STATE_DB_NAME)
    change(connection)
    connection.commit()
    connection.close()
    return home


def test_a_store_made_by_a_newer_hermes_is_named_so_and_left_alone(tmp_path: Path) -> None:
    home = _store_with(tmp_path, lambda db: db.execute("PRAGMA user_version = 999"))
    before = _listing(home)
    says = (
        f"was made by a newer Hermes (schema 999, this one knows {SCHEMA_VERSION}): "
        "upgrade hermes-sessions"
    )
    for flags in ((), ("--check-only",), ("--yes",)):
        _one_line(run_hermes_in(home, "sessions", "repair", *flags), says)
    assert _listing(home) == before


def test_counter_drift_is_found_and_fixed(tmp_path: Path) -> None:
    def drift(db: sqlite3.Connection) -> None:
        db.execute("UPDATE sessions SET message_count = message_count + 7 WHERE rowid = 1")
        db.execute("UPDATE sessions SET tool_call_count = tool_call_count + 1 WHERE rowid = 2")

    home = _store_with(tmp_path, drift)
    checked = run_hermes_in(home, "sessions", "repair", "--check-only")
    assert checked.returncode == 1, checked.stderr
    assert "counters: 2 session(s) whose message or tool-call count differs" in checked.stdout
    assert "says 27 messages, holds 20" in checked.stdout
    repaired = run_hermes_in(home, "sessions", "repair")
    _never_advises_repair(repaired)
    assert repaired.returncode == 0, repaired.stderr
    assert "recounted the messages and tool calls of 2 session(s)" in repaired.stdout
    assert list(home.glob("state.db.backup-*")), "a backup before changing anything"
    for counted, real, calls, real_calls in real_counts(home / STATE_DB_NAME).values():
        assert (counted, calls) == (real, real_calls)
    again = run_hermes_in(home, "sessions", "repair", "--check-only")
    assert again.returncode == 0 and "no problems found" in again.stdout


def test_an_immutable_store_is_checked_read_only_and_left_alone(
    tmp_path: Path, make_immutable: Callable[[Path], None]
) -> None:
    home = _store_with(tmp_path, lambda db: None)
    (home / "backups").mkdir()  # as if backups had been taken: none may be added
    make_immutable(home / STATE_DB_NAME)
    before = _listing(home)
    checked = run_hermes_in(home, "sessions", "repair", "--check-only")
    _never_advises_repair(checked)
    assert checked.returncode == 0, (checked.stdout, checked.stderr)
    assert "no problems found" in checked.stdout
    assert "full-text index" not in checked.stdout
    assert "(read-only, so not checked: whether the word index's entries match" in checked.stdout
    _one_line(
        run_hermes_in(home, "sessions", "repair"),
        "is read-only (the file, its folder or the disk it is on); nothing was changed",
    )
    assert _listing(home) == before


def test_an_immutable_store_with_drift_is_reported_read_only(
    tmp_path: Path, make_immutable: Callable[[Path], None]
) -> None:
    home = _store_with(
        tmp_path, lambda db: db.execute("UPDATE sessions SET message_count = 0 WHERE rowid = 3")
    )
    make_immutable(home / STATE_DB_NAME)
    checked = run_hermes_in(home, "sessions", "repair", "--check-only")
    _never_advises_repair(checked)
    assert checked.returncode == 1
    assert "counters: 1 session(s)" in checked.stdout
    assert "full-text index" not in checked.stdout


@pytest.mark.parametrize(
    ("what", "make", "says"),
    [
        ("a folder", lambda p: p.mkdir(), "is a folder, not a session store; nothing was changed"),
        ("nothing", lambda p: None, "no session store at"),
    ],
)
def test_no_store_file_is_one_line(
    tmp_path: Path, what: str, make: Callable[[Path], None], says: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    make(home / STATE_DB_NAME)
    for flags in ((), ("--check-only",)):
        _one_line(run_hermes_in(home, "sessions", "repair", *flags), says)
    assert sorted(os.listdir(home)) == ([STATE_DB_NAME] if what == "a folder" else [])


def test_an_empty_file_has_nothing_to_repair(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / STATE_DB_NAME).touch()
    result = run_hermes_in(home, "sessions", "repair")
    _never_advises_repair(result)
    assert result.returncode == 0
    assert "is empty (0 bytes)" in result.stdout and "nothing to repair" in result.stdout
    assert sorted(os.listdir(home)) == [STATE_DB_NAME]


def test_a_file_of_garbage_is_kept_and_replaced_by_an_empty_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    garbage = os.urandom(50_000)
    (home / STATE_DB_NAME).write_bytes(garbage)
    result = run_hermes_in(home, "sessions", "repair")
    _never_advises_repair(result)
    assert result.returncode == 0, result.stderr
    assert "kept 0 sessions (how many the file held cannot be told), 0 messages" in result.stdout
    (kept_as,) = [name for name in os.listdir(home) if ".damaged-" in name]
    assert (home / kept_as).read_bytes() == garbage
    assert run_hermes_in(home, "sessions", "list").returncode == 0


def test_a_full_disk_during_repair_changes_nothing(
    corpus: tuple[Path, Contents], small_disk: SmallDisk
) -> None:
    home = small_disk.mount / "home"
    build_corpus(home, sessions=6, per_session=40)
    path = home / STATE_DB_NAME
    assert not Path(f"{path}-wal").exists(), "closed cleanly: all of it in the file"
    DAMAGES["truncated at half"](path)
    small_disk.fill()
    before = _listing(home)
    result = run_hermes_in(home, "sessions", "repair", "--no-backup")
    _one_line(result, "is full: there is no room for the new store; nothing was changed")
    after = _listing(home)
    # Opening the store (its checks) may leave SQLite's companions, empty, on a full disk.
    assert after.pop(f"{STATE_DB_NAME}-wal", EMPTY) == EMPTY
    after.pop(f"{STATE_DB_NAME}-shm", None)
    assert after == before
    small_disk.free()
    assert run_hermes_in(home, "sessions", "repair").returncode == 0


# ---------------------------------------------------------------------- with a backup


@pytest.fixture
def backed_up(corpus: tuple[Path, Contents], tmp_path: Path) -> Iterator[tuple[Path, Contents]]:
    """The corpus, backed up by a command as users get it; then more written after the
    backup (messages in an old session, a new session); then cut at half. Yields the home
    and what the backup holds."""
    source, _truth = corpus
    home = tmp_path / "home"
    home.mkdir()
    path = home / STATE_DB_NAME
    shutil.copyfile(source, path)
    assert run_hermes_in(home, "sessions", "list").returncode == 0
    wait_for_backups(path)
    (backup,) = list_backups(path, BackupSettings())
    with SessionStore.open(home) as store:
        first = store.select_sessions(newest_first=False, limit=1)[0]
        store.append_messages(first.id, [_user("written after the backup")] * 3)
        later = store.create_session("cli", title="after the backup")
        store.append_messages(later.id, [_user("a session after the backup")])
    DAMAGES["truncated at half"](path)
    yield home, contents(backup.path)


def _user(text: str) -> object:
    from hermes_hookspecs import Message

    return Message(role="user", content=text, timestamp=time.time())


def test_without_a_terminal_repair_asks_for_a_choice_and_changes_nothing(
    backed_up: tuple[Path, Contents],
) -> None:
    home, _held = backed_up
    before = _listing(home)
    result = run_hermes_in(home, "sessions", "repair")
    _one_line(result, "not a terminal, so nothing was asked or changed: a backup from ")
    assert "--merge-backup" in result.stderr and "--restore-backup" in result.stderr
    assert _listing(home) == before


def test_merging_the_backup_brings_back_what_the_damage_took(
    backed_up: tuple[Path, Contents],
) -> None:
    home, held = backed_up
    path = home / STATE_DB_NAME
    damaged = contents_of_salvage(home)
    result = run_hermes_in(home, "sessions", "repair", "--merge-backup")
    _never_advises_repair(result)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "Backup from " in result.stdout and f"{len(held.sessions)} session(s)" in result.stdout
    merged = contents(path)
    # Every message of the backup is back, and everything the salvage kept stays.
    assert set(merged.messages) == set(held.messages) | set(damaged.messages)
    for message_id, row in merged.messages.items():
        assert row == held.messages.get(message_id, damaged.messages.get(message_id))
    assert set(merged.sessions) >= set(held.sessions)
    added = re.search(r"added ([\d,]+) session\(s\) and ([\d,]+) message\(s\)", result.stdout)
    assert added, result.stdout
    assert int(added[2].replace(",", "")) == len(set(merged.messages) - set(damaged.messages))
    for counted, real, calls, real_calls in real_counts(path).values():
        assert (counted, calls) == (real, real_calls)
    assert integrity(path) == ("ok", True)


def contents_of_salvage(home: Path) -> Contents:
    """What a salvage alone keeps of the damaged store (``--no-backup`` on a copy)."""
    copy = home.parent / "salvage-only"
    copy.mkdir()
    shutil.copyfile(home / STATE_DB_NAME, copy / STATE_DB_NAME)
    result = run_hermes_in(copy, "sessions", "repair", "--no-backup")
    assert result.returncode == 0, result.stderr
    return contents(copy / STATE_DB_NAME)


def test_restoring_the_backup_puts_it_back_as_it_was(backed_up: tuple[Path, Contents]) -> None:
    home, held = backed_up
    result = run_hermes_in(home, "sessions", "repair", "--restore-backup")
    _never_advises_repair(result)
    assert result.returncode == 0, result.stderr
    assert contents(home / STATE_DB_NAME) == held
    assert [name for name in os.listdir(home) if ".damaged-" in name]


def test_in_a_terminal_repair_asks_and_merges(backed_up: tuple[Path, Contents]) -> None:
    home, held = backed_up
    child = pexpect.spawn(
        hermes_command(),
        ["--home", str(home), "sessions", "repair"],
        cwd=str(REPO_ROOT),
        encoding="utf-8",
        timeout=120,
        dimensions=(40, 200),
    )
    child.expect("Salvaged what was readable: kept ")
    child.expect("merge +— keep the salvage")
    child.expect(r"Use the backup\?")
    child.sendline("merge")
    child.expect("Merged the backup: added ")
    child.expect("it is healthy")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert set(contents(home / STATE_DB_NAME).messages) >= set(held.messages)


def test_a_missing_store_is_restored_from_its_backup(
    corpus: tuple[Path, Contents], tmp_path: Path
) -> None:
    source, truth = corpus
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(source, home / STATE_DB_NAME)
    take_backup(home / STATE_DB_NAME, BackupSettings())
    (home / STATE_DB_NAME).unlink()
    asked = run_hermes_in(home, "sessions", "repair")
    _one_line(asked, "not a terminal, so nothing was asked or changed: run again with")
    assert not (home / STATE_DB_NAME).exists()
    restored = run_hermes_in(home, "sessions", "repair", "--yes")
    assert restored.returncode == 0, restored.stderr
    assert contents(home / STATE_DB_NAME) == truth
