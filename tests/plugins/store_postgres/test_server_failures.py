"""A PostgreSQL store whose server cannot do what is asked — a read-only database, a hot
standby, a server that goes away under an open store, damaged data — driven as users run it
(the installed ``hermes`` in subprocesses, ``HERMES_STORE_URL``) and through the library.
What the server fails with reaches the caller as the store's error classes; the command line
says it in one line (two for damage: the way back), never a traceback, never the password,
and nothing stored is changed (DESIGN §9). A full disk is in ``test_full_disk.py``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from hermes_hookspecs import Message
from hermes_store_postgres.testing import (
    TEMPLATE_DATABASE,
    Cluster,
    ClusterUnavailable,
    fresh_database,
    skip_or_fail,
    start_cluster,
    start_standby,
)
from installed_hermes import hermes_command

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url
from hermes_core.store.errors import StoreDamaged, StoreReadOnly, StoreUnavailable
from hermes_core.store.protocol import Store

pytestmark = pytest.mark.slow

DAY = 86_400.0
STORE_UNAVAILABLE = "⚠ Session store unavailable: "
REPAIR_HINT = "'hermes sessions repair' salvages what is still readable."

WRITING_COMMANDS = [
    ("sessions", "rename", "deploy notes", "renamed"),
    ("sessions", "pin", "deploy notes"),
    ("sessions", "archive", "--older-than", "30d", "--yes"),
    ("sessions", "prune", "--older-than", "30d", "--yes"),
    ("sessions", "delete", "deploy notes", "--yes"),
    ("sessions", "optimize"),
    ("gateway", "run"),
]
READING_COMMANDS = [
    ("sessions", "list", "--all"),
    ("sessions", "show", "deploy notes"),
    ("sessions", "search", "kubernetes"),
    ("sessions", "stats"),
    ("insights", "--days", "3650"),
]


def _hermes(home: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_STORE_URL": url}
    env.pop("HERMES_DEBUG", None)
    return subprocess.run(
        [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _open(url: str) -> Store:
    return open_url(url, host=PluginHost())


def _populate(url: str) -> set[str]:
    """Two ended sessions idle for 200 days (prune and archive would take them); their ids."""
    old = time.time() - 200 * DAY
    ids = set()
    with _open(url) as store:
        for number, title in enumerate(("deploy notes", "lunch")):
            session = store.create_session("cli", title=title, started_at=old + number)
            store.append_messages(
                session.id,
                [
                    Message("user", f"{title}: how do I roll the kubernetes deploy back?", old),
                    Message("assistant", "kubectl rollout undo", old + 1),
                ],
            )
            store.end_session(session.id, "user_exit", ended_at=old + 2)
            ids.add(session.id)
    return ids


def _snapshot(cluster: Cluster, database: str) -> str:
    """Every session's title, flags, counters and end, and every message (read with psql)."""
    return cluster.sql(
        "SELECT id, title, pinned, archived, message_count, ended_at FROM sessions ORDER BY id; "
        "SELECT session_id, role, content FROM messages ORDER BY id",
        database=database,
    )


def _stderr_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def _assert_refused(result: subprocess.CompletedProcess[str], cluster: Cluster, *says: str) -> None:
    """Exit 1 and one stderr line holding every one of ``says``; no traceback, no password."""
    command = " ".join(result.args[1:])
    assert result.returncode == 1, (command, result.stdout, result.stderr)
    lines = _stderr_lines(result)
    assert len(lines) == 1, (command, result.stderr)
    assert all(part in lines[0] for part in says), (command, lines[0])
    assert "Traceback" not in result.stderr, (command, result.stderr)
    assert cluster.password not in result.stdout + result.stderr, command


def _assert_reads_work(home: Path, url: str, session_ids: set[str]) -> None:
    """Every reading command answers, shows what was stored; an export holds ``session_ids``."""
    for command in READING_COMMANDS:
        result = _hermes(home, url, *command)
        assert result.returncode == 0, (command, result.stderr)
        assert _stderr_lines(result) == [], (command, result.stderr)
    shown = _hermes(home, url, "sessions", "show", "deploy notes")
    assert "roll the kubernetes deploy back" in shown.stdout
    target = home / "exported.jsonl"
    exported = _hermes(home, url, "sessions", "export", str(target))
    assert exported.returncode == 0, exported.stderr
    exported_ids = {json.loads(line)["session"]["id"] for line in target.read_text().splitlines()}
    assert exported_ids == session_ids


