"""docs/web.md stays true: every option it lists is one ``hermes serve`` has (and the other way
round), and the README links to it."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "web.md"


def test_every_option_is_documented_and_every_documented_option_exists() -> None:
    app = build_app(PluginHost())
    command = typer.main.get_command(app).commands["serve"]  # type: ignore[attr-defined]
    options = {flag for p in command.params for flag in p.opts if flag.startswith("--")}
    text = GUIDE.read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `(--[a-z-]+)", text, flags=re.MULTILINE))
    assert table == options - {"--help"}
    readme = GUIDE.parents[1] / "README.md"
    assert "(docs/web.md)" in readme.read_text(encoding="utf-8")
