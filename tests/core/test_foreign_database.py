"""Another program's SQLite file where the store should be (Hermes Agent's ``state.db`` shares
the default path ``~/.hermes/state.db``): refused in one line, and never written — not migrated,
not switched to WAL, not repaired, no ``-wal``/``-shm`` beside a rollback-journal file."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from installed_hermes import hermes_command

from hermes_core.store import STATE_DB_NAME, NotASessionStore, SessionStore
from hermes_core.store.repair import inspect

REFUSAL = "not a Hermes sessions store — another program's SQLite database"


def _foreign_rollback_store(path: Path) -> None:
    """A Hermes Agent-like file: its own tables, a ``schema_version`` table, user_version 0."""
    connection = sqlite3.connect(path)
    connection.executescript(
        """
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (30);
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL);
        INSERT INTO sessions VALUES ('theirs', 'cli', 1700000000.0);
        """
    )
    connection.commit()
    connection.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def foreign_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    _foreign_rollback_store(home / STATE_DB_NAME)
    return home


def _beside(home: Path) -> set[str]:
    return {entry.name for entry in home.iterdir()}


def test_opening_refuses_and_writes_nothing(foreign_home: Path) -> None:
    db = foreign_home / STATE_DB_NAME
    before = _digest(db)

    with pytest.raises(NotASessionStore, match=REFUSAL):
        SessionStore.open(foreign_home)

    assert _digest(db) == before
    assert _beside(foreign_home) == {STATE_DB_NAME}
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert connection.execute("SELECT id FROM sessions").fetchall() == [("theirs",)]


def test_repair_refuses_too(foreign_home: Path) -> None:
    db = foreign_home / STATE_DB_NAME
    before = _digest(db)

    with pytest.raises(NotASessionStore):
        inspect(db)

    assert _digest(db) == before
    assert _beside(foreign_home) == {STATE_DB_NAME}


@pytest.fixture
def wal_only_schema(tmp_path: Path) -> Iterator[Path]:
    """A WAL-mode file of another program whose tables are still only in its WAL (the header
    in the main file does not show them yet): held open so nothing is checkpointed."""
    home = tmp_path / "wal-home"
    home.mkdir()
    db = home / STATE_DB_NAME
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
    writer.execute("INSERT INTO sessions VALUES ('theirs')")
    try:
        yield home
    finally:
        writer.close()


def test_a_schema_still_in_the_wal_is_seen(wal_only_schema: Path) -> None:
    db = wal_only_schema / STATE_DB_NAME
    before = _digest(db)

    with pytest.raises(NotASessionStore):
        SessionStore.open(wal_only_schema)

    assert _digest(db) == before
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert reader.execute("PRAGMA user_version").fetchone()[0] == 0
        assert reader.execute("SELECT id FROM sessions").fetchall() == [("theirs",)]
    finally:
        reader.close()


def test_an_empty_file_still_becomes_a_store(tmp_path: Path) -> None:
    (tmp_path / STATE_DB_NAME).touch()
    with SessionStore.open(tmp_path) as store:
        assert store.create_session("cli").id


def _hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env["HERMES_HOME"] = str(home)
    return subprocess.run(
        [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("command", [("sessions", "list"), ("sessions", "repair")])
def test_the_commands_say_it_in_one_line(foreign_home: Path, command: tuple[str, ...]) -> None:
    db = foreign_home / STATE_DB_NAME
    before = _digest(db)

    result = _hermes(foreign_home, *command)

    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"hermes: {db}: {REFUSAL}")
    assert "hermes sessions import --from hermes-agent" in lines[0]
    assert "Traceback" not in result.stderr
    assert _digest(db) == before
    assert _beside(foreign_home) == {STATE_DB_NAME}
