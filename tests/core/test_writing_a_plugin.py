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
import tomllib
from pathlib import Path
from typing import Any

import pytest
from installed_hermes import hermes_command

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "writing-a-plugin.md"
FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'title="(?P<path>[^"]+)"')


def tutorial_files() -> dict[str, str]:
    """Relative path → content, for every code block with a ``title``."""
    files: dict[str, str] = {}
    for block in FENCE.finditer(TUTORIAL.read_text(encoding="utf-8")):
        title = TITLE.search(block["info"])
        if title:
            files[title["path"]] = block["body"]
    return files


def tutorial_commands() -> list[tuple[list[str], list[str]]]:
    """``(hermes arguments, documented output lines)`` for each ``$ hermes …`` line."""
    commands: list[tuple[list[str], list[str]]] = []
    for block in FENCE.finditer(TUTORIAL.read_text(encoding="utf-8")):
        if block["info"].strip() != "console":
            continue
        current: list[str] | None = None
        for line in block["body"].splitlines():
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
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dist_info = root / f"{re.sub(r'[-_.]+', '_', project['name'])}-{project['version']}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n",
        encoding="utf-8",
    )
    lines = [
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
        for group, points in project["entry-points"].items()
    ]
    (dist_info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return project


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
