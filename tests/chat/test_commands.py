"""Slash-command parsing and completion, and the optional value of ``-c``."""

from __future__ import annotations

import pytest

from hermes_core.chat.commands import COMMANDS, parse_slash
from hermes_core.chat.repl import slash_completions
from hermes_core.cli.chat_fast_path import normalise_argv


def test_slash_lines_split_into_name_and_argument() -> None:
    assert parse_slash("/title  my big project ") == ("title", "my big project")
    assert parse_slash("/EXIT") == ("exit", "")
    assert parse_slash("hello /title") is None
    assert parse_slash("//etc/hosts is a file") is None


def test_every_command_of_the_spec_exists() -> None:
    assert set(COMMANDS) == {
        "title", "new", "compress", "resume", "sessions", "branch", "save", "handoff", "help", "exit",
    }  # fmt: skip


def test_completion_offers_commands_then_titles_for_resume_and_title() -> None:
    titles = ["release plan", "release plan #2", "garden"]
    assert slash_completions("/re", lambda: titles) == [("/resume", -3)]
    assert [c for c, _ in slash_completions("/", lambda: titles)] == [f"/{n}" for n in COMMANDS]
    assert slash_completions("/resume rel", lambda: titles) == [
        ("release plan", -3),
        ("release plan #2", -3),
    ]
    assert slash_completions("/title Gar", lambda: titles) == [("garden", -3)]
    assert slash_completions("/save x", lambda: titles) == []
    assert slash_completions("plain text", lambda: titles) == []


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["-c"], ["--continue="]),
        (["--continue"], ["--continue="]),
        (["-c", "--in", "dir"], ["--continue=", "--in", "dir"]),
        (["chat", "-c"], ["chat", "--continue="]),
        (["-c", "my project"], ["-c", "my project"]),
        (["sessions", "show", "--", "-c"], ["sessions", "show", "--", "-c"]),
    ],
)
def test_a_bare_continue_gets_an_empty_value(argv: list[str], expected: list[str]) -> None:
    assert normalise_argv(argv) == expected


@pytest.mark.parametrize(
    ("argv", "needed"),
    [
        ([], False),
        (["--continue="], False),
        (["-c", "my project"], False),
        (["-r", "20250101_000000_abcdef"], False),
        (["--in", "/tmp", "--continue="], False),
        (["chat", "-c", "x"], False),
        (["--help"], True),
        (["sessions", "list"], False),
        (["--home", "/h", "some-plugin-command"], True),
        (["-c", "x", "some-plugin-command"], True),
    ],
)
def test_the_chat_starts_without_loading_plugins(argv: list[str], needed: bool) -> None:
    from hermes_core.cli.main import _needs_plugins

    assert _needs_plugins(argv) is needed
