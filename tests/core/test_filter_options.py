"""Raw filter options → a checked ``SessionFilter``, and the typer option set (SPEC F1)."""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer.testing import CliRunner

from hermes_core.selection.filters import SessionFilter
from hermes_core.selection.options import (
    FILTER_OPTIONS,
    FilterError,
    bulk_filter_options,
    filter_from_options,
)
from hermes_core.store import SessionStore

NOW = 1_780_000_000.0
DAY = 86400.0


# ------------------------------------------------------------------ filter_from_options


def test_no_options_give_an_empty_filter() -> None:
    assert filter_from_options(now=NOW) == SessionFilter()


def test_time_values_are_parsed_against_one_now() -> None:
    selection = filter_from_options(
        older_than="2d", newer_than="1w", before="12h", after="30", now=NOW
    )
    assert selection.older_than == NOW - 2 * DAY
    assert selection.newer_than == NOW - 7 * DAY
    assert selection.before == NOW - 0.5 * DAY
    assert selection.after == NOW - 30 * DAY


@pytest.mark.parametrize("name", ["older_than", "newer_than", "before", "after"])
def test_a_bad_time_names_its_flag(name: str) -> None:
    flag = "--" + name.replace("_", "-")
    with pytest.raises(FilterError, match=f"^{flag}: '5x' is not a duration"):
        garbage: dict[str, Any] = {name: "5x"}
        filter_from_options(**garbage, now=NOW)


@pytest.mark.parametrize(
    ("newer", "older"), [("1d", "2d"), ("2d", "2d"), ("2026-07-05", "2026-07-04 23:59")]
)
def test_an_empty_activity_window_names_both_flags(newer: str, older: str) -> None:
    with pytest.raises(FilterError) as caught:
        filter_from_options(newer_than=newer, older_than=older, now=NOW)
    message = str(caught.value)
    expected = f"--newer-than {newer} and --older-than {older} leave an empty window"
    assert message.startswith(expected)
    assert "\n" not in message


@pytest.mark.parametrize(("after", "before"), [("1d", "2d"), ("2026-07-05", "2026-07-05")])
def test_an_empty_start_window_names_both_flags(after: str, before: str) -> None:
    with pytest.raises(FilterError, match=f"^--after {after} and --before {before} leave an empty"):
        filter_from_options(after=after, before=before, now=NOW)


def test_proper_windows_are_accepted() -> None:
    activity = filter_from_options(newer_than="2d", older_than="1d", now=NOW)
    assert (activity.newer_than, activity.older_than) == (NOW - 2 * DAY, NOW - DAY)
    started = filter_from_options(after="2026-07-05 09:00", before="2026-07-05 14:30", now=NOW)
    assert started.after is not None and started.before is not None
    assert started.before - started.after == 5.5 * 3600


_PAIRS = ["messages", "tokens", "cost", "tool_calls"]


@pytest.mark.parametrize("measure", _PAIRS)
def test_a_minimum_above_its_maximum_names_both_flags(measure: str) -> None:
    flag = measure.replace("_", "-")
    with pytest.raises(FilterError, match=f"^--min-{flag} 5 and --max-{flag} 3 leave an empty"):
        bounds: dict[str, Any] = {f"min_{measure}": 5, f"max_{measure}": 3}
        filter_from_options(**bounds, now=NOW)


@pytest.mark.parametrize("measure", _PAIRS)
def test_equal_bounds_are_accepted(measure: str) -> None:
    bounds: dict[str, Any] = {f"min_{measure}": 3, f"max_{measure}": 3}
    selection = filter_from_options(**bounds, now=NOW)
    assert getattr(selection, f"min_{measure}") == getattr(selection, f"max_{measure}") == 3


@pytest.mark.parametrize("name", [f"{side}_{m}" for m in _PAIRS for side in ("min", "max")])
def test_negative_numbers_are_refused(name: str) -> None:
    with pytest.raises(FilterError, match=f"^--{name.replace('_', '-')}: -1 is negative"):
        negative: dict[str, Any] = {name: -1}
        filter_from_options(**negative, now=NOW)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_costs_must_be_finite(value: float) -> None:
    with pytest.raises(FilterError, match=r"^--max-cost: .* is not a finite number"):
        filter_from_options(max_cost=value, now=NOW)


@pytest.mark.parametrize(
    "name",
    [
        "source",
        "end_reason",
        "user",
        "chat_id",
        "chat_type",
        "provider",
        "title",
        "model",
        "branch",
        "cwd",
        "workspace",
    ],
)
def test_blank_text_values_are_refused(name: str) -> None:
    with pytest.raises(FilterError, match=f"^--{name.replace('_', '-')}: the value is empty"):
        blank: dict[str, Any] = {name: "  "}
        filter_from_options(**blank, now=NOW)


def test_text_values_pass_through_unchanged() -> None:
    selection = filter_from_options(
        source="telegram",
        end_reason="done",
        user="42",
        chat_id="-100",
        chat_type="group",
        provider="openrouter",
        title="100%",
        model="GPT",
        branch="feature/x",
        now=NOW,
    )
    assert (selection.source, selection.end_reason, selection.user) == ("telegram", "done", "42")
    assert (selection.chat_id, selection.chat_type, selection.provider) == (
        "-100",
        "group",
        "openrouter",
    )
    assert (selection.title, selection.model, selection.branch) == ("100%", "GPT", "feature/x")


