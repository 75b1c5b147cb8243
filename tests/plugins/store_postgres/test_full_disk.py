"""A PostgreSQL store whose server's disk is full, for real: the store's database lives in a
tablespace on a small tmpfs (``CREATE TABLESPACE``, ``CREATE DATABASE … TABLESPACE``) that a
test fills up. A write that needs room is refused as ``StoreFull`` (the library) and in one
line (the installed ``hermes``), nothing of it is stored, reading goes on, and once there is
room again the same write succeeds (DESIGN §9).

Mounting needs root (CI runs as root); elsewhere these tests skip with the reason, except
under ``CI=true``, where they fail instead."""

from __future__ import annotations

import itertools
import json
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from disks import SmallDisk, small_tmpfs
from hermes_hookspecs import Message
from hermes_store_postgres.testing import TEMPLATE_DATABASE, Cluster, skip_or_fail
from installed_hermes import hermes_command

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url
from hermes_core.store.errors import StoreFull
from hermes_core.store.protocol import Store

pytestmark = pytest.mark.slow

DISK_MEGABYTES = 32
"""Room for a copy of the template database's catalog (≈ 8 MB) and the store's tables."""
FULL = "the PostgreSQL server's disk is full (store.url 'postgresql://hermes:***@"
_numbers = itertools.count(1)


@dataclass
class StoreOnSmallDisk:
    """A database of the shared cluster whose every table is on :attr:`disk`."""

    cluster: Cluster
    database: str
    disk: SmallDisk

    @property
    def url(self) -> str:
        return self.cluster.url(self.database)

    def _rows(self, sql: str) -> list[str]:
        return self.cluster.sql(sql, database=self.database).splitlines()

    def snapshot(self) -> Snapshot:
        """What the store holds (read with psql)."""
        sessions = self._rows(
            "SELECT id, title, pinned, message_count, ended_at FROM sessions ORDER BY id"
        )
        return Snapshot(
            sessions={row.split("|", 1)[0]: row for row in sessions},
            messages=self._rows("SELECT session_id, role, md5(content) FROM messages ORDER BY id"),
            state=self._rows("SELECT key, value FROM state_meta ORDER BY key"),
        )


@dataclass
class Snapshot:
    sessions: dict[str, str]
    """id → its title, pinned, message count and end."""
    messages: list[str]
    """Every message's session, role and a digest of its text, in order."""
    state: list[str]
    """Every ``state_meta`` key and value."""


@pytest.fixture
def store_on_small_disk(postgres_cluster: Cluster) -> Iterator[StoreOnSmallDisk]:
    """An empty store in a database whose tablespace is a small tmpfs (see the module doc),
    dropped and unmounted afterwards."""
    if postgres_cluster.owner is None:
        skip_or_fail("a tablespace on a tmpfs needs root (to mount it and hand it to the server)")
    owner = postgres_cluster.owner
    number = next(_numbers)
    # Inside the cluster's folder: the server's user must reach it (pytest's are root's only).
    with small_tmpfs(postgres_cluster.root / f"small-disk-{number}", f"{DISK_MEGABYTES}m") as mount:
        location = mount / "tablespace"
        location.mkdir()
        os.chown(location, owner.pw_uid, owner.pw_gid)
        tablespace, database = f"small_{os.getpid()}_{number}", f"full_{os.getpid()}_{number}"
        postgres_cluster.sql(f"CREATE TABLESPACE {tablespace} LOCATION '{location}'")
        try:
            postgres_cluster.sql(
                f"CREATE DATABASE {database} TEMPLATE {TEMPLATE_DATABASE} TABLESPACE {tablespace}"
            )
            yield StoreOnSmallDisk(postgres_cluster, database, SmallDisk(mount))
        finally:
            postgres_cluster.sql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            postgres_cluster.sql(f"DROP TABLESPACE IF EXISTS {tablespace}")


def _open(url: str) -> Store:
    return open_url(url, host=PluginHost())


