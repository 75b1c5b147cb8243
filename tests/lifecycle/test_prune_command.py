"""``hermes sessions prune`` through typer's CliRunner on ``build_app`` (SPEC L1)."""

from __future__ import annotations

from pathlib import Path

import hermes_store_postgres.plugin
import pytest
from lifecycle_helpers import FILTER_CASES, assert_whole, found_words, ids, make
from postgres_cluster import open_home_store
from typer.testing import CliRunner

from hermes_core.cli import lifecycle_commands
from hermes_core.cli.app import build_app
from hermes_core.lifecycle import state
from hermes_core.plugins import PluginHost
from hermes_core.selection.options import FILTER_OPTIONS

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


def test_the_filter_table_covers_every_filter_option() -> None:
    covered = {case[0][0] for case in FILTER_CASES}
    assert covered == {option.flag for option in FILTER_OPTIONS}


@pytest.mark.parametrize(("args", "matching", "other"), FILTER_CASES, ids=lambda v: str(v))
def test_every_filter_selects_what_prune_deletes(host, home, args, matching, other) -> None:
    with open_home_store(home) as store:
        doomed = make(store, **matching)  # type: ignore[arg-type]
        kept = make(store, **other)  # type: ignore[arg-type]
    result = invoke(host, home, "sessions", "prune", *args, "--yes")
    assert result.exit_code == 0, result.output
    assert "Pruned 1 session(s)" in result.output
    with open_home_store(home) as store:
        assert ids(store) == {kept}
        assert doomed not in ids(store)
        assert_whole(store)


def test_bare_prune_deletes_only_ended_sessions_idle_90_days_or_more(host, home) -> None:
    with open_home_store(home) as store:
        old = make(store, days_ago=120, idle_days=95)
        recent = make(store, days_ago=120, idle_days=80)  # long-lived but used recently
        running = make(store, days_ago=200, ended=False)
    result = invoke(host, home, "sessions", "prune", "--yes")
    assert result.exit_code == 0, result.output
    assert "Kept: 1 running session(s) that match." in result.output
    with open_home_store(home) as store:
        assert ids(store) == {recent, running}
        assert old not in ids(store)


def test_any_filter_turns_the_implicit_90_days_off(host, home) -> None:
    with open_home_store(home) as store:
        yesterday = make(store, "cron", days_ago=1)
        make(store, "cli", days_ago=1)
    assert invoke(host, home, "sessions", "prune", "--source", "cron", "--yes").exit_code == 0
    with open_home_store(home) as store:
        assert yesterday not in ids(store) and len(ids(store)) == 1


def test_active_sessions_are_never_pruned(host, home) -> None:
    with open_home_store(home) as store:
        running = make(store, "cron", days_ago=400, ended=False)
    result = invoke(host, home, "sessions", "prune", "--source", "cron", "--yes")
    assert result.exit_code == 0
    assert "No sessions to prune." in result.output
    with open_home_store(home) as store:
        assert ids(store) == {running}


def test_pinned_sessions_and_a_lineage_holding_one_are_kept_whole(host, home) -> None:
    with open_home_store(home) as store:
        pinned = make(store, days_ago=300, pinned=1)
        root = make(store, days_ago=300, title="long project", ended=False)
        second = store.continue_after_compression(root).id
        third = store.continue_after_compression(second).id
        store.set_pinned([third], True)
        store.end_session(third, "user_exit")
        unpinned_root = make(store, days_ago=300, title="other project", ended=False)
        unpinned_child = store.continue_after_compression(unpinned_root).id
        store.end_session(unpinned_child, "user_exit")
    result = invoke(host, home, "sessions", "prune", "--newer-than", "1000", "--yes")
    assert result.exit_code == 0, result.output
    assert "Kept: 4 pinned or protected session(s)" in result.output
    with open_home_store(home) as store:
        assert ids(store) == {pinned, root, second, third}
        assert unpinned_root not in ids(store) and unpinned_child not in ids(store)


def test_delegates_go_with_their_session_and_a_pinned_delegate_keeps_its_family(host, home) -> None:
    with open_home_store(home) as store:
        parent = make(store, days_ago=200)
        helper = make(store, days_ago=200, parent_session_id=parent, parent_kind="delegate")
        keeper = make(store, days_ago=200)
        pinned_helper = make(
            store, days_ago=200, parent_session_id=keeper, parent_kind="delegate", pinned=1
        )
        busy = make(store, days_ago=200)
        running_helper = make(
            store, days_ago=200, parent_session_id=busy, parent_kind="delegate", ended=False
        )
    result = invoke(host, home, "sessions", "prune", "--older-than", "100", "--yes")
    assert result.exit_code == 0, result.output
    with open_home_store(home) as store:
        assert ids(store) == {keeper, pinned_helper, busy, running_helper}
        assert parent not in ids(store) and helper not in ids(store)


def test_archived_sessions_are_skipped_unless_include_archived(host, home) -> None:
    with open_home_store(home) as store:
        hidden = make(store, "cron", archived=1)
        shown = make(store, "cron")
    assert invoke(host, home, "sessions", "prune", "--source", "cron", "--yes").exit_code == 0
    with open_home_store(home) as store:
        assert ids(store) == {hidden}
    result = invoke(
        host, home, "sessions", "prune", "--source", "cron", "--include-archived", "--yes"
    )
    assert result.exit_code == 0, result.output
    with open_home_store(home) as store:
        assert ids(store) == set()
    assert shown


