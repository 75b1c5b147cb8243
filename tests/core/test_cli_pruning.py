"""``app.keep_only_path``: a start converts only the command it runs; every command must read
and parse exactly as in the whole tree (its ``--help``, and a typo's suggestion)."""

from __future__ import annotations

import typer.core
import typer.main
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost

runner = CliRunner()
WIDTH = {"COLUMNS": "100"}


def _paths(group: typer.core.TyperGroup, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, typer.core.TyperGroup):
            found.extend(_paths(command, (*prefix, name)))
    return found


def test_every_command_reads_the_same_in_the_pruned_app() -> None:
    host = PluginHost(load_entry_points=False)
    whole = typer.main.get_command(build_app(host))
    assert isinstance(whole, typer.core.TyperGroup)
    paths = _paths(whole)
    assert ("sessions", "list") in paths and ("sessions", "browse") in paths
    for path in paths:
        full = runner.invoke(build_app(host), [*path, "--help"], env=WIDTH)
        pruned_app = build_app(host, command_path=path[:2])
        pruned = runner.invoke(pruned_app, [*path, "--help"], env=WIDTH)
        assert full.exit_code == pruned.exit_code == 0, (path, pruned.output)
        assert pruned.output == full.output, path
    pruned_sessions = typer.main.get_command(build_app(host, command_path=["sessions", "list"]))
    assert isinstance(pruned_sessions, typer.core.TyperGroup)
    assert list(pruned_sessions.commands) == ["sessions"]


def test_a_typo_still_gets_the_whole_group_to_suggest_from() -> None:
    host = PluginHost(load_entry_points=False)
    result = runner.invoke(
        build_app(host, command_path=["sessions", "lisst"]), ["sessions", "lisst"], env=WIDTH
    )
    assert result.exit_code == 2
    assert "No such command 'lisst'" in result.output
    assert "Did you mean 'list'" in result.output
