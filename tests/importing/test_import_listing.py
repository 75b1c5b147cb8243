"""The installed ``hermes sessions list`` after a real Claude Code import: laid out for
``$COLUMNS`` (80, 120, 200), for the terminal's own width in a pseudo-terminal, and in the
seed's fixed layout on a pipe; imported sessions told apart by what follows the tool's name."""

from __future__ import annotations

import os
import subprocess

import pexpect
import pytest
from claude_helpers import copy_tree
from installed_hermes import hermes_command

from hermes_core.cli.formatting import display_width

LEXER = "claude: Why does the lexer choke on tabs? It fails on line 3."
README = "claude: /orchestrator READMEを更新してください"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A home holding the Claude Code samples, imported by the installed command."""
    root = tmp_path_factory.mktemp("listing")
    env = {**os.environ, "HOME": str(root / "user"), "HERMES_HOME": str(root / "home")}
    env["CLAUDE_CONFIG_DIR"] = str(copy_tree(root))
    env["HERMES_PLUGINS"] = "hermes-import-claude"
    for name in ("HERMES_DEBUG", "CODEX_HOME", "COLUMNS"):
        env.pop(name, None)
    imported = subprocess.run(
        [hermes_command(), "sessions", "import", "--all"],
        env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    return env


def listed(env: dict[str, str], columns: int | None) -> list[str]:
    run_env = dict(env) if columns is None else {**env, "COLUMNS": str(columns)}
    result = subprocess.run(
        [hermes_command(), "sessions", "list"],
        env=run_env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout.splitlines()


def title_cells(lines: list[str]) -> list[str]:
    width = lines[0].index("Preview") - 1
    cells = []
    for line in lines[2:]:
        cut = 0
        while display_width(line[:cut]) < width:
            cut += 1
        cells.append(line[:cut].rstrip())
    return cells


def test_at_80_columns_the_seed_layout_tells_imported_sessions_apart(env):
    lines = listed(env, 80)
    assert lines[0] == "Title                  Preview              Last Active   ID"  # ids whole
    assert lines[1] == "─" * 80
    assert title_cells(lines) == [
        "claude: Why does the …",
        "Claude Code warm-up a…",  # agent-9c9c9c9c.jsonl: its session's log is not there
        "claude: Add a test fo…",
        "claude: /orchestrator…",
    ]
    assert all(display_width(line) <= 80 for line in lines)


def test_at_120_columns_the_title_column_grows_first(env):
    lines = listed(env, 120)
    assert lines[0].index("Preview") == 42
    assert title_cells(lines)[0] == "claude: Why does the lexer choke on tabs…"
    assert all(display_width(line) <= 120 for line in lines)


def test_at_200_columns_whole_titles_cjk_included_stay_aligned(env):
    lines = listed(env, 200)
    assert title_cells(lines) == [
        LEXER,
        "Claude Code warm-up agent 9c9c9c9c",
        "claude: Add a test for tabs",
        README,
    ]
    id_column = display_width(lines[0][: lines[0].index(" ID") + 1])
    assert {display_width(line[: line.rindex(" ") + 1]) for line in lines[2:]} == {id_column}


def test_a_pipe_without_columns_gets_the_seeds_fixed_layout(env):
    lines = listed(env, None)
    assert lines[0].index("Preview") == 23 and lines[0].index("Last Active") == 65
    assert title_cells(lines)[0] == "claude: Why does the …"
    assert lines[2][23:63] == "Why does the lexer choke on tabs? It fa…"


def test_in_a_terminal_the_listing_uses_its_width(env):
    child = pexpect.spawn(
        hermes_command(),
        ["sessions", "list"],
        env=env,
        dimensions=(24, 150),
        encoding="utf-8",
        timeout=30,
    )
    output = child.read()
    child.close()
    assert child.exitstatus == 0, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines[1] == "─" * max(display_width(line) for line in lines)
    assert title_cells(lines)[0] == LEXER  # 150 columns: room for the whole title
    assert all(display_width(line) <= 150 for line in lines)
