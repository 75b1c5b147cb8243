"""``hermes sessions archive|unarchive`` and the auto-archive sweep (SPEC L2, L2b)."""

from __future__ import annotations

import json
from pathlib import Path

import hermes_store_postgres.plugin
import pytest
from lifecycle_helpers import FILTER_CASES, archived, found_words, ids, make
from postgres_cluster import open_home_store
from typer.testing import CliRunner

from hermes_core.cli import lifecycle_commands
from hermes_core.cli.app import build_app
from hermes_core.lifecycle.archive import archive_stale
from hermes_core.plugins import PluginHost

runner = CliRunner()


@pytest.fixture
def host() -> PluginHost:
    return PluginHost(
        load_entry_points=False, extra_plugins=[("store-postgres", hermes_store_postgres.plugin)]
    )


@pytest.fixture
def home(backend_home: Path) -> Path:
    """Every test runs with the home's store in SQLite, then in PostgreSQL."""
    return backend_home


def invoke(host: PluginHost, home: Path, *args: str, input: str | None = None):
    return runner.invoke(build_app(host), ["--home", str(home), *args], input=input)


@pytest.mark.parametrize(("args", "matching", "other"), FILTER_CASES, ids=lambda v: str(v))
def test_every_filter_selects_what_archive_hides(host, home, args, matching, other) -> None:
    with open_home_store(home) as store:
        hidden = make(store, **matching)  # type: ignore[arg-type]
        shown = make(store, **other)  # type: ignore[arg-type]
    result = invoke(host, home, "sessions", "archive", *args, "--yes")
    assert result.exit_code == 0, result.output
    assert "Archived 1 session(s)" in result.output
    with open_home_store(home) as store:
        assert archived(store) == {hidden}
        assert ids(store) == {hidden, shown}


def test_a_bare_archive_is_refused(host, home) -> None:
    with open_home_store(home) as store:
        make(store)
    result = invoke(host, home, "sessions", "archive", "--yes")
    assert result.exit_code == 1
    assert "at least one filter" in result.output
    with open_home_store(home) as store:
        assert archived(store) == set()


def test_archived_sessions_leave_listings_but_keep_messages_and_search(host, home) -> None:
    with open_home_store(home) as store:
        hidden = make(store, "cron", text="quokka census", messages=4)
        shown = make(store, "cli", text="ordinary chat")
    assert invoke(host, home, "sessions", "archive", "--source", "cron", "--yes").exit_code == 0
    listed = json.loads(invoke(host, home, "sessions", "list", "--json").output)
    assert [row["id"] for row in listed] == [shown]
    shown_output = invoke(host, home, "sessions", "show", hidden).output
    assert "quokka census 0" in shown_output
    with open_home_store(home) as store:
        assert store.get_session(hidden).message_count == 4
        assert found_words(store, "quokka") == 4


def test_pinned_and_running_sessions_are_not_archived(host, home) -> None:
    with open_home_store(home) as store:
        pinned = make(store, "cron", pinned=1)
        running = make(store, "cron", ended=False)
        lineage_root = make(store, "cron", title="kept lineage", ended=False)
        child = store.continue_after_compression(lineage_root).id
        store.set_pinned([child], True)
        plain = make(store, "cron")
    result = invoke(host, home, "sessions", "archive", "--source", "cron", "--yes")
    assert result.exit_code == 0, result.output
    assert "2 pinned session(s) left alone." in result.output
    with open_home_store(home) as store:
        assert archived(store) == {plain}
        assert {pinned, running, lineage_root, child} <= ids(store)


def test_archive_asks_and_refuses_without_a_terminal(host, home, monkeypatch) -> None:
    with open_home_store(home) as store:
        make(store, "cron")
    result = invoke(host, home, "sessions", "archive", "--source", "cron")
    assert result.exit_code == 1 and "add --yes" in result.output
    monkeypatch.setattr(lifecycle_commands, "_stdin_is_terminal", lambda: True)
    asked = invoke(host, home, "sessions", "archive", "--source", "cron", input="y\n")
    assert asked.exit_code == 0 and "Archive these 1 session(s)?" in asked.output
    with open_home_store(home) as store:
        assert len(archived(store)) == 1


def test_dry_run_lists_every_match_and_archives_nothing(host, home) -> None:
    with open_home_store(home) as store:
        matched = [make(store, "cron", days_ago=d) for d in (3, 2)]
    result = invoke(host, home, "sessions", "archive", "--source", "cron", "--dry-run")
    assert result.exit_code == 0
    assert all(session_id in result.output for session_id in matched)
    with open_home_store(home) as store:
        assert archived(store) == set()


def test_unarchive_by_id_and_by_filters(host, home) -> None:
    with open_home_store(home) as store:
        a = make(store, "cron", archived=1)
        b = make(store, "telegram", archived=1)
        c = make(store, "telegram", archived=1)
    result = invoke(host, home, "sessions", "unarchive", a[:-1])
    assert result.exit_code == 0 and "Unarchived 1 session(s)." in result.output
    preview = invoke(host, home, "sessions", "unarchive", "--source", "telegram", "--dry-run")
    assert b in preview.output and c in preview.output
    with open_home_store(home) as store:
        assert archived(store) == {b, c}
    assert invoke(host, home, "sessions", "unarchive", "--source", "telegram").exit_code == 0
    with open_home_store(home) as store:
        assert archived(store) == set()


@pytest.mark.parametrize(
    ("args", "message"),
    [([], "name the sessions"), (["x", "--source", "cli"], "not both"), (["nope"], "no session")],
)
def test_unarchive_mistakes_are_one_line(host, home, args, message) -> None:
    with open_home_store(home) as store:
        make(store)
    result = invoke(host, home, "sessions", "unarchive", *args)
    assert result.exit_code == 1 and message in result.output
    assert result.output.count("\n") == 1


def test_the_auto_archive_sweep_spares_pinned_running_and_recent_sessions(home) -> None:
    with open_home_store(home) as store:
        stale = make(store, days_ago=60)
        recent = make(store, days_ago=5)
        pinned = make(store, days_ago=60, pinned=1)
        running = make(store, days_ago=60, ended=False)
        assert archive_stale(store.lifecycle, 30) == 1
        assert archived(store) == {stale}
        assert {recent, pinned, running} <= ids(store) - archived(store)
