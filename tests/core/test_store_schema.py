"""Opening the store: settings, file mode, migrations and refusals (SPEC S1, DESIGN §3)."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest
from installed_hermes import run_hermes_in
from store_helpers import cjk_ids, fts_ids, user

from hermes_core.store import (
    STATE_DB_NAME,
    SessionStore,
    StoreError,
    StoreTooNew,
    StoreUnavailable,
    fulltext,
)
from hermes_core.store.connection import open_connection
from hermes_core.store.schema import SCHEMA_VERSION, migrate, schema_version


def _pragma(store: SessionStore, name: str) -> object:
    return store.connection.execute(f"PRAGMA {name}").fetchone()[0]


def test_new_store_is_at_the_current_schema_version(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        assert _pragma(store, "user_version") == SCHEMA_VERSION
        assert store.path == tmp_path / STATE_DB_NAME
        tables = {row[0] for row in store.connection.execute("SELECT name FROM sqlite_master")}
    assert {
        "sessions",
        "messages",
        "messages_fts",
        "gateway_routing",
        "system_prompts",
        "state_meta",
        "messages_cjk",
        "import_files",
        "gateway_inbox",
    } <= tables


def test_new_store_uses_wal_and_foreign_keys(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        assert str(_pragma(store, "journal_mode")).lower() == "wal"
        assert _pragma(store, "foreign_keys") == 1
        assert _pragma(store, "synchronous") == 1  # NORMAL
        assert int(str(_pragma(store, "busy_timeout"))) > 0


def test_store_file_is_private(tmp_path: Path) -> None:
    home = tmp_path / "new-home"
    with SessionStore.open(home) as store:
        session = store.create_session()
        store.append_message(session.id, user("make the WAL exist"))
        for path in home.iterdir():
            if path.name.startswith(STATE_DB_NAME):
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name
    assert stat.S_IMODE((home / STATE_DB_NAME).stat().st_mode) == 0o600


def test_reopening_keeps_data_and_version(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        session = store.create_session(title="kept")
        store.append_message(session.id, user("persisted words"))
    with SessionStore.open(tmp_path) as store:
        assert store.get_session(session.id).title == "kept"
        assert len(fts_ids(store.connection, "persisted")) == 1
        assert _pragma(store, "user_version") == SCHEMA_VERSION


def _build_v1_store(path: Path) -> None:
    connection = open_connection(path)
    try:
        assert migrate(connection, target=1) == 0
        assert schema_version(connection) == 1
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        assert "messages_cjk" not in tables
        connection.execute("BEGIN")
        connection.execute(
            "INSERT INTO sessions (id, source, title, started_at, last_active_at, message_count) "
            "VALUES ('20240101_000000_abcdef', 'cli', '旧的会话', 1704067200, 1704067300, 5)"
        )
        connection.executemany(
            "INSERT INTO messages (id, session_id, role, content, timestamp) "
            "VALUES (?, '20240101_000000_abcdef', ?, ?, ?)",
            [
                (1, "user", "请解释量子纠缠的原理", 1704067201),
                (2, "assistant", "Quantum entanglement links particles", 1704067202),
                (3, "tool", "ok " * 500 + "日本語のテキスト", 1704067203),
                (4, "user", "東京の天気は? weather please", 1704067204),
                (5, "tool", "ok " * 1000 + "尾部的中文", 1704067205),  # past the word index's head
            ],
        )
        connection.execute(
            "INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages_fts_source"
        )
        connection.execute("COMMIT")
    finally:
        connection.close()


def test_v1_store_is_migrated_and_its_cjk_text_indexed(tmp_path: Path) -> None:
    path = tmp_path / STATE_DB_NAME
    _build_v1_store(path)
    with SessionStore.open(tmp_path) as store:
        assert _pragma(store, "user_version") == SCHEMA_VERSION
        db = store.connection
        assert cjk_ids(db, "纠缠的") == [1]
        assert cjk_ids(db, "東京の") == [4]
        assert cjk_ids(db, "日本語") == [3]  # the tool output's head holds it (< 2000 chars)
        assert (
            db.execute("SELECT count(*) FROM messages_cjk WHERE text LIKE '%量子纠缠%'").fetchone()[
                0
            ]
            == 1
        )
        assert db.execute("SELECT count(*) FROM messages_cjk").fetchone()[0] == 4
        assert fts_ids(db, "entanglement") == [2]
        assert fts_ids(db, "weather") == [4]
        assert fulltext.check(db) is None
        session = store.get_session("20240101_000000_abcdef")
        assert session.title == "旧的会话"
        assert cjk_ids(db, "尾部的") == [5]  # CJK is indexed from the whole message
        assert [m.id for m in store.messages(session.id)] == [1, 2, 3, 4, 5]
        # The migrated store keeps working.
        [new_id] = store.append_messages(session.id, [user("新的纠缠的消息")])
        assert cjk_ids(db, "纠缠的") == [1, new_id]
        assert fulltext.check(db) is None


def _build_v4_store_with_long_tool_output(path: Path) -> None:
    """A store as schema 4 left it: tool output indexed by its first 2,000 characters."""
    connection = open_connection(path)
    try:
        assert migrate(connection, target=4) == 0
        connection.execute("BEGIN")
        connection.execute(
            "INSERT INTO sessions (id, source, started_at, last_active_at, message_count) "
            "VALUES ('20240101_000000_abcdef', 'cli', 1704067200, 1704067300, 3)"
        )
        connection.executemany(
            "INSERT INTO messages (id, session_id, role, content, tool_name, timestamp) "
            "VALUES (?, '20240101_000000_abcdef', ?, ?, ?, ?)",
            [
                (1, "user", "run the build please", None, 1704067201),
                (2, "tool", "headword " + "ok " * 20_000 + "buriedword tail", "sh", 1704067202),
                (3, "tool", "short output shortword", "sh", 1704067203),
            ],
        )
        connection.execute(
            "INSERT INTO messages_fts(rowid, content) SELECT id, content FROM messages_fts_source"
        )
        connection.execute("COMMIT")
        assert fts_ids(connection, "buriedword") == []  # past schema 4's head
    finally:
        connection.close()


def test_v4_store_upgrades_and_its_long_tool_output_is_searchable_whole(tmp_path: Path) -> None:
    _build_v4_store_with_long_tool_output(tmp_path / STATE_DB_NAME)
    found = run_hermes_in(tmp_path, "sessions", "search", "buriedword", "--role", "tool")
    assert found.returncode == 0, found.stderr
    assert "buriedword" in found.stdout and "20240101_000000_abcdef" in found.stdout
    with SessionStore.open(tmp_path) as store:
        db = store.connection
        assert _pragma(store, "user_version") == SCHEMA_VERSION
        assert fts_ids(db, "buriedword") == [2]
        assert fts_ids(db, "headword") == [2]
        assert fts_ids(db, "shortword") == [3]
        assert fulltext.check(db) is None
        store.delete_session("20240101_000000_abcdef")  # deletes find the entries they undo
        assert fts_ids(db, "buriedword") == []
        assert fulltext.check(db) is None


def test_migrating_twice_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / STATE_DB_NAME
    _build_v1_store(path)
    SessionStore(path).close()
    with SessionStore(path) as store:
        assert store.connection.execute("SELECT count(*) FROM messages_cjk").fetchone()[0] == 4
        assert migrate(store.connection) == SCHEMA_VERSION


def test_store_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        store.create_session(title="from the future")
        store.connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreTooNew, match="newer") as caught:
        SessionStore.open(tmp_path)
    assert str(SCHEMA_VERSION + 1) in str(caught.value)
    assert isinstance(caught.value, StoreUnavailable)
    # Refusing did not "repair" anything.
    connection = sqlite3.connect(tmp_path / STATE_DB_NAME)
    try:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
        assert connection.execute("SELECT title FROM sessions").fetchall() == [("from the future",)]
    finally:
        connection.close()


def test_garbage_file_is_store_unavailable(tmp_path: Path) -> None:
    path = tmp_path / STATE_DB_NAME
    path.write_bytes(b"this is not a database at all\x00\xff" * 512)
    with pytest.raises(StoreUnavailable) as caught:
        SessionStore.open(tmp_path)
    assert not isinstance(caught.value, sqlite3.Error)
    assert str(path) in str(caught.value)
    assert path.read_bytes().startswith(b"this is not a database")


def test_truncated_sqlite_file_is_store_unavailable(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        session = store.create_session()
        store.append_messages(session.id, [user("x " * 5000) for _ in range(20)])
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = tmp_path / STATE_DB_NAME
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\x00" * 4000 + data[4100:])
    with pytest.raises(StoreError), SessionStore.open(tmp_path) as broken:
        broken.connection.execute("PRAGMA integrity_check").fetchall()
        broken.get_session(session.id)


def test_unreadable_location_is_store_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    with pytest.raises(StoreUnavailable):
        SessionStore.open(blocker / "home")


def _build_v5_store_with_a_claude_session(path: Path) -> None:
    """A store as schema 5 left it: a session whose input counts its cache reads too."""
    connection = open_connection(path)
    try:
        assert migrate(connection, target=5) == 0
        connection.execute("BEGIN")
        connection.execute(
            "INSERT INTO sessions (id, source, started_at, last_active_at, input_tokens, "
            "output_tokens) VALUES ('20240101_000000_abcdef', 'claude-code', 1704067200, "
            "1704067300, 16790991, 49467)"
        )
        connection.execute("COMMIT")
    finally:
        connection.close()


def test_v5_store_upgrades_through_the_installed_hermes_with_no_cache_figures(
    tmp_path: Path,
) -> None:
    _build_v5_store_with_a_claude_session(tmp_path / STATE_DB_NAME)
    shown = run_hermes_in(tmp_path, "sessions", "show", "--json", "20240101_000000_abcdef")
    assert shown.returncode == 0, shown.stderr
    # What was counted before stays where it was: the upgrade cannot tell cache apart.
    assert json.loads(shown.stdout)["tokens"] == {
        "input": 16790991,
        "cache_read": 0,
        "cache_write": 0,
        "output": 49467,
    }
    with SessionStore.open(tmp_path) as store:
        assert _pragma(store, "user_version") == SCHEMA_VERSION
        later = store.create_session(cache_read_tokens=7, cache_write_tokens=3)
        assert (later.cache_read_tokens, later.cache_write_tokens) == (7, 3)
        old = store.get_session("20240101_000000_abcdef")
        assert (old.cache_read_tokens, old.cache_write_tokens) == (0, 0)


def test_v6_store_upgrades_through_the_installed_hermes_with_an_empty_gateway_inbox(
    tmp_path: Path,
) -> None:
    connection = open_connection(tmp_path / STATE_DB_NAME)
    try:
        assert migrate(connection, target=6) == 0
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        assert "gateway_inbox" not in tables
    finally:
        connection.close()
    listed = run_hermes_in(tmp_path, "sessions", "list")
    assert listed.returncode == 0, listed.stderr
    with SessionStore.open(tmp_path) as store:
        assert _pragma(store, "user_version") == SCHEMA_VERSION
        assert store.routing.inbox_pending() == []
        first = store.routing.inbox_add("agent:main:telegram:dm:1", "telegram", "7", "{}")
        assert first.entry is not None
        assert store.routing.inbox_pending() == [first.entry]
        assert store.routing.inbox_remove(first.entry.id)
