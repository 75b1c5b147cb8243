"""docs/mcp.md stays true: its client configurations parse and name the real command, and
every option it documents is one ``hermes mcp`` has (and the other way round)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import typer
from doc_blocks import code_blocks

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "mcp.md"


def mcp_options() -> set[str]:
    app = build_app(PluginHost())
    command = typer.main.get_command(app).commands["mcp"]  # type: ignore[attr-defined]
    return {flag for p in command.params for flag in p.opts if flag.startswith("--")} - {"--help"}


def test_the_client_configurations_parse_and_start_hermes_mcp() -> None:
    blocks = dict(code_blocks(GUIDE))
    codex = tomllib.loads(blocks["toml"])["mcp_servers"]["hermes"]
    assert codex["command"] == "hermes" and codex["args"][0] == "mcp"
    desktop = json.loads(blocks["json"])["mcpServers"]["hermes"]
    assert desktop["command"].endswith("/hermes") and desktop["args"] == ["mcp"]
    assert set(codex["args"][1:]) - {"claude,codex"} <= mcp_options()


def test_every_option_is_documented_and_every_documented_option_exists() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    table = {m for m in re.findall(r"^\| `(--[a-z-]+)", text, flags=re.MULTILINE)}
    assert table == mcp_options()
    readme = GUIDE.parents[1] / "README.md"
    assert "(docs/mcp.md)" in readme.read_text(encoding="utf-8")
