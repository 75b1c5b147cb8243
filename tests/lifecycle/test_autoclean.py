"""The automatic clean-up (SPEC L2b, L3): switches, the interval, the vacuum conditions,
failures that never reach the caller, and where the command line runs it."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from lifecycle_helpers import DAY, archived, assert_store_whole, ids, make
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.config import Config
from hermes_core.lifecycle import state
from hermes_core.lifecycle.autoclean import run_auto_clean
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore
from hermes_core.store.maintenance import file_bytes

runner = CliRunner()
PRUNE_ON = {"sessions.auto_prune": True}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_with_both_switches_off_nothing_is_read_or_written(home) -> None:
    with SessionStore.open(home) as store:
        old = make(store, days_ago=400)
        result = run_auto_clean(store, Config())
        assert result.skipped == "disabled"
        assert ids(store) == {old}
        assert state.read(store.lifecycle, [state.LAST_AUTO_PRUNE, state.LOCK]) == {}


def test_auto_prune_runs_once_per_interval(home) -> None:
    with SessionStore.open(home) as store:
        old = make(store, days_ago=120, idle_days=100)
        old_archived = make(store, days_ago=120, idle_days=100, archived=1)
        old_pinned = make(store, days_ago=120, idle_days=100, pinned=1)
        recent = make(store, days_ago=10)
        running = make(store, days_ago=300, ended=False)
        now = time.time()
        first = run_auto_clean(store, Config(PRUNE_ON), now=now)
        assert first.ran and first.pruned == 2 and first.error is None
        assert ids(store) == {old_pinned, recent, running}
        assert old not in ids(store) and old_archived not in ids(store)
        stamps = state.read(store.lifecycle, [state.LAST_AUTO_PRUNE, state.LOCK])
        assert state.as_time(stamps[state.LAST_AUTO_PRUNE]) == pytest.approx(now)
        assert state.LOCK not in stamps  # released
        # Within the 24 h interval: one read, nothing else.
        make(store, days_ago=200)
        again = run_auto_clean(store, Config(PRUNE_ON), now=now + 23 * 3600)
        assert again.skipped == "not due" and again.pruned == 0
        later = run_auto_clean(store, Config(PRUNE_ON), now=now + 25 * 3600)
        assert later.ran and later.pruned == 1
        record = state.load_record(store.lifecycle)
        assert record.last_auto_prune_removed == 1
        assert_store_whole(store.connection)


def test_retention_days_and_the_interval_come_from_the_config(home) -> None:
    config = Config({**PRUNE_ON, "sessions.retention_days": 7, "sessions.min_interval_hours": 1})
    with SessionStore.open(home) as store:
        make(store, days_ago=10)
        kept = make(store, days_ago=3)
        now = time.time()
        assert run_auto_clean(store, config, now=now).pruned == 1
        assert ids(store) == {kept}
        assert run_auto_clean(store, config, now=now + 1800).skipped == "not due"
        assert run_auto_clean(store, config, now=now + 3700).ran


def test_auto_archive_sweep_alone(home) -> None:
    config = Config({"sessions.auto_archive": True, "sessions.auto_archive_idle_days": 14})
    with SessionStore.open(home) as store:
        stale = make(store, days_ago=20)
        pinned = make(store, days_ago=20, pinned=1)
        recent = make(store, days_ago=2)
        result = run_auto_clean(store, config)
        assert result.ran and result.archived == 1 and result.pruned == 0
        assert archived(store) == {stale}
        assert ids(store) == {stale, pinned, recent}
        assert state.load_record(store.lifecycle).last_auto_archive is not None
        assert state.load_record(store.lifecycle).last_auto_prune is None


def test_a_failure_never_reaches_the_caller_and_is_recorded(home, monkeypatch, caplog) -> None:
    from hermes_core.lifecycle import prune

    def broken(*_args: object, **_kwargs: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(prune, "plan_prune", broken)
    with SessionStore.open(home) as store:
        make(store, days_ago=200)
        result = run_auto_clean(store, Config(PRUNE_ON))
        assert result.error == "OperationalError: disk I/O error"
        record = state.load_record(store.lifecycle)
        assert record.last_failure == "OperationalError: disk I/O error"
        assert record.last_failure_at is not None
        assert state.read(store.lifecycle, [state.LOCK]) == {}
    assert "automatic clean-up failed" in caplog.text
    host = PluginHost(load_entry_points=False)
    shown = runner.invoke(build_app(host), ["--home", str(home), "sessions", "stats"])
    assert "Last clean-up failure: " in shown.output
    assert "OperationalError: disk I/O error" in shown.output


# ------------------------------------------------------------------ the vacuum conditions


def _big_store(store: SessionStore, old: int, recent: int) -> tuple[list[str], list[str]]:
    padding = "lorem ipsum dolor sit amet " * 80
    olds = [make(store, days_ago=200, messages=10, text=padding) for _ in range(old)]
    news = [make(store, days_ago=2, messages=10, text=padding) for _ in range(recent)]
    store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return olds, news


def test_vacuum_follows_a_prune_that_freed_space(home) -> None:
    with SessionStore.open(home) as store:
        _big_store(store, old=60, recent=20)
        before = file_bytes(store.path)
        result = run_auto_clean(store, Config(PRUNE_ON))
        assert result.pruned == 60 and result.vacuumed, result
        assert result.reclaimed_bytes > 0
        assert file_bytes(store.path) < before * 0.6
        assert state.load_record(store.lifecycle).last_vacuum is not None
        assert_store_whole(store.connection)


def test_no_vacuum_when_the_prune_removed_nothing(home) -> None:
    with SessionStore.open(home) as store:
        _big_store(store, old=0, recent=20)
        result = run_auto_clean(store, Config(PRUNE_ON))
        assert result.ran and result.pruned == 0 and not result.vacuumed
        assert state.load_record(store.lifecycle).last_vacuum is None


def test_no_vacuum_when_switched_off(home) -> None:
    config = Config({**PRUNE_ON, "sessions.vacuum_after_prune": False})
    with SessionStore.open(home) as store:
        _big_store(store, old=60, recent=20)
        result = run_auto_clean(store, config)
        assert result.pruned == 60 and not result.vacuumed
        assert result.vacuum_skipped == "sessions.vacuum_after_prune is off"


@pytest.mark.parametrize(("days_since", "expected"), [(5, False), (31, True)])
def test_vacuum_waits_for_its_own_interval(home, days_since, expected) -> None:
    with SessionStore.open(home) as store:
        _big_store(store, old=60, recent=20)
        with store.lifecycle.transaction() as db:
            state.write(db, {state.LAST_VACUUM: time.time() - days_since * DAY})
        result = run_auto_clean(store, Config(PRUNE_ON))
        assert result.pruned == 60
        assert result.vacuumed is expected
        if not expected:
            assert "last VACUUM 5.0 days ago" in (result.vacuum_skipped or "")


def test_no_vacuum_when_it_would_reclaim_little(home) -> None:
    with SessionStore.open(home) as store:
        _big_store(store, old=1, recent=40)
        result = run_auto_clean(store, Config(PRUNE_ON))
        assert result.pruned == 1 and not result.vacuumed
        assert "free pages" in (result.vacuum_skipped or "")


# ------------------------------------------------------------------ where the CLI runs it


def _configure(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text)


@pytest.mark.parametrize(
    ("args", "runs"),
    [
        (["sessions", "list"], True),
        (["sessions", "stats"], True),
        (["sessions", "list", "--help"], False),
        (["sessions", "prune", "--help"], False),
        (["sessions", "repair", "--check-only"], False),
        (["plugins"], False),
    ],
)
def test_the_command_line_runs_it_only_where_it_should(home, args, runs) -> None:
    with SessionStore.open(home) as store:
        old = make(store, days_ago=200)
    _configure(home, "sessions:\n  auto_prune: true\n")
    host = PluginHost(load_entry_points=False)
    result = runner.invoke(build_app(host), ["--home", str(home), *args])
    assert result.exit_code == 0, result.output
    with SessionStore.open(home) as store:
        assert (old not in ids(store)) is runs
        assert (
            state.LAST_AUTO_PRUNE in state.read(store.lifecycle, [state.LAST_AUTO_PRUNE])
        ) is runs
    if runs:
        assert "hermes: automatic clean-up: pruned 1 old session(s)." in result.stderr
        assert "automatic clean-up" not in result.stdout


def test_stats_shows_the_clean_up_record_after_the_seed_lines(home) -> None:
    with SessionStore.open(home) as store:
        make(store, days_ago=200)
        make(store, "telegram", days_ago=1, archived=1)
        make(store, days_ago=1, pinned=1)
    _configure(home, "sessions:\n  auto_prune: true\n")
    host = PluginHost(load_entry_points=False)
    result = runner.invoke(build_app(host), ["--home", str(home), "sessions", "stats"])
    lines = result.stdout.splitlines()
    assert lines[0] == "Total sessions: 2"  # the prune ran first
    assert lines[1] == "Total messages: 4"
    assert lines[2:4] == ["  cli: 1 sessions", "  telegram: 1 sessions"]
    assert lines[4].startswith("Database size: ")
    assert lines[5] == "Active: 0   Pinned: 1   Archived: 1"
    assert lines[6].startswith("Size by content: messages ")
    assert "full-text index" in lines[6] and "(counted with dbstat)" in lines[6]
    assert lines[7].startswith("Searchable in part: 0 messages (longer than 1,048,576 characters")
    assert lines[8].startswith("Last auto-prune: 20") and "(removed 1 sessions)" in lines[8]
    assert lines[9] == "Last auto-archive: never — sessions.auto_archive is off"
    assert lines[10] == "Last VACUUM: never"
    assert lines[11] == "Last clean-up failure: none"


def test_optimize_reports_the_bytes_reclaimed_and_records_the_vacuum(home) -> None:
    with SessionStore.open(home) as store:
        olds, _news = _big_store(store, old=30, recent=10)
        store.delete_sessions(olds)
    host = PluginHost(load_entry_points=False)
    result = runner.invoke(build_app(host), ["--home", str(home), "sessions", "optimize"])
    assert result.exit_code == 0, result.output
    reclaimed = next(line for line in result.stdout.splitlines() if line.startswith("Bytes"))
    assert int(reclaimed.removeprefix("Bytes reclaimed: ").replace(",", "")) > 100_000
    with SessionStore.open(home) as store:
        assert state.load_record(store.lifecycle).last_vacuum is not None
    stats = runner.invoke(build_app(host), ["--home", str(home), "sessions", "stats"])
    assert "Last VACUUM: never" not in stats.stdout


class _NoDbstat:
    """A connection whose SQLite was built without the dbstat table."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def execute(self, sql: str, *params: object) -> sqlite3.Cursor:
        if "dbstat" in sql:
            raise sqlite3.OperationalError("no such table: dbstat")
        return self._connection.execute(sql, *params)  # type: ignore[arg-type]


def test_the_size_split_is_estimated_without_dbstat_and_close_to_the_count(home) -> None:
    from hermes_core.store.maintenance import size_split

    with SessionStore.open(home) as store:
        _big_store(store, old=20, recent=20)
        counted = size_split(store.connection)
        estimated = size_split(_NoDbstat(store.connection))  # type: ignore[arg-type]
    assert counted.measured and not estimated.measured
    total = counted.messages_bytes + counted.fulltext_bytes + counted.other_bytes
    assert estimated.messages_bytes + estimated.fulltext_bytes + estimated.other_bytes == total
    assert estimated.messages_bytes == pytest.approx(counted.messages_bytes, rel=0.35)
    assert estimated.fulltext_bytes == pytest.approx(counted.fulltext_bytes, rel=0.35)
