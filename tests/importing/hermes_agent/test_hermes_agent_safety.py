"""The Hermes Agent store is only ever read: its files keep their bytes and modification
times (WAL with a live writer included), and every bad store — locked, damaged, not a Hermes
Agent store, newer than known, this store itself — is one line with nothing written."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from agent_stores import ROOT, T0, TIP, file_state, sample_store
from hermes_hookspecs import ImportCandidate, ImportedSession
from hermes_import_hermes_agent.importer import HermesAgentImporter

from hermes_core.importing import FileStatus, ImportRun, gather_candidates, importer_for_path
from hermes_core.store import STATE_DB_NAME, SessionStore
from hermes_core.store.imports import load_import_files


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.open(tmp_path / "home") as opened:
        yield opened


def nothing_written(store: SessionStore) -> bool:
    connection = store.connection
    counts = [
        connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("sessions", "messages", "gateway_routing", "import_files")
    ]
    return counts == [0, 0, 0, 0]


WRITER = textwrap.dedent(
    """
    import sqlite3, sys, time
    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
    connection.execute("PRAGMA wal_autocheckpoint=0")  # keep the new turns in the WAL
    connection.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
        ("20260301_110000_c3c3c3", "uncheckpointed 未同步的消息", 1772363000.0),
    )
    print("written", flush=True)
    sys.stdin.read()  # hold the connection (and the WAL) open until the test closes stdin
    """
)


def start_writer(path: Path, script: str = WRITER) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() in ("written", "locked")
    return process


def stop(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.close()
    process.wait(timeout=10)


def test_a_wal_store_with_a_live_writer_is_read_whole_and_left_untouched(
    tmp_path: Path, store: SessionStore
) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30, wal=True)
    writer = start_writer(sample.path)
    try:
        assert Path(str(sample.path) + "-wal").stat().st_size > 0
        before = file_state(sample.path)
        assert set(before) == {"db", "-wal", "-shm"}
        assert HermesAgentImporter().sniff(sample.path)  # immutable open: no read mark

        outcome = ImportRun(store).import_file(sample.path, HermesAgentImporter())

        assert outcome.status is FileStatus.IMPORTED, outcome.detail
        assert file_state(sample.path) == before
        contents = [m.content for m in store.messages(TIP)]
        assert contents[-1] == "uncheckpointed 未同步的消息"  # the turn only the WAL holds
    finally:
        stop(writer)


def test_a_rollback_journal_store_is_left_untouched(tmp_path: Path, store: SessionStore) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30)
    before = file_state(sample.path)
    listing = sorted(os.listdir(tmp_path))

    outcome = ImportRun(store).import_file(sample.path, HermesAgentImporter())
    ImportRun(store).import_file(sample.path, HermesAgentImporter())

    assert outcome.status is FileStatus.IMPORTED
    assert file_state(sample.path) == before
    assert sorted(os.listdir(tmp_path)) == listing  # no journal, no -wal/-shm created


LOCKER = textwrap.dedent(
    """
    import sqlite3, sys
    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
    connection.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    sys.stdin.read()
    """
)


def test_a_locked_store_is_one_line_and_nothing_is_written(
    tmp_path: Path, store: SessionStore
) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30)
    locker = start_writer(sample.path, LOCKER)
    try:
        outcome = ImportRun(store).import_file(
            sample.path, HermesAgentImporter(busy_timeout=0.2)
        )
    finally:
        stop(locker)

    assert outcome.status is FileStatus.UNREADABLE
    assert outcome.detail == (
        "cannot import: the Hermes Agent store is locked by another process (waited 0.2 s); "
        "try again when Hermes Agent is idle"
    )
    assert nothing_written(store)


def test_a_damaged_store_is_one_line_and_nothing_is_written(
    tmp_path: Path, store: SessionStore
) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30)
    data = bytearray(sample.path.read_bytes())
    page = 4096
    data[2 * page : 4 * page] = b"\xde\xad\xbe\xef" * (page // 2)  # two pages of garbage
    sample.path.write_bytes(bytes(data))

    outcome = ImportRun(store).import_file(sample.path, HermesAgentImporter())

    assert outcome.status is FileStatus.UNREADABLE
    assert outcome.detail.startswith("cannot import: the Hermes Agent store is damaged: ")
    assert "\n" not in outcome.detail
    assert nothing_written(store)


def other_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE things (x)")
    own = tmp_path / "another-home"
    SessionStore.open(own).close()
    return {
        "text": (text, "not a Hermes Agent store (not an SQLite database)"),
        "empty": (empty, "not a Hermes Agent store (not an SQLite database)"),
        "other sqlite": (
            other,
            "not a Hermes Agent store (it has no sessions and messages tables)",
        ),
        "hermes sessions store": (
            own / STATE_DB_NAME,
            "this is a Hermes sessions store, not a Hermes Agent one "
            "(move sessions between Hermes sessions stores with a jsonl export)",
        ),
    }


@pytest.mark.parametrize("kind", ["text", "empty", "other sqlite", "hermes sessions store"])
def test_a_file_that_is_not_a_hermes_agent_store_is_one_line(
    tmp_path: Path, store: SessionStore, kind: str
) -> None:
    path, message = other_files(tmp_path)[kind]
    importer = HermesAgentImporter()
    assert not importer.sniff(path)

    outcome = ImportRun(store).import_file(path, importer)

    assert (outcome.status, outcome.detail) == (FileStatus.UNREADABLE, f"cannot import: {message}")
    assert nothing_written(store)


def test_a_newer_schema_is_one_line(tmp_path: Path, store: SessionStore) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 31)

    outcome = ImportRun(store).import_file(sample.path, HermesAgentImporter())

    assert outcome.detail == (
        "cannot import: this Hermes Agent store has schema v31, newer than this importer knows "
        "(up to v30): upgrade hermes-import-hermes-agent"
    )
    assert nothing_written(store)


def test_a_store_is_never_imported_into_itself(tmp_path: Path, store: SessionStore) -> None:
    own = tmp_path / "home" / STATE_DB_NAME
    for path in (own, Path(str(own) + "-wal"), tmp_path / "home" / "." / STATE_DB_NAME):
        outcome = ImportRun(store).import_file(path, HermesAgentImporter())
        assert outcome.status is FileStatus.UNREADABLE
        assert outcome.detail == (
            "this is the session store being imported into; refusing to import it into itself"
            " (if the other tool shares this home, give its store's path, or set "
            "HERMES_AGENT_HOME, or run this tool with --home elsewhere)"
        )
    assert nothing_written(store)


class FailingHalfway:
    """The real importer, whose file turns unreadable after two sessions (a disk error)."""

    name = "hermes-agent"
    label = "Hermes Agent"
    file_kind = "database"

    def discover(self, env: Mapping[str, str]) -> Iterator[ImportCandidate]:
        return iter(())

    def sniff(self, path: Path) -> bool:
        return True

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        for number, imported in enumerate(HermesAgentImporter().read(path, resume_from)):
            if number == 2:
                raise OSError(5, "Input/output error")
            yield imported


def test_a_read_failing_half_way_leaves_nothing_behind(tmp_path: Path, store: SessionStore) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30)

    outcome = ImportRun(store).import_file(sample.path, FailingHalfway())

    assert (outcome.status, outcome.detail) == (
        FileStatus.UNREADABLE,
        "cannot read: Input/output error",
    )
    assert outcome.sessions == []
    assert nothing_written(store)


def test_a_failed_append_keeps_the_earlier_import(tmp_path: Path, store: SessionStore) -> None:
    sample, agent = sample_store(tmp_path / "state.db", 30, keep_open=True)
    ImportRun(store).import_file(sample.path, HermesAgentImporter())
    before = store.connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    agent.add_message(ROOT, "user", "grown", T0 + 9000)
    agent.close()

    failed = ImportRun(store).import_file(sample.path, FailingHalfway())
    assert failed.status is FileStatus.UNREADABLE
    assert store.connection.execute("SELECT count(*) FROM messages").fetchone()[0] == before
    [record] = load_import_files(store.connection).values()
    assert record.state == "done"

    grown = ImportRun(store).import_file(sample.path, HermesAgentImporter())
    assert [(s.session_id, s.messages) for s in grown.appended] == [(ROOT, 1)]


KILLED_IMPORT = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from hermes_core.importing import ImportRun
    from hermes_core.store import SessionStore
    from hermes_import_hermes_agent.importer import HermesAgentImporter

    class DiesHalfway(HermesAgentImporter):
        def read(self, path, resume_from=None):
            for number, imported in enumerate(super().read(path, resume_from)):
                if number == 3:
                    os.kill(os.getpid(), signal.SIGKILL)
                yield imported

    store = SessionStore.open(Path(sys.argv[1]))
    ImportRun(store).import_file(Path(sys.argv[2]), DiesHalfway())
    """
)


