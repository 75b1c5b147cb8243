"""How the command line turns expected failures into one line on stderr.

User mistakes (unknown id, bad duration, bad title, unreadable file…) exit 1 with one line;
``HERMES_DEBUG=1`` re-raises them so the traceback shows.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from hermes_core.terminal_text import terminal_safe

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
    """Print ``message`` as one stderr line and return the Exit to raise. Its control
    characters are shown as ``^[``… (an error may quote a title, an id or a file name)."""
    import typer  # not at module level: the chat starts without typer (start-up budget)

    typer.echo(f"hermes: {terminal_safe(message)}", err=True)
    return typer.Exit(code)


def handle_user_errors(function: Callable[P, R]) -> Callable[P, R]:
    """Wrap a command so expected errors become one line and exit code 1."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except _expected_errors() as error:
            if os.environ.get("HERMES_DEBUG"):
                raise
            raise report_store_failure(error) from None

    return wrapper


def report_store_failure(error: BaseException) -> typer.Exit:
    """Print what went wrong and return the Exit to raise. Only a damaged store gets the hint
    to repair it: a full disk, a read-only file, a store made by a newer Hermes or another
    program's database are not damage, and repair would not help."""
    import typer

    from hermes_core.store.errors import StoreDamaged, StoreUnavailable

    if isinstance(error, StoreDamaged):
        typer.echo(f"{STORE_UNAVAILABLE}: {terminal_safe(str(error))}", err=True)
        typer.echo(f"  {REPAIR_HINT}", err=True)
        return typer.Exit(1)
    if type(error) is StoreUnavailable:
        typer.echo(f"{STORE_UNAVAILABLE}: {terminal_safe(str(error))}", err=True)
        return typer.Exit(1)
    return fail(str(error))


REPAIR_HINT = "'hermes sessions repair' salvages what is still readable."
