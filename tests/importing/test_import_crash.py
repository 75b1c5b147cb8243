"""A writer killed mid-import (``kill -9``) leaves a whole store, and the next import of the
file replaces the partial session instead of adding a second one. Plus the line reader under
arbitrary garbage (hypothesis)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from claude_helpers import IMPORTER, SESSION, lines, prompt, read_all, reply, text, write
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.importing import FileStatus, ImportRun
from hermes_core.store import SessionStore
from hermes_core.store.imports import load_import_files

TURNS = 1500  # three batches of 500 messages and more

CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from hermes_core.importing import ImportRun
    from hermes_core.store import SessionStore
    from hermes_import_claude.importer import ClaudeCodeImporter

    STALL_AFTER = int(sys.argv[3])  # messages; 0: after the last one (all stored)

    def stall():
        print("STALLED", flush=True)
        time.sleep(60)

    class Stalling(ClaudeCodeImporter):
        def read(self, path, resume_from=None):
            for session in super().read(path, resume_from):
                source = session.messages
                def stalling(source=source):
                    for count, message in enumerate(source, start=1):
                        yield message
                        if count == STALL_AFTER:
                            stall()
                    if STALL_AFTER == 0:
                        stall()
                session.messages = stalling()
                yield session

    with SessionStore.open(sys.argv[1]) as store:
        ImportRun(store).import_file(Path(sys.argv[2]), Stalling())
    """
)


@pytest.mark.slow
def test_a_writer_killed_mid_import_leaves_no_duplicate(tmp_path: Path) -> None:
    records = []
    for turn in range(TURNS):
        records.append(prompt(f"u{turn}", turn % 60, f"question {turn}"))
        records.append(reply(f"a{turn}", turn % 60, text(f"answer {turn}"), message_id=f"m{turn}"))
    path = write(tmp_path / f"{SESSION}.jsonl", lines(*records))
    home = tmp_path / "home"
    kill_mid_import(home, path)
    connection = sqlite3.connect(home / "state.db")
    assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    connection.close()
    with SessionStore.open(home) as store:
        [record] = load_import_files(store.connection).values()
        assert record.state == "importing"
        partial = store.get_session(record.session_id or "")
        assert 0 < partial.message_count < 2 * TURNS
        outcome = ImportRun(store).import_file(path, IMPORTER)
        assert outcome.status is FileStatus.IMPORTED
        [row] = store.connection.execute("SELECT id, message_count FROM sessions").fetchall()
        assert row == (outcome.session_id, 2 * TURNS)


def kill_mid_import(home: Path, path: Path, stall_after: int = 700) -> None:
    """Import ``path`` into ``home`` in a child process and ``kill -9`` it once it has
    yielded ``stall_after`` messages (700: the first batch of 500 is committed by then; 0:
    every message is stored, the bookkeeping not yet moved on)."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home), str(path), str(stall_after)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "STALLED"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL  # the kill happened mid-import


@pytest.mark.slow
def test_a_writer_killed_mid_append_leaves_no_duplicate_turns(tmp_path: Path) -> None:
    path = write(tmp_path / f"{SESSION}.jsonl", GOOD)
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        session_id = ImportRun(store).import_file(path, IMPORTER).session_id
    records = []
    for turn in range(TURNS):
        records.append(prompt(f"v{turn}", turn % 60, f"later question {turn}"))
        records.append(
            reply(f"b{turn}", turn % 60, text(f"later answer {turn}"), message_id=f"n{turn}")
        )
    with open(path, "ab") as handle:
        handle.write(lines(*records))
    kill_mid_import(home, path)
    with SessionStore.open(home) as store:
        assert store.get_session(session_id or "").message_count > 2  # a batch got in
        outcome = ImportRun(store).import_file(path, IMPORTER)
        assert outcome.status is FileStatus.APPENDED
        contents = [m.content for m in store.messages(session_id or "")]
        assert len(contents) == 2 + 2 * TURNS == len(set(contents))
        assert store.get_session(session_id or "").message_count == 2 + 2 * TURNS


KILLED_RESTORE = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from hermes_core.importing import ImportRun
    from hermes_core.store import SessionStore
    from hermes_export_jsonl.importer import JsonlBackupImporter

    class DiesInTheThirdSession(JsonlBackupImporter):
        def read(self, path, resume_from=None):
            for number, imported in enumerate(super().read(path, resume_from)):
                if number == 2:
                    def dying(messages=imported.messages):
                        for count, message in enumerate(messages):
                            if count == 3:  # the session row is in, none of its messages
                                os.kill(os.getpid(), signal.SIGKILL)
                            yield message
                    imported.messages = dying()
                yield imported

    with SessionStore.open(Path(sys.argv[1])) as store:
        ImportRun(store).import_file(Path(sys.argv[2]), DiesInTheThirdSession())
    """
)


@pytest.mark.slow
def test_a_backup_restore_killed_mid_session_is_whole_after_the_next_import(
    tmp_path: Path,
) -> None:
    from hermes_export_jsonl.importer import JsonlBackupImporter
    from installed_hermes import hermes_command
    from store_helpers_import import backup_of

    backup, expected = backup_of(tmp_path, hermes_command(), sessions=5, messages=6)
    home = tmp_path / "home"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_RESTORE, str(home), str(backup)], timeout=60, check=False
    )
    assert killed.returncode == -signal.SIGKILL
    order = list(expected)
    with SessionStore.open(home) as store:
        counts = dict(store.connection.execute("SELECT id, message_count FROM sessions"))
        # The kill came in the third session: two whole, the third begun and empty.
        assert counts == {order[0]: 6, order[1]: 6, order[2]: 0}

        outcome = ImportRun(store).import_file(backup, JsonlBackupImporter())

        assert outcome.status is FileStatus.IMPORTED
        counts = dict(store.connection.execute("SELECT id, message_count FROM sessions"))
        assert counts == dict.fromkeys(order, 6)
        titles = dict(store.connection.execute("SELECT id, title FROM sessions"))
        assert titles == expected
        assert store.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


GOOD = lines(prompt("u1", 1, "Question"), reply("a1", 2, text("Answer."), message_id="m1"))


@settings(max_examples=60, deadline=None)
@given(garbage=st.lists(st.binary(max_size=60), max_size=8), tail=st.binary(max_size=40))
def test_the_reader_survives_any_garbage(
    tmp_path_factory: pytest.TempPathFactory, garbage: list[bytes], tail: bytes
) -> None:
    data = GOOD + b"".join(chunk.replace(b"\n", b" ") + b"\n" for chunk in garbage) + tail
    path = write(tmp_path_factory.mktemp("g") / f"{SESSION}.jsonl", data)
    [read] = read_all(path)
    assert read.transcript[:2] == [("user", "Question"), ("assistant", "Answer.")]
    # The answer may still be growing: the next read starts again at its line.
    cursor = int((read.session.cursor or "0").split(":")[0])
    assert cursor == GOOD.index(b"\n") + 1
    assert read.session.open_tail == 1
    assert IMPORTER.sniff(path)
