"""Salvage read from real damaged files: the page reader agrees with SQLite on a sound file (its
write-ahead log included), and whatever the damage, salvage never fails and never invents —
every row it keeps is a row the store held, byte for byte, and what it says the file held is
true (exact, or a lower bound it admits to)."""

from __future__ import annotations

import random
import shutil
import signal
import sqlite3
from pathlib import Path

import pytest
from damaged_stores import (
    COUNTERS,
    MESSAGE_SQL,
    METADATA,
    PAGE,
    Contents,
    build_corpus,
    contents,
    integrity,
    real_counts,
)
from store_helpers import LineReader, start_python

from hermes_core.store import STATE_DB_NAME
from hermes_core.store.fileformat import PageFile
from hermes_core.store.salvage import (
    INBOX_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    SalvageReport,
    salvage,
)
from hermes_core.store.schema import SCHEMA_VERSION


@pytest.fixture(scope="module")
def sound_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Contents]:
    """12 sessions of 100 messages, closed cleanly, and what they hold."""
    home = tmp_path_factory.mktemp("sound")
    build_corpus(home, sessions=12, per_session=100, seed=3)
    path = home / STATE_DB_NAME
    return path, contents(path)


def _check_salvage(target: Path, report: SalvageReport, truth: Contents) -> None:
    """What salvage wrote is what the store held, and the report tells the truth."""
    kept = contents(target)
    assert report.sessions_kept == len(kept.sessions)
    assert report.messages_kept == len(kept.messages)
    for message_id, row in kept.messages.items():
        assert truth.messages[message_id] == row, message_id
    rebuilt = 0
    for session_id, row in kept.sessions.items():
        original = truth.sessions[session_id]
        if row[METADATA] is not None and "lost to damage" in str(row[METADATA]):
            rebuilt += 1
            assert row[3] in (original[3], None)  # the title, when an index still had it
            continue
        assert row[: COUNTERS.start] + row[COUNTERS.stop :] == (
            original[: COUNTERS.start] + original[COUNTERS.stop :]
        ), session_id
    assert rebuilt == report.sessions_rebuilt
    for counted, real, calls, real_calls in real_counts(target).values():
        assert (counted, calls) == (real, real_calls)
    assert integrity(target) == ("ok", True)
    for held, written, kept_count in (
        (report.sessions_held, len(truth.sessions), report.sessions_kept),
        (report.messages_held, len(truth.messages), report.messages_kept),
    ):
        if held.exact:
            assert held.value == written
        else:
            assert kept_count <= held.value <= written


def test_the_page_reader_reads_what_sqlite_reads(sound_store: tuple[Path, Contents]) -> None:
    path, truth = sound_store
    with PageFile(path) as pages:
        assert pages.layout.page_size == PAGE and pages.layout.header_valid
        schema = {values[1]: values[3] for _, values, _ in pages.table_rows(1)}
        sessions = {
            values[0]: tuple(values) for _, values, whole in pages.table_rows(schema["sessions"])
        }
        messages = {
            rowid: (rowid, *values[1:])
            for rowid, values, whole in pages.table_rows(schema["messages"])
            if whole
        }
    assert sessions == truth.sessions
    assert messages == truth.messages
    assert len(SESSION_COLUMNS) == len(next(iter(truth.sessions.values())))
    assert len(MESSAGE_COLUMNS) == len(next(iter(truth.messages.values())))


def test_salvage_knows_every_stored_column_of_the_schema(tmp_path: Path) -> None:
    """A migration adding a stored column must teach salvage about it."""
    from hermes_core.store import SessionStore

    with SessionStore.open(tmp_path) as store:
        connection = store.connection
        for table, known in (
            ("sessions", SESSION_COLUMNS),
            ("messages", MESSAGE_COLUMNS),
            ("gateway_inbox", INBOX_COLUMNS),
        ):
            stored = [
                row[1]
                for row in connection.execute(f"PRAGMA table_xinfo({table})")
                if row[6] in (0, 3)  # in the record: plain, or generated and stored
            ]
            assert tuple(stored) == known, table
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_the_page_reader_reads_what_is_still_in_the_write_ahead_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    writer = start_python(
        "import sys\n"
        "from hermes_hookspecs import Message\n"
        "from hermes_core.store import SessionStore\n"
        "store = SessionStore.open(sys.argv[1])\n"
        "store.connection.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "session = store.create_session('cli', title='only in the log')\n"
        "store.append_messages(session.id, [Message(role='user', content='walword ' * 3000)])\n"
        "print('WRITTEN', flush=True)\n"
        "sys.stdin.read()\n",
        str(home),
    )
    try:
        assert LineReader(writer).readline() == "WRITTEN"
        writer.send_signal(signal.SIGKILL)
        writer.wait(20)
    finally:
        if writer.poll() is None:
            writer.kill()
    assert writer.returncode == -signal.SIGKILL
    path = home / STATE_DB_NAME
    assert Path(f"{path}-wal").stat().st_size > 0
    bare = sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True)  # no log
    try:
        in_file = bare.execute("SELECT name FROM sqlite_master WHERE name = 'messages'").fetchall()
    finally:
        bare.close()
    assert not in_file, "the file itself does not hold the messages yet, only its log"
    kept = tmp_path / "salvaged.db"
    report, _trace = salvage(path, kept)
    assert report.sessions_kept == 1 and report.messages_kept == 1
    connection = sqlite3.connect(path)  # SQLite itself reads the log (and recovers it)
    try:
        through_sqlite = connection.execute(MESSAGE_SQL).fetchall()
    finally:
        connection.close()
    assert list(contents(kept).messages.values()) == through_sqlite
    assert through_sqlite[0][3] == "walword " * 3000