def test_cwd_expands_tilde_and_becomes_absolute(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", "/home/tester")
    monkeypatch.chdir(tmp_path)
    assert filter_from_options(cwd="~/scratch/", now=NOW).cwd == "/home/tester/scratch"
    assert filter_from_options(cwd="proj", now=NOW).cwd == os.path.join(tmp_path, "proj")
    assert filter_from_options(workspace="~/w", now=NOW).workspace == "/home/tester/w"
    assert filter_from_options(workspace="proj", now=NOW).workspace == "proj"


def test_scope_switches_pass_through() -> None:
    selection = filter_from_options(
        ended_only=True, include_archived=False, include_delegates=False, now=NOW
    )
    assert selection == SessionFilter(
        ended_only=True, include_archived=False, include_delegates=False
    )


def test_the_option_table_matches_filter_from_options() -> None:
    accepted = set(inspect.signature(filter_from_options).parameters)
    offered = {option.name for option in FILTER_OPTIONS}
    assert offered == accepted - {
        "workspace",
        "ended_only",
        "include_archived",
        "include_delegates",
        "now",
    }
    assert all(option.flag == "--" + option.name.replace("_", "-") for option in FILTER_OPTIONS)


# ------------------------------------------------------------------ bulk_filter_options

runner = CliRunner()


def _app(received: list[dict[str, object]]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @bulk_filter_options
    def prune(
        yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
        *,
        filter_options: dict[str, object],
    ) -> None:
        """Delete ended sessions."""
        received.append({"yes": yes, **filter_options})

    @app.command()
    def other() -> None:
        """A second command, so that typer keeps sub-command names."""

    return app


def test_the_decorated_command_receives_every_filter_value() -> None:
    received: list[dict[str, object]] = []
    result = runner.invoke(
        _app(received),
        [
            "prune",
            "--older-than",
            "2d",
            "--source",
            "cron",
            "--cwd",
            "~/x",
            "--min-messages",
            "3",
            "--max-cost",
            "0.5",
            "--max-tool-calls",
            "0",
            "--yes",
        ],
    )
    assert result.exit_code == 0, result.output
    [values] = received
    assert values.pop("yes") is True
    assert values == {option.name: None for option in FILTER_OPTIONS} | {
        "older_than": "2d",
        "source": "cron",
        "cwd": "~/x",
        "min_messages": 3,
        "max_cost": 0.5,
        "max_tool_calls": 0,
    }


def test_without_options_every_value_is_none() -> None:
    received: list[dict[str, object]] = []
    result = runner.invoke(_app(received), ["prune"])
    assert result.exit_code == 0, result.output
    assert received == [{"yes": False, **{option.name: None for option in FILTER_OPTIONS}}]


def test_the_help_lists_every_filter_in_its_panel() -> None:
    result = runner.invoke(_app([]), ["prune", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Filters" in result.output
    for option in FILTER_OPTIONS:
        assert option.flag in result.output


def test_typer_checks_number_types() -> None:
    received: list[dict[str, object]] = []
    result = runner.invoke(_app(received), ["prune", "--min-messages", "many"])
    assert result.exit_code != 0
    assert received == []


def test_options_to_store_end_to_end(tmp_path: Path) -> None:
    store = SessionStore.open(tmp_path)
    try:
        old = store.create_session("cron", started_at=NOW - 10 * DAY).id
        store.create_session("cron", started_at=NOW - 1 * DAY)
        store.create_session("cli", started_at=NOW - 10 * DAY)
        app = typer.Typer()
        found: list[set[str]] = []

        @app.command()
        @bulk_filter_options
        def show(*, filter_options: dict[str, Any]) -> None:
            selection = filter_from_options(**filter_options, now=NOW)
            found.append({s.id for s in store.select_sessions(selection)})

        result = runner.invoke(app, ["--source", "cron", "--older-than", "5"])
        assert result.exit_code == 0, result.output
        assert found == [{old}]
    finally:
        store.close()


def test_the_command_must_take_filter_options() -> None:
    def no_slot(yes: bool = False) -> None: ...

    with pytest.raises(TypeError, match="no 'filter_options' parameter"):
        bulk_filter_options(no_slot)


def test_a_command_parameter_may_not_shadow_a_filter() -> None:
    def shadowing(source: str = "", *, filter_options: dict[str, object]) -> None: ...

    with pytest.raises(TypeError, match="already has source"):
        bulk_filter_options(shadowing)


def test_the_signature_is_rewritten_and_the_function_still_callable() -> None:
    def command(limit: int = 20, *, filter_options: dict[str, object]) -> int:
        return limit + len([v for v in filter_options.values() if v is not None])

    wrapped = bulk_filter_options(command)
    parameters = inspect.signature(wrapped).parameters
    assert "filter_options" not in parameters
    assert next(iter(parameters)) == "limit"
    assert {option.name for option in FILTER_OPTIONS} <= set(parameters)
    assert wrapped(limit=1, source="cli", title="x") == 3
    assert wrapped.__name__ == "command"
