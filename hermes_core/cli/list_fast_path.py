"""``hermes sessions list``'s direct way in: the listing without building the command tree.

Start-up time is a budget (issue 24: ``hermes sessions list`` within 1.25× a typer
hello-world). Through the typer app, the listing paid for importing every command module,
turning the commands into click commands, and typer's option coercion, which imports pydantic
and builds a pydantic adapter per option (the first one alone ≈ 11 ms) — ≈ 100 ms of the
≈ 210 ms of CPU a start took, none of which the listing needs. As :mod:`~hermes_core.cli.chat_fast_path` does for the
chat, a command line made only of the listing's options is parsed here and handed to
:func:`~hermes_core.cli.session_commands.list_command`, after what the ``sessions`` group does
first (:meth:`~hermes_core.cli.context.CliContext.start_sessions_command`), exactly as the
typer app would hand it over.

Only a command line this module fully understands takes this path. Anything else — ``--help``,
shell completion, another option, an option given twice, a value that is missing, empty, looks
like an option, or a ``--limit`` that is not a whole number of at least 1 — returns ``None``
and goes to the typer app, which parses it and reports mistakes as it always did.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .chat_fast_path import COMPLETION_VARIABLE, HOME_OPTION, split_option

LIST_WORDS = ("sessions", "list")
VALUE_OPTIONS = {"--source": "source", "--limit": "limit", "--workspace": "workspace"}
"""The listing's options that take a value, by the parameter of ``list_command`` they fill."""
FLAGS = {"--all": "all_sessions", "--json": "as_json"}


@dataclass(frozen=True, slots=True)
class ListCommandLine:
    """A ``sessions list`` command line as the typer app would have read it."""

    home: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments of ``list_command`` (only those given)."""


def parse_list_command_line(argv: list[str]) -> ListCommandLine | None:
    """The listing's options from ``argv``, or ``None`` when it is anything but a plain
    ``[--home DIR] sessions list [options]`` (the typer app then takes it)."""
    if COMPLETION_VARIABLE in os.environ:
        return None
    words = iter(argv)
    home: Path | None = None
    for word in words:
        name, value = split_option(word)
        if name != HOME_OPTION:
            break
        if value is None:
            value = next(words, None)
        if home is not None or not value or value.startswith("-"):
            return None
        home = Path(value)
    else:
        return None
    if word != LIST_WORDS[0] or next(words, None) != LIST_WORDS[1]:
        return None
    options: dict[str, Any] = {}
    for word in words:
        name, value = split_option(word)
        if name in FLAGS and value is None:
            if FLAGS[name] in options:
                return None
            options[FLAGS[name]] = True
            continue
        target = VALUE_OPTIONS.get(name)
        if target is None or target in options:
            return None
        if value is None:
            value = next(words, None)
        if not value or value.startswith("-"):
            return None
        if target == "limit":
            if not (value.isascii() and value.isdigit()) or int(value) < 1:
                return None
            options[target] = int(value)
        else:
            options[target] = value
    return ListCommandLine(home, options)


def run_list_command_line(command_line: ListCommandLine) -> None:
    """List as the typer app would: the same context, the same one-line errors and exit codes
    (``typer.Exit`` → its code, Ctrl-C → 130, a closed pipe → 1 without a traceback)."""
    from .context import CliContext, default_home
    from .errors import handle_user_errors
    from .session_commands import list_command

    home = command_line.home.expanduser() if command_line.home else default_home()
    context = CliContext(home=home)
    try:
        handle_user_errors(context.start_sessions_command)()
        handle_user_errors(list_command)(context, **command_line.options)
    except RuntimeError as error:
        import typer  # already loaded: the command modules use it

        if isinstance(error, typer.Exit):
            raise SystemExit(error.exit_code) from None
        raise
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except BrokenPipeError:
        # The reader went away (``| head``): as click does, no traceback when Python flushes
        # the rest at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None
    finally:
        context.close()
