"""``hermes sessions list``'s direct way in (``hermes_core.cli.list_fast_path``): which command
lines skip the typer app, that what they print is what the typer app prints (the installed
``hermes`` beside ``build_app`` through typer's runner, on the same store), and that the listing
imports neither pydantic nor the command tree (issue 24's start-up budget)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hermes_hookspecs import Message
from installed_hermes import run_hermes_in
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.cli.list_fast_path import ListCommandLine, parse_list_command_line
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

WIDTH = {"COLUMNS": "100"}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["sessions", "list"], ListCommandLine()),
        (["--home", "/h", "sessions", "list"], ListCommandLine(Path("/h"))),
        (
            ["--home=/h", "sessions", "list", "--json"],
            ListCommandLine(Path("/h"), {"as_json": True}),
        ),
        (
            ["sessions", "list", "--limit", "3", "--all", "--source=cli", "--workspace", "~/w"],
            ListCommandLine(
                None, {"limit": 3, "all_sessions": True, "source": "cli", "workspace": "~/w"}
            ),
        ),
    ],
)
def test_a_plain_listing_takes_the_direct_path(
    argv: list[str], expected: ListCommandLine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("_HERMES_COMPLETE", raising=False)
    assert parse_list_command_line(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["sessions"],
        ["sessions", "list", "--help"],
        ["sessions", "show", "x"],
        ["list"],
        ["sessions", "list", "--limit", "0"],  # typer reports the bad value
        ["sessions", "list", "--limit", "x"],
        ["sessions", "list", "--limit", "+3"],
        ["sessions", "list", "--limit"],  # missing value
        ["sessions", "list", "--source", "--json"],  # a value that looks like an option
        ["sessions", "list", "--source="],
        ["sessions", "list", "--json", "--json"],  # given twice
        ["sessions", "list", "--limit", "2", "--limit", "3"],
        ["sessions", "list", "--home", "/h"],  # --home belongs to the root: typer says so
        ["--home", "/a", "--home", "/b", "sessions", "list"],
        ["--home=", "sessions", "list"],
        ["-c", "x", "sessions", "list"],
        ["sessions", "list", "extra"],
        ["sessions", "list", "--unknown"],
    ],
)
def test_anything_else_goes_to_the_typer_app(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("_HERMES_COMPLETE", raising=False)
    assert parse_list_command_line(argv) is None


def test_shell_completion_goes_to_the_typer_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_HERMES_COMPLETE", "bash_complete")
    assert parse_list_command_line(["sessions", "list"]) is None


def _fill(home: Path) -> None:
    """Sessions whose ages sit mid-way between the listing's rounding steps ("2h ago",
    "2m ago"), so the two runs compared a few seconds apart show the same ages."""
    now = time.time()
    with SessionStore.open(home) as store:
        for number in range(5):
            started = now - 3600 * (number + 1) - 1800
            session = store.create_session(
                "cli" if number % 2 else "telegram",
                title=f"fast path {number}" if number != 3 else None,
                started_at=started,
                cwd=f"/work/project{number % 2}",
            )
            store.append_messages(
                session.id, [Message("user", f"question {number}", timestamp=started + 1)]
            )
        parent = store.create_session("cli", title="parent", started_at=now - 150)
        store.create_session(
            "cli", started_at=now - 140, parent_session_id=parent.id, parent_kind="delegate"
        )


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--json"],
        ["--limit", "2"],
        ["--all"],
        ["--source", "telegram"],
        ["--workspace", "project1", "--json"],
        ["--source", "nowhere"],
    ],
)
def test_the_direct_path_prints_what_the_typer_app_prints(
    tmp_path: Path, options: list[str]
) -> None:
    home = tmp_path / "home"
    _fill(home)
    direct = run_hermes_in(home, "sessions", "list", *options, env=WIDTH)
    through_typer = CliRunner().invoke(
        build_app(PluginHost(load_entry_points=False)),
        ["--home", str(home), "sessions", "list", *options],
        env=WIDTH,
    )
    assert direct.returncode == through_typer.exit_code == 0, direct.stderr
    assert direct.stdout == through_typer.stdout
    assert direct.stderr == ""
    if "--json" in options:
        assert json.loads(direct.stdout)


def test_a_broken_config_is_the_same_one_line_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("sessions:\n  retention_days: soon\n")
    direct = run_hermes_in(home, "sessions", "list")
    through_typer = CliRunner().invoke(
        build_app(PluginHost(load_entry_points=False)), ["--home", str(home), "sessions", "list"]
    )
    assert direct.returncode == through_typer.exit_code == 1
    assert direct.stdout == ""
    assert direct.stderr.strip() == through_typer.output.strip()
    assert "sessions.retention_days must be a whole number" in direct.stderr
    assert "Traceback" not in direct.stderr


def test_the_listing_imports_neither_pydantic_nor_the_command_tree(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _fill(home)
    completed = run_hermes_in(home, "sessions", "list", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "fast path 0" in completed.stdout
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in completed.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "hermes_core.cli.list_fast_path" in imported
    unwanted = {
        "pydantic",
        "hermes_core.cli.app",
        "hermes_core.cli.import_commands",
        "hermes_core.cli.export_commands",
        "hermes_core.plugins",
    }
    assert imported & unwanted == set()
