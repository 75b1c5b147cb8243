"""``SessionFilter`` → SQL (SPEC F1), checked against a real store."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hermes_hookspecs import Message, ToolCall

from hermes_core.selection.filters import FilterError, SessionFilter, build_where
from hermes_core.store import SessionStore
from hermes_core.store.protocol import Store

T0 = 1_780_000_000.0
DAY = 86400.0


@pytest.fixture
def store(backend_store: Store) -> Store:
    """Every test runs on each backend (SQLite, PostgreSQL)."""
    return backend_store


def selected(store: SessionStore, **fields: Any) -> set[str]:
    return {session.id for session in store.select_sessions(SessionFilter(**fields))}


def session(store: SessionStore, source: str = "telegram", **fields: Any) -> str:
    fields.setdefault("started_at", T0 - 30 * DAY)
    return store.create_session(source, **fields).id


def say(store: SessionStore, session_id: str, *timestamps: float) -> None:
    store.append_messages(session_id, [Message("user", "hi", timestamp=t) for t in timestamps])


# ------------------------------------------------------------------ the empty filter


def test_an_empty_filter_is_true_and_selects_everything(store: SessionStore) -> None:
    assert build_where(SessionFilter()) == ("1", [])
    parent = session(store)
    everything = {
        parent,
        session(store, archived=True),
        session(store, pinned=True),
        session(store, parent_session_id=parent, parent_kind="delegate"),
    }
    store.end_session(parent, "done", ended_at=T0)
    assert selected(store) == everything


# ------------------------------------------------------------------ time


def test_older_and_newer_than_use_the_last_message(store: SessionStore) -> None:
    talked_yesterday = session(store, started_at=T0 - 10 * DAY)
    say(store, talked_yesterday, T0 - 9 * DAY, T0 - 1 * DAY)
    quiet_for_a_week = session(store, started_at=T0 - 20 * DAY)
    say(store, quiet_for_a_week, T0 - 7 * DAY)
    assert selected(store, older_than=T0 - 3 * DAY) == {quiet_for_a_week}
    assert selected(store, newer_than=T0 - 3 * DAY) == {talked_yesterday}


def test_empty_sessions_fall_back_to_their_start(store: SessionStore) -> None:
    empty_old = session(store, started_at=T0 - 5 * DAY)
    empty_new = session(store, started_at=T0 - 1 * DAY)
    assert selected(store, older_than=T0 - 3 * DAY) == {empty_old}
    assert selected(store, newer_than=T0 - 3 * DAY) == {empty_new}


def test_older_than_is_strict_and_newer_than_inclusive(store: SessionStore) -> None:
    at_the_bound = session(store, started_at=T0 - 5 * DAY)
    say(store, at_the_bound, T0 - 2 * DAY)
    assert selected(store, older_than=T0 - 2 * DAY) == set()
    assert selected(store, newer_than=T0 - 2 * DAY) == {at_the_bound}
    assert selected(store, older_than=T0 - 2 * DAY + 0.001) == {at_the_bound}


def test_before_and_after_use_the_start(store: SessionStore) -> None:
    started_early = session(store, started_at=T0 - 10 * DAY)
    say(store, started_early, T0 - 1 * DAY)  # recent activity does not matter here
    started_late = session(store, started_at=T0 - 2 * DAY)
    assert selected(store, before=T0 - 5 * DAY) == {started_early}
    assert selected(store, after=T0 - 5 * DAY) == {started_late}
    assert selected(store, before=T0 - 2 * DAY) == {started_early}  # strict
    assert selected(store, after=T0 - 2 * DAY) == {started_late}  # inclusive


def test_time_pairs_form_windows(store: SessionStore) -> None:
    by_age = {days: session(store, started_at=T0 - days * DAY) for days in (1, 5, 10)}
    assert selected(store, newer_than=T0 - 7 * DAY, older_than=T0 - 3 * DAY) == {by_age[5]}
    assert selected(store, after=T0 - 7 * DAY, before=T0 - 3 * DAY) == {by_age[5]}
    assert selected(store, after=T0 - 7 * DAY, older_than=T0 - 3 * DAY) == {by_age[5]}


# ------------------------------------------------------------------ exact attributes


@pytest.mark.parametrize(
    ("filter_name", "column", "value", "near_misses"),
    [
        ("end_reason", "end_reason", "done", ["don", "Done", "done "]),
        ("user", "user_id", "12345678", ["1234567", "123456789"]),
        ("chat_id", "chat_id", "-100200", ["-1002", "100200"]),
        ("chat_type", "chat_type", "group", ["Group", "supergroup"]),
        ("provider", "billing_provider", "openrouter", ["OpenRouter", "open"]),
    ],
)
def test_exact_attributes_match_only_the_exact_value(
    store: SessionStore, filter_name: str, column: str, value: str, near_misses: list[str]
) -> None:
    ids: dict[str | None, str] = {}
    for text in [value, *near_misses, None]:
        if column == "end_reason":
            ids[text] = session(store)
            if text is not None:
                store.end_session(ids[text], text, ended_at=T0)
        else:
            attribute: dict[str, Any] = {column: text}
            ids[text] = session(store, **attribute)
    assert selected(store, **{filter_name: value}) == {ids[value]}


def test_source_is_exact(store: SessionStore) -> None:
    telegram = session(store, "telegram")
    session(store, "tele")
    session(store, "Telegram")
    session(store, "cli")
    assert selected(store, source="telegram") == {telegram}


# ------------------------------------------------------------------ substrings


@pytest.mark.parametrize(
    ("filter_name", "column"),
    [("title", "title"), ("model", "model"), ("branch", "git_branch")],
)
def test_text_attributes_match_a_substring_in_any_case(
    store: SessionStore, filter_name: str, column: str
) -> None:
    hit_lower = session(store, **{column: "feature/smoke-test-a"})
    hit_upper = session(store, **{column: "SMOKE TEST b"})
    session(store, **{column: "smok e"})
    session(store, **{column: "something else"})
    session(store)  # no value at all
    assert selected(store, **{filter_name: "Smoke"}) == {hit_lower, hit_upper}
    assert selected(store, **{filter_name: "smoke-test"}) == {hit_lower}


@pytest.mark.parametrize(
    ("needle", "expected_title"),
    [
        ("100%", "100% done"),
        ("a_b", "a_b"),
        ("%", "100% done"),
        ("_", "a_b"),
        ("\\", "back\\slash"),
    ],
)
def test_wildcard_characters_in_a_title_are_literal(
    store: SessionStore, needle: str, expected_title: str
) -> None:
    ids = {
        title: session(store, title=title)
        for title in ["100% done", "100 done", "1000 done", "a_b", "axb", "ab", "back\\slash"]
    }
    assert selected(store, title=needle) == {ids[expected_title]}


def test_values_are_parameters_not_sql(store: SessionStore) -> None:
    kept = session(store, title="keep me")
    assert selected(store, title="'; DROP TABLE sessions; --") == set()
    assert selected(store, source="x' OR '1'='1") == set()
    assert selected(store) == {kept}


# ------------------------------------------------------------------ paths


def test_cwd_is_a_prefix_of_whole_path_components(store: SessionStore) -> None:
    cwds = ["/a/b", "/a/b/c", "/a/b/c/d", "/a/bc", "/a", "/x/a/b", "/a/b_c"]
    ids = {cwd: session(store, cwd=cwd) for cwd in cwds}
    session(store)  # no cwd
    expected = {ids["/a/b"], ids["/a/b/c"], ids["/a/b/c/d"]}
    assert selected(store, cwd="/a/b") == expected
    assert selected(store, cwd="/a/b/") == expected
    assert selected(store, cwd="/a/b/c") == {ids["/a/b/c"], ids["/a/b/c/d"]}
    assert selected(store, cwd="/a/b_") == set()
    assert selected(store, cwd="/") == set(ids.values())


def test_workspace_is_the_repo_root_else_the_cwd(store: SessionStore) -> None:
    in_repo = session(store, git_repo_root="/home/u/work/hermes", cwd="/home/u/work/hermes/sub")
    bare_dir = session(store, cwd="/srv/other-proj")
    session(store)  # neither
    assert selected(store, workspace="hermes") == {in_repo}
    assert selected(store, workspace="work/herm") == {in_repo}
    assert selected(store, workspace="other-proj") == {bare_dir}
    assert selected(store, workspace="proj") == {bare_dir}
    assert selected(store, workspace="sub") == set()  # the repo root is the workspace
    assert selected(store, workspace="Hermes") == set()  # case-sensitive


def test_workspace_accepts_a_full_path_with_tilde_or_trailing_slash(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    in_repo = session(store, git_repo_root="/home/u/work/hermes")
    session(store, cwd="/srv/work")
    assert selected(store, workspace="/home/u/work/hermes/") == {in_repo}
    assert selected(store, workspace="~/work") == {in_repo}
    assert selected(store, workspace="hermes/") == {in_repo}


# ------------------------------------------------------------------ numbers


def test_message_bounds_are_inclusive(store: SessionStore) -> None:
    by_count = {}
    for count in (0, 1, 3, 5):
        by_count[count] = session(store)
        say(store, by_count[count], *[T0 - 10 * DAY + i for i in range(count)])
    assert selected(store, min_messages=1, max_messages=3) == {by_count[1], by_count[3]}
    assert selected(store, max_messages=0) == {by_count[0]}
    assert selected(store, min_messages=5) == {by_count[5]}
    assert selected(store, min_messages=3, max_messages=3) == {by_count[3]}


def test_tokens_are_input_plus_output(store: SessionStore) -> None:
    small = session(store, input_tokens=300, output_tokens=200)
    big = session(store, input_tokens=400, output_tokens=200)
    none = session(store)
    assert selected(store, max_tokens=500) == {small, none}
    assert selected(store, min_tokens=501) == {big}
    assert selected(store, min_tokens=500, max_tokens=600) == {small, big}


def test_cost_is_actual_else_estimated_and_unknown_never_matches(store: SessionStore) -> None:
    actual_cheap = session(store, cost_actual_usd=0.005, cost_estimated_usd=5.0)
    estimated_only = session(store, cost_estimated_usd=2.0)
    free = session(store, cost_actual_usd=0.0)
    session(store)  # cost unknown
    assert selected(store, max_cost=0.01) == {actual_cheap, free}
    assert selected(store, min_cost=1.0) == {estimated_only}
    assert selected(store, min_cost=0.0) == {actual_cheap, estimated_only, free}
    assert selected(store, min_cost=2.0, max_cost=2.0) == {estimated_only}


def test_tool_call_bounds_count_calls(store: SessionStore) -> None:
    no_tools = session(store)
    say(store, no_tools, T0)
    two_tools = session(store)
    call = (ToolCall("terminal"),)
    store.append_messages(
        two_tools,
        [Message("assistant", "x", tool_calls=call), Message("assistant", "y", tool_calls=call)],
    )
    assert selected(store, max_tool_calls=0) == {no_tools}
    assert selected(store, min_tool_calls=2) == {two_tools}
    assert selected(store, min_tool_calls=1, max_tool_calls=2) == {two_tools}


# ------------------------------------------------------------------ scope


def test_ended_only_skips_active_sessions(store: SessionStore) -> None:
    ended = session(store)
    store.end_session(ended, "done", ended_at=T0)
    active = session(store)
    assert selected(store, ended_only=True) == {ended}
    assert selected(store) == {ended, active}


def test_archived_and_delegate_sessions_can_be_left_out(store: SessionStore) -> None:
    parent = session(store)
    archived = session(store, archived=True)
    delegate = session(store, parent_session_id=parent, parent_kind="delegate")
    branch = session(store, parent_session_id=parent, parent_kind="branch")
    assert selected(store, include_archived=False) == {parent, delegate, branch}
    assert selected(store, include_delegates=False) == {parent, archived, branch}


def test_session_ids_select_exactly_those(store: SessionStore) -> None:
    first, second, _third = session(store), session(store), session(store)
    assert selected(store, session_ids=(first, second)) == {first, second}
    assert selected(store, session_ids=(first, "no-such-id", "it's")) == {first}
    assert selected(store, session_ids=()) == set()


def test_many_session_ids_fit_in_one_query(store: SessionStore) -> None:
    first = session(store)
    wanted = (first, *(f"missing-{n}" for n in range(40_000)))
    assert selected(store, session_ids=wanted) == {first}


def test_every_filter_combines_with_and(store: SessionStore) -> None:
    match = session(store, "cron", title="nightly", model="gpt-5", cwd="/srv/jobs")
    store.end_session(match, "done", ended_at=T0)
    session(store, "cron", title="nightly 2", model="claude", cwd="/srv/jobs")
    session(store, "cli", title="nightly 3", model="gpt-5", cwd="/srv/jobs")
    chosen = dict(source="cron", title="NIGHTLY", model="gpt", cwd="/srv", ended_only=True)
    assert selected(store, **chosen) == {match}


# ------------------------------------------------------------------ has_attribute_filters

_NOT_NARROWING = {"ended_only", "include_archived", "include_delegates"}


def _some_value(field: dataclasses.Field[Any]) -> object:
    if field.name == "session_ids":
        return ()
    if "str" in str(field.type):
        return ""
    return 0


@pytest.mark.parametrize(
    "field",
    [f for f in dataclasses.fields(SessionFilter) if f.name not in _NOT_NARROWING],
    ids=lambda f: f.name,
)
def test_every_narrowing_field_counts_as_a_filter(field: dataclasses.Field[Any]) -> None:
    narrowing: dict[str, Any] = {field.name: _some_value(field)}
    selection = SessionFilter(**narrowing)
    assert selection.has_attribute_filters
    assert selection.is_bulk


def test_scope_switches_are_not_filters() -> None:
    assert not SessionFilter().has_attribute_filters
    scoped = SessionFilter(ended_only=True, include_archived=False, include_delegates=False)
    assert not scoped.has_attribute_filters
    assert not scoped.is_bulk


def test_filter_error_is_reexported() -> None:
    assert issubclass(FilterError, ValueError)
