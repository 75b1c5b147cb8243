"""docs/writing-a-plugin.md works: build its plugin from its code blocks and run its commands.

The files are the doc's fenced blocks marked ``title="<path>"``; the commands are the
``$ hermes …`` lines of its ``console`` blocks, each followed by the output the doc shows.
The plugin is "installed" as a real distribution without touching the shared environment: a
``<name>-<version>.dist-info`` folder (METADATA + entry_points.txt, both derived from the doc's
pyproject.toml) next to the package, on ``PYTHONPATH`` of a ``hermes`` subprocess.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import code_blocks, titled_files
from installed_hermes import hermes_command
from plugin_folders import register_distribution

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "writing-a-plugin.md"


def tutorial_files() -> dict[str, str]:
    """Relative path → content, for every code block with a ``title``."""
    return titled_files(TUTORIAL)


def tutorial_commands() -> list[tuple[list[str], list[str]]]:
    """``(hermes arguments, documented output lines)`` for each ``$ hermes …`` line."""
    commands: list[tuple[list[str], list[str]]] = []
    for info, body in code_blocks(TUTORIAL):
        if info.strip() != "console":
            continue
        current: list[str] | None = None
        for line in body.splitlines():
            if line.startswith("$ "):
                words = shlex.split(line[2:])
                current = None
                if words[0] == "hermes":
                    current = []
                    commands.append((words[1:], current))
            elif current is not None:
                current.append(line)
    return commands


def install_tutorial_plugin(root: Path) -> dict[str, Any]:
    """Write the tutorial's files under ``root`` and make them an installed distribution."""
    for relative, content in tutorial_files().items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return register_distribution(root)


def run_hermes(
    tmp_path: Path, plugin_root: Path, args: list[str]
) -> subprocess.CompletedProcess[str]:
    command = [hermes_command()]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        HERMES_HOME=str(tmp_path / "hermes-home"),
        PYTHONPATH=str(plugin_root),
        COLUMNS="200",
    )
    return subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def plugin(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    root = tmp_path / "hermes-irc"
    return root, install_tutorial_plugin(root)


def test_the_tutorial_holds_the_plugin_files_and_commands() -> None:
    assert set(tutorial_files()) == {"pyproject.toml", "hermes_irc/__init__.py"}
    assert [args[0] for args, _ in tutorial_commands()] == ["plugins", "hello"]


def test_hermes_plugins_lists_the_tutorial_plugin(
    tmp_path: Path, plugin: tuple[Path, dict[str, Any]]
) -> None:
    root, project = plugin
    [entry_point_name] = project["entry-points"]["hermes"]
    result = run_hermes(tmp_path, root, ["plugins", "--json"])
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    records = {record["name"]: record for record in json.loads(result.stdout)}
    record = records[entry_point_name]
    assert record["distribution"] == project["name"] == "hermes-irc"
    assert record["version"] == project["version"] == "0.1.0"
    assert record["error"] is None
    assert record["hooks"] == ["hermes_register_commands", "hermes_register_sources"]
    assert record["components"] == ["source:irc"]


def test_the_tutorial_commands_print_what_the_tutorial_shows(
    tmp_path: Path, plugin: tuple[Path, dict[str, Any]]
) -> None:
    root, _ = plugin
    for args, documented in tutorial_commands():
        result = run_hermes(tmp_path, root, args)
        assert result.returncode == 0, (args, result.stderr)
        actual = result.stdout.splitlines()
        # Other installed plugins may add lines around it: the documented output must appear
        # as one contiguous run.
        runs = [actual[i : i + len(documented)] for i in range(len(actual))]
        assert documented and documented in runs, (args, result.stdout)


def test_the_tutorial_command_is_in_the_plugins_help_panel(
    tmp_path: Path, plugin: tuple[Path, dict[str, Any]]
) -> None:
    root, _ = plugin
    result = run_hermes(tmp_path, root, ["--help"])
    assert result.returncode == 0, result.stderr
    assert "Plugins" in result.stdout
    assert re.search(r"hello\s+Say hello from the IRC plugin\.", result.stdout)