@pytest.mark.slow
def test_an_import_killed_half_way_is_undone_and_redone(tmp_path: Path) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30)
    home = tmp_path / "home"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_IMPORT, str(home), str(sample.path)], timeout=60, check=False
    )
    assert killed.returncode == -signal.SIGKILL
    with SessionStore.open(home) as store:
        partial = store.connection.execute("SELECT count(*) FROM sessions").fetchone()[0]
        assert partial == 3  # the kill really came half-way
        [record] = load_import_files(store.connection).values()
        assert record.state == "importing"

        outcome = ImportRun(store).import_file(sample.path, HermesAgentImporter())

        assert outcome.status is FileStatus.IMPORTED
        ids = [row[0] for row in store.connection.execute("SELECT id FROM sessions ORDER BY id")]
        assert sorted(ids) == sorted(sample.session_ids)  # each once, with its own id
        total = store.connection.execute("SELECT count(*) FROM messages").fetchone()[0]
        assert total == sample.message_count
        assert store.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_store_not_written_since_its_import_is_not_even_opened(
    tmp_path: Path, store: SessionStore
) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30)
    ImportRun(store).import_file(sample.path, HermesAgentImporter())

    # FailingHalfway fails any read: the unchanged store must be decided without one.
    again = ImportRun(store).import_file(sample.path, FailingHalfway())
    assert again.status is FileStatus.UNCHANGED
    assert ImportRun(store).quick_check(sample.path, FailingHalfway()) is not None

    os.utime(sample.path)  # written to (as far as anyone can tell): read again
    assert ImportRun(store).quick_check(sample.path, FailingHalfway()) is None
    assert ImportRun(store).import_file(sample.path, HermesAgentImporter()).status is (
        FileStatus.UNCHANGED
    )


