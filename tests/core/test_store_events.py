"""Every origin of a session reaches the plugins: a plugin installed through a real entry point
hears ``hermes_session_started`` / ``hermes_session_ended`` for sessions the command line
creates (``hermes demo``), imports, backup restores, and deletes while still open.

End to end: the installed ``hermes`` in a subprocess, the plugin a dist-info on ``PYTHONPATH``
writing one JSON line per event.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
from installed_hermes import hermes_command
from plugin_folders import write_dist_info

CLAUDE_LOG = (
    Path(__file__).resolve().parents[1]
    / "data/importing/claude/projects/-home-ana-src-parser"
    / "11111111-aaaa-4bbb-8ccc-000000000001.jsonl"
)

WATCHER = """
import json
import os

from hermes_hookspecs import hookimpl


def _log(record):
    with open(os.environ["WATCH_LOG"], "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\\n")


@hookimpl
def hermes_session_started(session):
    _log({"event": "started", "id": session.id, "source": session.source})


@hookimpl
def hermes_session_ended(session, reason):
    _log({"event": "ended", "id": session.id, "reason": reason, "ended": session.ended_at})
"""


@pytest.fixture
def world(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "hermes_watch.py").write_text(textwrap.dedent(WATCHER), encoding="utf-8")
    write_dist_info(site, "hermes-watch", "0.1.0", {"hermes": {"watch": "hermes_watch"}})
    return tmp_path


def hermes(world: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(
        HOME=str(world / "user-home"),
        XDG_CACHE_HOME=str(world / "cache"),
        PYTHONPATH=str(world / "site"),
        WATCH_LOG=str(world / "events.jsonl"),
        COLUMNS="200",
    )
    result = subprocess.run(
        [hermes_command(), "--home", str(home), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def take_events(world: Path) -> list[dict[str, object]]:
    """The events logged since the last call."""
    log = world / "events.jsonl"
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8").splitlines()
    log.unlink()
    return [json.loads(line) for line in lines]


def rows(home: Path, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
    connection = sqlite3.connect(home / "state.db")
    try:
        return connection.execute(sql, params).fetchall()
    finally:
        connection.close()


def ids_of(events: list[dict[str, object]], event: str) -> list[object]:
    return [e["id"] for e in events if e["event"] == event]


def test_plugins_hear_every_session_start_and_end_whatever_its_origin(world: Path) -> None:
    # Created by the command line (the demo writes through the store facade).
    demo = world / "demo"
    hermes(world, demo, "demo", "--into", str(demo))
    events = take_events(world)
    every = {r[0] for r in rows(demo, "SELECT id FROM sessions")}
    ended = dict(rows(demo, "SELECT id, end_reason FROM sessions WHERE ended_at IS NOT NULL"))
    assert len(every) >= 10
    assert sorted(ids_of(events, "started")) == sorted(every)  # each exactly once
    assert sorted(ids_of(events, "ended")) == sorted(ended)
    assert {e["id"]: e["reason"] for e in events if e["event"] == "ended"} == ended
    assert all(e["ended"] is not None for e in events if e["event"] == "ended")

    # An import: the conversation and its subagent transcript, both stored as ended.
    imported_home = world / "imported"
    hermes(world, imported_home, "sessions", "import", str(CLAUDE_LOG), "--from", "claude")
    events = take_events(world)
    imported = {r[0] for r in rows(imported_home, "SELECT id FROM sessions")}
    assert len(imported) == 2  # the session and its delegate
    assert set(ids_of(events, "started")) == imported
    assert sorted(ids_of(events, "ended")) == sorted(imported)
    assert {e["reason"] for e in events if e["event"] == "ended"} == {"imported"}
    assert {e["source"] for e in events if e["event"] == "started"} == {"claude-code"}
    # Importing the unchanged file again writes nothing, so nothing is announced.
    hermes(world, imported_home, "sessions", "import", str(CLAUDE_LOG), "--from", "claude")
    assert take_events(world) == []

    # A jsonl backup restored into an empty home: every session started; the ended ones end
    # with the reason they had.
    backup = world / "backup.jsonl"
    hermes(world, demo, "sessions", "export", str(backup), "--format", "jsonl")
    assert take_events(world) == []  # exporting starts and ends nothing
    restored_home = world / "restored"
    hermes(world, restored_home, "sessions", "import", str(backup), "--from", "jsonl")
    events = take_events(world)
    assert sorted(ids_of(events, "started")) == sorted(every)
    assert {e["id"]: e["reason"] for e in events if e["event"] == "ended"} == ended

    # Deleting a session that is still open ends it (reason "deleted"); an ended one does not.
    [(open_id,)] = rows(
        restored_home,
        "SELECT id FROM sessions WHERE ended_at IS NULL AND pinned = 1",
    )
    hermes(world, restored_home, "sessions", "delete", str(open_id), "--yes")
    events = take_events(world)
    assert [(e["event"], e["id"], e["reason"]) for e in events] == [("ended", open_id, "deleted")]
    ended_id = next(iter(ended))
    hermes(world, restored_home, "sessions", "delete", str(ended_id), "--yes")
    assert take_events(world) == []
