"""The built-in plugin that adds ``hermes batch FILE`` (prompts from a file, one ``batch``
session each; see :mod:`hermes_core.batch`). Nothing heavy is imported here."""

from __future__ import annotations

from typing import Any

from hermes_hookspecs import hookimpl


@hookimpl
def hermes_register_commands(app: Any) -> None:
    """Add ``hermes batch``."""
    from hermes_core.batch.command import register

    register(app)