def test_discover_finds_the_store_and_its_profiles(tmp_path: Path, store: SessionStore) -> None:
    agent = tmp_path / "agent"
    (agent / "profiles" / "work").mkdir(parents=True)
    sample_store(agent / "state.db", 30)
    sample_store(agent / "profiles" / "work" / "state.db", 11)
    (agent / "profiles" / "broken").mkdir()
    (agent / "profiles" / "broken" / "state.db").write_text("not sqlite")
    importer = HermesAgentImporter()

    found = list(importer.discover({"HERMES_AGENT_HOME": str(agent), "HOME": "/nowhere"}))
    by_default = list(importer.discover({"HOME": str(tmp_path / "nohome")}))

    # A stat per file, never a look inside (the caller may hold one open as its own store):
    # the file that is not SQLite is found, and reading it says what it is.
    broken = agent / "profiles" / "broken" / "state.db"
    assert [(c.path, c.title_guess) for c in found] == [
        (agent / "state.db", "Hermes Agent store"),
        (broken, "Hermes Agent store (profile broken)"),
        (agent / "profiles" / "work" / "state.db", "Hermes Agent store (profile work)"),
    ]
    assert by_default == []
    outcome = ImportRun(store).import_file(broken, importer)
    assert (outcome.status, outcome.detail) == (
        FileStatus.UNREADABLE,
        "cannot import: not a Hermes Agent store (not an SQLite database)",
    )
    assert nothing_written(store)


def test_discover_never_offers_the_store_this_process_holds(
    tmp_path: Path, store: SessionStore
) -> None:
    # Hermes Agent's default home is ~/.hermes, this tool's too: the same state.db.
    home = tmp_path / "home"
    importer = HermesAgentImporter()
    assert [c.path for c in importer.discover({"HERMES_AGENT_HOME": str(home)})] == [
        home / STATE_DB_NAME
    ]
    found = gather_candidates({"hermes-agent": importer}, {"HERMES_AGENT_HOME": str(home)})
    assert found == []
    assert importer_for_path(home / STATE_DB_NAME, {"hermes-agent": importer}) is None