def test_index_rows_go_with_the_messages(host, home) -> None:
    with open_home_store(home) as store:
        make(store, "cron", text="zebrafish 斑马鱼研究 notes", messages=6)
        make(store, "cli", text="zebrafish elsewhere", messages=2)
        assert found_words(store, "zebrafish") == 8
    assert invoke(host, home, "sessions", "prune", "--source", "cron", "--yes").exit_code == 0
    with open_home_store(home) as store:
        assert found_words(store, "zebrafish") == 2
        assert store.search_index.cjk_matches("斑马鱼", 10) == []
        assert_whole(store)


def test_without_yes_and_without_a_terminal_it_refuses_with_a_hint(host, home) -> None:
    with open_home_store(home) as store:
        session = make(store, "cron")
    result = invoke(host, home, "sessions", "prune", "--source", "cron")
    assert result.exit_code == 1
    assert "add --yes" in result.output and "Traceback" not in result.output
    with open_home_store(home) as store:
        assert ids(store) == {session}


def test_it_shows_the_count_oldest_and_newest_then_asks(host, home, monkeypatch) -> None:
    monkeypatch.setattr(lifecycle_commands, "_stdin_is_terminal", lambda: True)
    with open_home_store(home) as store:
        oldest = make(store, "cron", days_ago=30, title="the oldest")
        make(store, "cron", days_ago=20)
        newest = make(store, "cron", days_ago=10, title="the newest")
    refused = invoke(host, home, "sessions", "prune", "--source", "cron", input="n\n")
    assert refused.exit_code == 1
    assert "3 session(s) to prune (6 messages)" in refused.output
    assert f"oldest: {oldest} 'the oldest'" in refused.output
    assert f"newest: {newest} 'the newest'" in refused.output
    assert "Delete these 3 session(s) for good?" in refused.output
    with open_home_store(home) as store:
        assert len(ids(store)) == 3
    accepted = invoke(host, home, "sessions", "prune", "--source", "cron", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    with open_home_store(home) as store:
        assert ids(store) == set()


def test_dry_run_lists_every_match_and_deletes_nothing(host, home) -> None:
    with open_home_store(home) as store:
        matched = [make(store, "cron", days_ago=d) for d in (3, 2, 1)]
    result = invoke(host, home, "sessions", "prune", "--source", "cron", "--dry-run")
    assert result.exit_code == 0, result.output
    for session_id in matched:
        assert session_id in result.output
    assert "Dry run: nothing was deleted." in result.output
    with open_home_store(home) as store:
        assert ids(store) == set(matched)


def test_a_bad_filter_value_is_one_line_and_exit_1(host, home) -> None:
    result = invoke(host, home, "sessions", "prune", "--older-than", "soon", "--yes")
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "--older-than" in result.output


def test_a_second_pruner_is_refused_while_a_live_process_holds_the_lock(host, home) -> None:
    import json
    import os
    import socket
    import time

    with open_home_store(home) as store:
        session = make(store, "cron")
        holder = {
            "token": "other",
            "pid": os.getppid(),  # alive for the whole test
            "host": socket.gethostname(),
            "purpose": "prune",
            "since": time.time(),
            "expires": time.time() + 600,
        }
        with store.lifecycle.transaction() as db:
            state.write(db, {state.LOCK: json.dumps(holder)})
    refused = invoke(host, home, "sessions", "prune", "--source", "cron", "--yes")
    assert refused.exit_code == 1
    assert "another Hermes process is cleaning up this store" in refused.output
    with open_home_store(home) as store:
        assert ids(store) == {session}
        # A holder whose process is gone does not block anyone.
        holder["pid"] = 2**22 + 12345
        with store.lifecycle.transaction() as db:
            state.write(db, {state.LOCK: json.dumps(holder)})
    taken_over = invoke(host, home, "sessions", "prune", "--source", "cron", "--yes")
    assert taken_over.exit_code == 0, taken_over.output
    with open_home_store(home) as store:
        assert ids(store) == set()
        assert state.read(store.lifecycle, [state.LOCK]) == {}


def test_include_archived_alone_keeps_the_implicit_90_days(host, home) -> None:
    with open_home_store(home) as store:
        old_hidden = make(store, days_ago=100, archived=1)
        young_hidden = make(store, days_ago=10, archived=1)
    result = invoke(host, home, "sessions", "prune", "--include-archived", "--yes")
    assert result.exit_code == 0, result.output
    with open_home_store(home) as store:
        assert ids(store) == {young_hidden}
        assert old_hidden not in ids(store)


def test_a_session_pinned_or_resumed_after_the_plan_is_kept(home) -> None:
    from hermes_core.lifecycle.lock import acquire
    from hermes_core.lifecycle.prune import plan_prune, prune_selection, run_prune
    from hermes_core.selection.filters import SessionFilter

    with open_home_store(home) as store:
        pinned_later = make(store, "cron")
        resumed_later = make(store, "cron")
        doomed = make(store, "cron")
        selection = prune_selection(SessionFilter(source="cron"), include_archived=False)
        plan = plan_prune(store.lifecycle, selection)
        assert {c.id for c in plan.candidates} == {pinned_later, resumed_later, doomed}
        store.set_pinned([pinned_later], True)
        store.reopen_session(resumed_later)
        lock = acquire(store.lifecycle, "prune")
        try:
            assert run_prune(store.lifecycle, plan, lock) == 1
        finally:
            lock.release()
        assert ids(store) == {pinned_later, resumed_later}