def _long_text(kilobytes: int) -> str:
    """Words that do not compress: a message that needs new pages wherever it is stored."""
    return " ".join(secrets.token_hex(16) for _ in range(kilobytes * 1024 // 33))


def _hermes(home: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_STORE_URL": url}
    env.pop("HERMES_DEBUG", None)
    return subprocess.run(
        [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _populate(url: str) -> str:
    """One ended session, "deploy notes", with two messages; its id."""
    old = time.time() - 200 * 86_400.0
    with _open(url) as store:
        session = store.create_session("cli", title="deploy notes", started_at=old)
        store.append_messages(
            session.id,
            [
                Message("user", "how do I roll the kubernetes deploy back?", old),
                Message("assistant", "kubectl rollout undo", old + 1),
            ],
        )
        store.end_session(session.id, "user_exit", ended_at=old + 2)
        return session.id


def test_a_write_on_a_full_disk_is_store_full_and_stores_nothing(
    store_on_small_disk: StoreOnSmallDisk,
) -> None:
    small = store_on_small_disk
    session_id = _populate(small.url)
    store = _open(small.url)
    try:
        before = small.snapshot()
        small.disk.fill()
        big = Message("user", _long_text(256))
        writes = {
            "append_messages": lambda: store.append_messages(session_id, [big]),
            "create_session": lambda: store.create_session("cli", system_prompt=big.content),
            "write_state": lambda: store.write_state({"notes": big.content}),
        }
        for name, write in writes.items():
            with pytest.raises(StoreFull) as raised:
                write()
            message = str(raised.value)
            assert message.startswith(FULL) and message.endswith("; nothing was written"), name
            assert small.cluster.password not in message, name
        assert small.snapshot() == before
        # Reading goes on, on the same connection.
        first = store.messages(session_id)[0]
        assert first.content.startswith("how do I roll")
        assert store.get_session(session_id).message_count == 2

        small.disk.free()
        [appended] = store.append_messages(session_id, [big])
        assert store.get_session(session_id).message_count == 3
        assert store.messages(session_id)[-1].content == big.content
        assert appended == store.messages(session_id)[-1].id
    finally:
        store.close()


def test_a_full_disk_reads_and_refuses_an_import_in_one_line(
    store_on_small_disk: StoreOnSmallDisk, tmp_path: Path
) -> None:
    small = store_on_small_disk
    session_id = _populate(small.url)
    # A backup of a session too large for the room that will be left, then deleted here.
    backup = tmp_path / "backup.jsonl"
    with _open(small.url) as store:
        other = store.create_session("cli", title="too large")
        large = _long_text(512)
        store.append_messages(other.id, [Message("user", large)])
    exported = _hermes(
        tmp_path, small.url, "sessions", "export", str(backup), "--session-id", "too large"
    )
    assert exported.returncode == 0, exported.stderr
    assert json.loads(backup.read_text().splitlines()[0])["session"]["id"] == other.id
    deleted = _hermes(tmp_path, small.url, "sessions", "delete", "too large", "--yes")
    assert deleted.returncode == 0, deleted.stderr
    before = small.snapshot()
    small.disk.fill()

    for command in (("sessions", "list"), ("sessions", "show", "deploy notes"),
                    ("sessions", "search", "kubernetes"), ("sessions", "stats")):  # fmt: skip
        result = _hermes(tmp_path, small.url, *command)
        assert result.returncode == 0, (command, result.stderr)
        assert result.stderr.strip() == "", (command, result.stderr)
    imported = _hermes(tmp_path, small.url, "sessions", "import", "--from", "jsonl", str(backup))
    assert imported.returncode == 1, imported.stdout + imported.stderr
    lines = [line for line in imported.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"hermes: {FULL}"), imported.stderr
    assert lines[0].endswith("; nothing was written"), lines
    assert "Traceback" not in imported.stderr and small.cluster.password not in imported.stderr
    # The refused write stored nothing: no message of it, the other session as it was. (The
    # restore had made the session's row, in a transaction of its own, before its messages
    # were refused; the import marks it as in progress, and the next one restores it again.)
    after = small.snapshot()
    assert (after.messages, after.state) == (before.messages, before.state)
    assert after.sessions[session_id] == before.sessions[session_id]

    small.disk.free()
    again = _hermes(tmp_path, small.url, "sessions", "import", "--from", "jsonl", str(backup))
    assert again.returncode == 0, again.stdout + again.stderr
    with _open(small.url) as store:
        assert {session.title for session in store.list_sessions()} == {"deploy notes", "too large"}
        assert [m.content for m in store.messages(other.id)] == [large]
        assert store.get_session(session_id).message_count == 2
