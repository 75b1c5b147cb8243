"""The chat's direct way in (``hermes_core.cli.chat_fast_path``): which command lines skip the
typer app, and that a chat start through the installed ``hermes`` imports neither typer, pydantic
nor the other commands' modules (issue 11's start-up budget)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from chat_helpers import chat_env
from installed_hermes import hermes_command

from hermes_core.cli.chat_fast_path import ChatCommandLine, parse_chat_command_line

UNUSED_ENDPOINT = "http://127.0.0.1:9/v1"
"""Never contacted: no message is sent."""


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], ChatCommandLine()),
        (["--continue="], ChatCommandLine(values={"continue_": ""})),
        (["-c", "my project"], ChatCommandLine(values={"continue_": "my project"})),
        (["-r", "2025"], ChatCommandLine(values={"resume": "2025"})),
        (["--resume=latest"], ChatCommandLine(values={"resume": "latest"})),
        (
            ["--home", "/h", "--in", "/w", "--no-restore-cwd", "--continue="],
            ChatCommandLine(
                Path("/h"), {"in_dir": "/w", "continue_": ""}, frozenset({"no_restore_cwd"})
            ),
        ),
        (["--home=/h", "chat", "-c", "x"], ChatCommandLine(Path("/h"), {"continue_": "x"})),
        (["chat"], ChatCommandLine()),
    ],
)
def test_a_plain_chat_start_takes_the_direct_path(
    argv: list[str], expected: ChatCommandLine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("_HERMES_COMPLETE", raising=False)
    assert parse_chat_command_line(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["chat", "--help"],
        ["-h"],
        ["--version"],
        ["sessions", "list"],
        ["some-plugin-command"],
        ["-c", "x", "chat"],  # the root's chat options do not go with `chat`: typer says so
        ["chat", "--home", "/h"],  # --home belongs to the root: typer says so
        ["chat", "chat"],
        ["-r"],  # missing value
        ["-r", "--in", "/w"],  # a value that looks like an option
        ["--resume="],  # an empty reference
        ["--home="],
        ["-c", "a", "-c", "b"],  # given twice
        ["--no-restore-cwd", "--no-restore-cwd"],
        ["--no-restore-cwd=yes"],
        ["-rlatest"],  # short option with its value attached: left to the real parser
        ["--", "-c"],
        ["--unknown"],
    ],
)
def test_anything_else_goes_to_the_typer_app(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("_HERMES_COMPLETE", raising=False)
    assert parse_chat_command_line(argv) is None


def test_shell_completion_goes_to_the_typer_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_HERMES_COMPLETE", "bash_complete")
    assert parse_chat_command_line([]) is None


def _imported_modules(stderr: str) -> set[str]:
    """Module names from ``-X importtime`` lines (``import time: self | cumulative | name``)."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


@pytest.mark.parametrize("args", [[], ["chat"], ["--continue="], ["-c"]])
def test_a_chat_start_imports_neither_typer_nor_the_command_tree(
    tmp_path: Path, args: list[str]
) -> None:
    env = chat_env(
        tmp_path,
        None,
        HERMES_MODEL_BASE_URL=UNUSED_ENDPOINT,
        HERMES_MODEL="startup-model",
        PYTHONPROFILEIMPORTTIME="1",
    )
    completed = subprocess.run(
        [hermes_command(), *args],
        input="",  # no terminal: the chat reads plain lines and ends at end of input
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "No message was sent; no session was recorded." in completed.stdout
    imported = _imported_modules(completed.stderr)
    assert "hermes_core.chat.repl" in imported  # the chat really started
    assert "hermes_core.cli.chat_fast_path" in imported
    unwanted = {
        "typer",
        "pydantic",
        "openai",
        "hermes_core.cli.app",
        "hermes_core.cli.session_commands",
        "hermes_core.cli.import_commands",
        "hermes_core.cli.export_commands",
        "hermes_core.cli.gateway_commands",
        "hermes_core.plugins",
        "rich",  # loaded at the first answer (or while the person types), not before the prompt
        "hermes_core.store.routed_sessions",  # store facets are made on first use
        "hermes_core.store.import_bookkeeping",
        "hermes_core.store.lifecycle_queries",
    }
    assert imported & unwanted == set()


def test_a_mistake_on_the_direct_path_is_still_one_line(tmp_path: Path) -> None:
    env = chat_env(
        tmp_path, None, HERMES_MODEL_BASE_URL=UNUSED_ENDPOINT, HERMES_MODEL="startup-model"
    )
    completed = subprocess.run(
        [hermes_command(), "--resume", "no-such-session"],
        input="",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1
    assert "Traceback" not in completed.stderr
    assert len(completed.stderr.strip().splitlines()) == 1, completed.stderr
    assert "no-such-session" in completed.stderr
