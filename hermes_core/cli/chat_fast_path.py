"""The chat's direct way in: ``hermes``, ``hermes -c [NAME]``, ``hermes -r REF``, ``hermes chat …``
start the chat without building the whole command tree.

Start-up time is a budget (issue 11: ``hermes -c`` within 1.25× a typer hello-world). Building
the typer app imports every command module (sessions, export, import, gateway…), and typer's
option coercion imports pydantic; the chat needs none of it. So a command line made only of the
chat's options is parsed here and handed to :func:`~hermes_core.cli.chat_start.start_chat`
exactly as the typer app would hand it over.

Only a command line this module fully understands takes this path. Anything else — ``--help``,
``--version``, shell completion, another command, an option it does not know, an option given
twice, a value that looks like an option or is missing — returns ``None`` and goes to the typer
app, which parses it and reports mistakes as it always did.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

CHAT_COMMAND = "chat"
HOME_OPTION = "--home"
CHAT_VALUE_OPTIONS = {
    "-c": "continue_",
    "--continue": "continue_",
    "-r": "resume",
    "--resume": "resume",
    "--in": "in_dir",
}
"""The chat's options that take a value, by the field of ``ChatOptions`` they fill."""
CHAT_FLAGS = {"--no-restore-cwd": "no_restore_cwd"}
EMPTY_VALUE_ALLOWED = {"continue_"}
"""``--continue=`` (a bare ``-c``, see ``normalise_argv``) is the only legitimate empty value."""
COMPLETION_VARIABLE = "_HERMES_COMPLETE"
CONTINUE_FLAGS = ("-c", "--continue")


def normalise_argv(argv: list[str]) -> list[str]:
    """A bare ``-c`` / ``--continue`` (last, or followed by another option) becomes
    ``--continue=`` so the option's value is optional on the command line."""
    fixed: list[str] = []
    for index, word in enumerate(argv):
        if word == "--":
            fixed.extend(argv[index:])
            break
        following = argv[index + 1] if index + 1 < len(argv) else None
        if word in CONTINUE_FLAGS and (following is None or following.startswith("-")):
            fixed.append("--continue=")
        else:
            fixed.append(word)
    return fixed


@dataclass(frozen=True, slots=True)
class ChatCommandLine:
    """A chat command line as the typer app would have read it."""

    home: Path | None = None
    values: dict[str, str] = field(default_factory=dict)
    flags: frozenset[str] = frozenset()


def split_option(word: str) -> tuple[str, str | None]:
    """``--name=value`` → (``--name``, ``value``); anything else → (word, None)."""
    if word.startswith("--") and "=" in word:
        name, _, value = word.partition("=")
        return name, value
    return word, None


def parse_chat_command_line(argv: list[str]) -> ChatCommandLine | None:
    """The chat's options from ``argv`` (already through ``normalise_argv``), or ``None`` when
    the command line is anything but a plain chat start (the typer app then takes it)."""
    if COMPLETION_VARIABLE in os.environ:
        return None
    home: Path | None = None
    values: dict[str, str] = {}
    flags: set[str] = set()
    in_chat_command = False
    words = iter(argv)
    for word in words:
        if word == CHAT_COMMAND and not in_chat_command and not values and not flags:
            in_chat_command = True  # the root's chat options and ``chat`` do not mix
            continue
        name, value = split_option(word)
        if name in CHAT_FLAGS and value is None:
            if CHAT_FLAGS[name] in flags:
                return None
            flags.add(CHAT_FLAGS[name])
            continue
        target = CHAT_VALUE_OPTIONS.get(name)
        is_home = name == HOME_OPTION and not in_chat_command
        if target is None and not is_home:
            return None
        if value is None:
            value = next(words, None)
            if value is None or value.startswith("-"):
                return None
        if is_home:
            if home is not None or not value:
                return None
            home = Path(value)
            continue
        assert target is not None
        if target in values or (not value and target not in EMPTY_VALUE_ALLOWED):
            return None
        values[target] = value
    return ChatCommandLine(home, values, frozenset(flags))


def run_chat_command_line(command_line: ChatCommandLine) -> None:
    """Start the chat as the typer app would: the same context, the same one-line errors and
    exit codes (``typer.Exit`` → its code, Ctrl-C → 130, end of input → ``Aborted!``)."""
    from .chat_start import ChatOptions, start_chat
    from .context import CliContext, default_home
    from .errors import handle_user_errors

    values = command_line.values
    in_dir = values.get("in_dir")
    options = ChatOptions(
        continue_=values.get("continue_"),
        resume=values.get("resume"),
        in_dir=Path(in_dir) if in_dir is not None else None,
        no_restore_cwd="no_restore_cwd" in command_line.flags,
    )
    home = command_line.home.expanduser() if command_line.home else default_home()
    context = CliContext(home=home)
    try:
        handle_user_errors(start_chat)(context, options)
    except RuntimeError as error:
        import typer  # already loaded when it is typer's Exit: only typer raises that

        if isinstance(error, typer.Exit):
            raise SystemExit(error.exit_code) from None
        raise
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except EOFError:
        print("\nAborted!", file=sys.stderr)
        raise SystemExit(1) from None
    finally:
        context.close()
