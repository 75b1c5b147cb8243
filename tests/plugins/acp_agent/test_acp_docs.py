"""docs/acp.md stays true: its Zed configuration parses and starts the real command, and the
README points at it."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from doc_blocks import code_blocks

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "acp.md"


def test_the_zed_configuration_parses_and_starts_hermes_acp() -> None:
    blocks = dict(code_blocks(GUIDE))
    server = json.loads(blocks["json"])["agent_servers"]["Hermes"]
    assert server["command"] == "hermes" and server["args"] == ["acp"]
    app = typer.main.get_command(build_app(PluginHost()))
    assert "acp" in app.commands  # type: ignore[attr-defined]


def test_the_readme_links_the_guide() -> None:
    readme = GUIDE.parents[1] / "README.md"
    assert "(docs/acp.md)" in readme.read_text(encoding="utf-8")
