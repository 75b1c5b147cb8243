"""The entry point: adds ``hermes acp`` to the command line (nothing heavy is imported here)."""

from __future__ import annotations

from typing import Any

from hermes_hookspecs import hookimpl


@hookimpl
def hermes_register_commands(app: Any) -> None:
    """Add ``hermes acp``."""
    from .command import register

    register(app)