def test_a_read_only_database_is_read_and_refuses_every_write_in_one_line(
    tmp_path: Path, postgres_cluster: Cluster
) -> None:
    with fresh_database(postgres_cluster) as database:
        url = postgres_cluster.url(database)
        ids = _populate(url)
        backup = tmp_path / "backup.jsonl"
        assert _hermes(tmp_path, url, "sessions", "export", str(backup)).returncode == 0
        before = _snapshot(postgres_cluster, database)
        postgres_cluster.sql(f"ALTER DATABASE {database} SET default_transaction_read_only = on")

        _assert_reads_work(tmp_path, url, ids)
        read_only = "the PostgreSQL database is read-only (store.url 'postgresql://hermes:***@"
        for command in WRITING_COMMANDS:
            result = _hermes(tmp_path, url, *command)
            _assert_refused(result, postgres_cluster, read_only, "nothing was written")
            if command[0] == "gateway":  # refused at start, saying why the server will not write
                assert "default_transaction_read_only is on" in result.stderr
        imported = _hermes(tmp_path, url, "sessions", "import", "--from", "jsonl", str(backup))
        _assert_refused(imported, postgres_cluster, read_only)
        assert _snapshot(postgres_cluster, database) == before

        postgres_cluster.sql(f"ALTER DATABASE {database} RESET default_transaction_read_only")
        renamed = _hermes(tmp_path, url, "sessions", "rename", "deploy notes", "renamed")
        assert renamed.returncode == 0, renamed.stderr


@pytest.fixture
def standby_of_shared(postgres_cluster: Cluster) -> Iterator[tuple[Cluster, str]]:
    """(a hot standby of the shared cluster, a database it holds two sessions in)."""
    with fresh_database(postgres_cluster) as database:
        _populate(postgres_cluster.url(database))
        try:
            standby = start_standby(postgres_cluster)
        except ClusterUnavailable as error:
            skip_or_fail(str(error))
        try:
            yield standby, database
        finally:
            standby.stop()


def test_a_hot_standby_is_read_only_and_the_gateway_refuses_to_start(
    tmp_path: Path, standby_of_shared: tuple[Cluster, str]
) -> None:
    standby, database = standby_of_shared
    url = standby.url(database)
    with _open(url) as store:
        assert store.read_only
        with pytest.raises(StoreReadOnly, match="the server is a hot standby"):
            store.require_writable()
        assert {session.title for session in store.list_sessions()} == {"deploy notes", "lunch"}
        with pytest.raises(StoreReadOnly, match=r"read-only .*; nothing was written"):
            store.create_session("cli")
    listed = _hermes(tmp_path, url, "sessions", "list", "--all")
    assert listed.returncode == 0 and "deploy notes" in listed.stdout, listed.stderr
    _assert_refused(
        _hermes(tmp_path, url, "gateway", "run"), standby, "is read-only", "hot standby"
    )
    _assert_refused(_hermes(tmp_path, url, "sessions", "pin", "lunch"), standby, "is read-only")


@pytest.fixture
def own_cluster() -> Iterator[Cluster]:
    """A cluster of this test's own, to stop and start (the shared one serves other tests)."""
    try:
        cluster = start_cluster()
    except ClusterUnavailable as error:
        skip_or_fail(str(error))
    try:
        cluster.sql(f"CREATE DATABASE store TEMPLATE {TEMPLATE_DATABASE}")
        yield cluster
    finally:
        cluster.stop()


