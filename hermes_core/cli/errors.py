"""How the command line turns expected failures into one line on stderr.

User mistakes (unknown id, bad duration, bad title, unreadable file…) exit 1 with one line;
``HERMES_DEBUG=1`` re-raises them so the traceback shows.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

if TYPE_CHECKING:
    import typer

P = ParamSpec("P")
R = TypeVar("R")

STORE_UNAVAILABLE = "⚠ Session store unavailable"


class UserError(Exception):
    """A mistake in what the user asked for; its message is the whole explanation."""


def _expected_errors() -> tuple[type[BaseException], ...]:
    from hermes_hookspecs import UserFacingError

    from hermes_core.config import ConfigError
    from hermes_core.plugins import MissingComponent, PluginError
    from hermes_core.redaction.engine import InvalidRedactionRule
    from hermes_core.selection.timespec import FilterError
    from hermes_core.store.errors import StoreError

    return (
        UserError,
        StoreError,
        FilterError,
        ConfigError,
        MissingComponent,
        PluginError,
        InvalidRedactionRule,
        UserFacingError,
    )


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``message`` as one stderr line and return the Exit to raise."""
    import typer  # not at module level: the chat starts without typer (start-up budget)

    typer.echo(f"hermes: {message}", err=True)
    return typer.Exit(code)


def handle_user_errors(function: Callable[P, R]) -> Callable[P, R]:
    """Wrap a command so expected errors become one line and exit code 1."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from hermes_core.store.errors import NotASessionStore, StoreUnavailable

        try:
            return function(*args, **kwargs)
        except _expected_errors() as error:
            if os.environ.get("HERMES_DEBUG"):
                raise
            if isinstance(error, NotASessionStore):
                raise fail(str(error)) from None  # repairing another program's file: never
            if isinstance(error, StoreUnavailable):
                import typer

                typer.echo(f"{STORE_UNAVAILABLE}: {error}", err=True)
                typer.echo("  'hermes sessions repair' checks and repairs it.", err=True)
                raise typer.Exit(1) from None
            raise fail(str(error)) from None

    return wrapper
