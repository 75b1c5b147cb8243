"""docs/cli.md documents every command of ``build_app()`` (as sqlite-utils does).

Each command has a ``### hermes <path>`` section naming its options; every command has help
text; the documented JSON shape of ``sessions list --json`` is the one the code produces.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from hermes_hookspecs import Session

from hermes_core.cli.app import build_app
from hermes_core.cli.listing import list_as_json
from hermes_core.plugins import PluginHost

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
# Options every command has, documented once under "Global options".
GENERIC_OPTIONS = {"--help"}


def command_tree() -> dict[str, Any]:
    """``"hermes sessions list"`` → the click command, for the root and every sub-command."""
    found: dict[str, Any] = {}

    def walk(command: Any, path: str) -> None:
        found[path] = command
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, f"{path} {name}")

    # Only the core's own commands (its built-in plugins' too: ``hermes batch``), whatever
    # else is installed.
    walk(typer.main.get_command(build_app(PluginHost(load_entry_points=False))), "hermes")
    return found


def doc_sections() -> dict[str, str]:
    """``### hermes …`` heading → the text of that section."""
    sections: dict[str, str] = {}
    current: str | None = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if re.match(r"^#{1,3} ", line):  # a #### sub-heading stays in its command's section
            match = re.match(r"^### (hermes(?: [\w-]+)*)\s*$", line)
            current = match[1] if match else None
            if current is not None:
                sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return sections


def leaf_commands() -> list[str]:
    return sorted(path for path, c in command_tree().items() if not getattr(c, "commands", None))


def test_the_core_commands_are_found() -> None:
    expected = {
        "hermes plugins",
        "hermes demo",
        *(
            f"hermes sessions {name}"
            for name in (
                "list",
                "show",
                "rename",
                "delete",
                "pin",
                "unpin",
                "pinned",
                "stats",
                "optimize",
                "repair",
            )
        ),
    }
    assert expected <= set(leaf_commands())


@pytest.mark.parametrize("path", sorted(command_tree()))
def test_every_command_has_help_text(path: str) -> None:
    command = command_tree()[path]
    assert command.help and command.help.strip(), f"{path} has no help text"
    for parameter in command.params:
        if parameter.param_type_name == "option":
            assert getattr(parameter, "help", None), f"{path} {parameter.opts} has no help"


@pytest.mark.parametrize("path", [*leaf_commands(), "hermes"])
def test_every_command_is_documented_with_its_options(path: str) -> None:
    sections = doc_sections()
    assert path in sections, f"'{path}' has no '### {path}' section in {DOCS.name}"
    section = sections[path]
    assert f"`{path}" in section, f"the usage line of '{path}' is missing"
    for parameter in command_tree()[path].params:
        if parameter.param_type_name != "option":
            continue
        for option in [*parameter.opts, *parameter.secondary_opts]:
            if option not in GENERIC_OPTIONS:
                assert f"`{option}" in section, f"{path}: option {option} is not documented"


def test_every_documented_command_exists() -> None:
    stale = sorted(set(doc_sections()) - set(command_tree()))
    assert not stale, f"{DOCS.name} documents commands that do not exist: {stale}"


def test_the_environment_variables_are_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for variable in ("HERMES_HOME", "HERMES_PLUGINS", "HERMES_STRICT_PLUGINS", "HERMES_DEBUG"):
        assert f"- `{variable}`" in text, variable


def documented_list_json() -> list[dict[str, Any]]:
    section = doc_sections()["hermes sessions list"]
    block = re.search(r"```json\n(.*?)```", section, flags=re.DOTALL)
    assert block, "the JSON example of 'sessions list --json' is missing"
    parsed: list[dict[str, Any]] = json.loads(block[1])
    return parsed


def test_the_documented_list_json_shape_is_the_real_one() -> None:
    session = Session(id="20250301_142233_a1b2c3", source="cli", started_at=1_740_835_353.0)
    [real] = list_as_json([session], {session.id: "hello"})
    [documented] = documented_list_json()
    assert list(documented) == list(real)  # same keys, same order
    for key, value in real.items():
        if value is not None:
            assert type(documented[key]) is type(value), key
    table = doc_sections()["hermes sessions list"]
    for key in real:
        assert f"| `{key}` |" in table, f"key {key} missing from the JSON table"