def test_the_server_stopping_under_an_open_store_is_store_unavailable(
    own_cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    url = own_cluster.url("store")
    store = _open(url)
    session = store.create_session("cli", title="before the crash")
    store.append_message(session.id, Message("user", "stored before the server went away"))
    own_cluster.sql("CHECKPOINT", database="store")
    own_cluster.stop_server("immediate")

    attempts = {
        "get_session": lambda: store.get_session(session.id),
        "list_sessions": lambda: store.list_sessions(),
        "messages": lambda: store.messages(session.id),
        "create_session": lambda: store.create_session("cli"),
        "append_message": lambda: store.append_message(session.id, Message("user", "lost")),
        "set_title": lambda: store.set_title(session.id, "renamed"),
        "write_state": lambda: store.write_state({"key": "value"}),
    }
    for name, attempt in attempts.items():
        with pytest.raises(StoreUnavailable) as raised:
            attempt()
        message = str(raised.value)
        assert type(raised.value) is StoreUnavailable, name
        assert "the connection to the PostgreSQL server was lost" in message, (name, message)
        assert "store.url 'postgresql://hermes:***@127.0.0.1" in message, (name, message)
        assert "\n" not in message and own_cluster.password not in message, (name, message)
        assert isinstance(raised.value.__cause__, psycopg.Error), name
    with caplog.at_level(logging.WARNING):
        store.close()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []

    own_cluster.start_server()
    with _open(url) as reopened:
        assert reopened.get_session(session.id).title == "before the crash"
        assert [m.content for m in reopened.messages(session.id)] == [
            "stored before the server went away"
        ]


def _wait_for_lock_waiter(url: str) -> int:
    """The backend of ``url``'s database waiting for a lock (the command under test), by pid
    (asked on a connection of its own, outside any transaction: ``pg_stat_activity`` stays
    as it was when a transaction first read it)."""
    deadline = time.monotonic() + 60
    with psycopg.connect(url, autocommit=True) as monitor:
        while time.monotonic() < deadline:
            row = monitor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            ).fetchone()
            if row is not None:
                return int(str(row[0]))
            time.sleep(0.05)
    raise AssertionError("the command never waited for the lock")


def test_a_command_whose_connection_the_server_ends_says_one_line(
    tmp_path: Path, postgres_cluster: Cluster
) -> None:
    with fresh_database(postgres_cluster) as database:
        url = postgres_cluster.url(database)
        _populate(url)
        before = _snapshot(postgres_cluster, database)
        env = {**os.environ, "HERMES_HOME": str(tmp_path), "HERMES_STORE_URL": url}
        env.pop("HERMES_DEBUG", None)
        # The command waits for this lock; meanwhile its connection is ended under it.
        with psycopg.connect(url, autocommit=True) as blocker, blocker.transaction():
            blocker.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
            command = subprocess.Popen(
                [hermes_command(), "sessions", "rename", "deploy notes", "renamed"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                waiter = _wait_for_lock_waiter(url)
                blocker.execute("SELECT pg_terminate_backend(%s)", (waiter,))
                stdout, stderr = command.communicate(timeout=60)
            finally:
                if command.poll() is None:
                    command.kill()
                    command.wait(10)
        result = subprocess.CompletedProcess(command.args, command.returncode, stdout, stderr)
        _assert_refused(
            result,
            postgres_cluster,
            STORE_UNAVAILABLE + "the connection to the PostgreSQL server was lost (store.url",
            "terminating connection due to administrator command",
        )
        assert _stderr_lines(result)[0].startswith(STORE_UNAVAILABLE)
        assert _snapshot(postgres_cluster, database) == before


def _damage_first_page(cluster: Cluster, table: str) -> None:
    """Overwrite the header of ``table``'s first page on disk (the server stopped cleanly
    first, so nothing it holds in memory writes over it), then start the server again."""
    relative = cluster.sql(f"SELECT pg_relation_filepath('{table}')", database="store")
    cluster.stop_server("fast")
    with open(cluster.data_dir / relative, "r+b") as data_file:
        data_file.write(b"\xff" * 24)
    cluster.start_server()


def test_damaged_data_on_the_server_is_store_damaged_with_the_way_back(
    tmp_path: Path, own_cluster: Cluster
) -> None:
    url = own_cluster.url("store")
    _populate(url)
    _damage_first_page(own_cluster, "messages")

    with _open(url) as store:
        session_id = store.resolve("deploy notes")  # the sessions table is whole
        with pytest.raises(StoreDamaged, match="the PostgreSQL server reports damaged data"):
            store.messages(session_id)
    shown = _hermes(tmp_path, url, "sessions", "show", "deploy notes")
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert _stderr_lines(shown) == [
        _stderr_lines(shown)[0],
        f"  {REPAIR_HINT}",
    ], shown.stderr
    first = _stderr_lines(shown)[0]
    assert first.startswith(STORE_UNAVAILABLE + "the PostgreSQL server reports damaged data")
    assert "invalid page in block 0" in first
    assert "Traceback" not in shown.stderr and own_cluster.password not in shown.stderr