def _random_damage(path: Path, rng: random.Random) -> str:
    """Damage as disks and crashes do it, a page at a time: pages zeroed, pages overwritten
    with garbage, the file cut at a random page, the header garbled. Returns which."""
    pages = path.stat().st_size // PAGE
    kind = rng.choice(["zero", "garbage", "cut", "header"])
    with path.open("r+b") as file:
        if kind in ("zero", "garbage"):
            for _ in range(rng.randint(1, 12)):
                file.seek(rng.randrange(pages) * PAGE)
                file.write(b"\0" * PAGE if kind == "zero" else rng.randbytes(PAGE))
        elif kind == "cut":
            file.truncate(rng.randrange(1, pages) * PAGE)
        else:
            file.seek(rng.randrange(0, 100))
            file.write(rng.randbytes(rng.randint(1, 100)))
    return kind


@pytest.mark.parametrize("seed", range(32))
def test_salvage_of_any_damage_keeps_only_what_was_stored(
    sound_store: tuple[Path, Contents], tmp_path: Path, seed: int
) -> None:
    path, truth = sound_store
    damaged = tmp_path / "damaged.db"
    shutil.copyfile(path, damaged)
    kind = _random_damage(damaged, random.Random(seed))
    target = tmp_path / "salvaged.db"
    report, trace = salvage(damaged, target)
    _check_salvage(target, report, truth)
    assert set(contents(target).messages) <= trace.message_ids, kind
    if kind == "header":
        assert report.messages_kept == len(truth.messages)


def test_salvage_of_bytes_flipped_anywhere_never_fails(
    sound_store: tuple[Path, Contents], tmp_path: Path
) -> None:
    """A byte flipped inside a text (a message's, a session id) cannot be told from the text
    (SQLite would read it back as well); salvage still never fails and always leaves a sound
    store."""
    path, truth = sound_store
    rng = random.Random(99)
    for attempt in range(8):
        damaged = tmp_path / f"flipped{attempt}.db"
        shutil.copyfile(path, damaged)
        size = damaged.stat().st_size
        with damaged.open("r+b") as file:
            for _ in range(rng.randint(1, 200)):
                file.seek(rng.randrange(size))
                file.write(bytes([rng.randrange(256)]))
        target = tmp_path / f"salvaged{attempt}.db"
        report, _trace = salvage(damaged, target)
        assert integrity(target) == ("ok", True)
        assert report.messages_kept <= len(truth.messages)


def test_salvage_of_a_file_that_is_not_a_database_keeps_nothing(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(random.Random(5).randbytes(64 * PAGE))
    report, trace = salvage(garbage, tmp_path / "salvaged.db")
    assert (report.sessions_kept, report.messages_kept) == (0, 0)
    assert not report.sessions_held.exact and not report.messages_held.exact
    assert not trace.session_ids and not report.schema_found
    assert integrity(tmp_path / "salvaged.db") == ("ok", True)


def test_salvage_reads_session_rows_from_before_and_after_the_cache_columns(
    tmp_path: Path,
) -> None:
    """Rows written before schema 6 end before its two columns (SQLite reads them as 0);
    salvage keeps both kinds."""
    from hermes_core.store import SessionStore
    from hermes_core.store.connection import open_connection
    from hermes_core.store.schema import migrate

    home = tmp_path / "home"
    home.mkdir()
    connection = open_connection(home / STATE_DB_NAME)
    try:
        migrate(connection, target=5)
        connection.execute(
            "INSERT INTO sessions (id, source, started_at, last_active_at, input_tokens) "
            "VALUES ('20240101_000000_abcdef', 'cli', 1704067200, 1704067300, 42)"
        )
    finally:
        connection.close()
    with SessionStore.open(home) as store:
        newer = store.create_session(input_tokens=5, cache_read_tokens=700, cache_write_tokens=9)
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    report, _trace = salvage(home / STATE_DB_NAME, tmp_path / "salvaged.db")
    assert report.sessions_kept == 2
    read = sqlite3.connect(tmp_path / "salvaged.db")
    try:
        rows = dict(
            ((row[0], row[1:]))
            for row in read.execute(
                "SELECT id, input_tokens, cache_read_tokens, cache_write_tokens FROM sessions"
            )
        )
    finally:
        read.close()
    assert rows == {"20240101_000000_abcdef": (42, 0, 0), newer.id: (5, 700, 9)}
