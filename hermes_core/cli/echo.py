"""Every line the command line prints goes through here: :func:`echo` for people, :func:`echo_json`
for programs.

What people read holds stored and foreign text (titles, messages, file names, errors quoting
them), so :func:`echo` shows it through :func:`~hermes_core.terminal_text.terminal_safe`: an
escape sequence in a title prints as ``^[]0;…`` instead of acting on the terminal.
:func:`echo_json` keeps every string exactly: JSON escapes C0 controls itself, and here DEL, C1
controls and bidirectional overrides are written as ``\\u009b``-style escapes too (the same
string to any JSON reader), so the output is harmless on a terminal as well.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from hermes_core.terminal_text import SHOWN_AS, terminal_safe

_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in SHOWN_AS if code >= 0x7F}
"""What ``json.dumps(ensure_ascii=False)`` leaves raw and a terminal would act on (C0 controls
are escaped by JSON itself); these characters occur only inside JSON strings."""


def echo(message: str = "", *, err: bool = False, nl: bool = True, redraw: bool = False) -> None:
    """Print ``message`` for people (``typer.echo``), its control characters made visible.
    ``redraw`` starts it with a carriage return, over the line before (a progress line)."""
    typer.echo(("\r" if redraw else "") + terminal_safe(message), err=err, nl=nl)


def confirm(question: str) -> bool:
    """Ask a yes/no ``question`` (default no) with its control characters made visible."""
    return typer.confirm(terminal_safe(question), default=False)


def json_text(payload: Any, *, ensure_ascii: bool = False) -> str:
    """``payload`` as indented JSON with nothing in it a terminal would act on."""
    return json.dumps(payload, ensure_ascii=ensure_ascii, indent=2).translate(_JSON_ESCAPES)


def echo_json(payload: Any, *, ensure_ascii: bool = False) -> None:
    """Print ``payload`` as JSON (see :func:`json_text`) on standard output."""
    typer.echo(json_text(payload, ensure_ascii=ensure_ascii))
