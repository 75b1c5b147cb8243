"""Entry point of the ``hermes`` console script."""

from __future__ import annotations

import os
import sys

from hermes_core.terminal_text import terminal_safe

CORE_COMMANDS = {"sessions", "insights", "plugins", "demo", "chat"}
"""Commands of the core itself: they load plugins only if they need them (the chat, when its
first message needs the model provider)."""

VALUED_ROOT_OPTIONS = {"--home", "-r", "--resume", "--in", "-c", "--continue"}
"""Root options followed by a value (a bare ``-c`` was made ``--continue=`` before)."""


def _command_of(argv: list[str]) -> str | None:
    """The first positional word, skipping the root options and their values."""
    words = iter(argv)
    for word in words:
        if word in VALUED_ROOT_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _command_path(argv: list[str]) -> list[str]:
    """The command words: the first positional word and the one right after it, when that
    is not an option (``sessions list``); none for shell completion, which needs them all."""
    if "_HERMES_COMPLETE" in os.environ:
        return []
    command = _command_of(argv)
    if command is None:
        return []
    following = argv[argv.index(command) + 1 : argv.index(command) + 2]
    if following and not following[0].startswith("-"):
        return [command, following[0]]
    return [command]


def _needs_plugins(argv: list[str]) -> bool:
    """Whether plugin commands must be registered before parsing: not for the core's own
    commands, nor for the chat (bare ``hermes``) — except to list them in ``--help``."""
    if "--version" in argv:
        return False
    command = _command_of(argv)
    if command is None:
        # shell completion runs with no arguments and must offer the plugin commands too
        return "--help" in argv or "_HERMES_COMPLETE" in os.environ
    return command not in CORE_COMMANDS


def main() -> None:
    """Run the command line. A plain chat start and a plain ``sessions list`` skip the command
    tree; plugin commands load only when a plugin command may be meant."""
    from .chat_fast_path import normalise_argv, parse_chat_command_line, run_chat_command_line

    host = None
    argv = normalise_argv(sys.argv[1:])
    sys.argv[1:] = argv
    chat_command_line = parse_chat_command_line(argv)
    if chat_command_line is not None:
        run_chat_command_line(chat_command_line)
        return
    from .list_fast_path import parse_list_command_line, run_list_command_line

    list_command_line = parse_list_command_line(argv)
    if list_command_line is not None:
        run_list_command_line(list_command_line)
        return
    from .app import build_app

    if _needs_plugins(argv):
        # Plugin-provided commands (and the full help listing) need the plugins loaded.
        from hermes_core.plugins import PluginError, PluginHost

        try:
            host = PluginHost()
        except PluginError as error:
            print(f"hermes: {terminal_safe(str(error))}", file=sys.stderr)
            raise SystemExit(1) from None
    app = build_app(host, command_path=_command_path(argv))
    from hermes_hookspecs import UserFacingError

    try:
        app(prog_name="hermes")
    except UserFacingError as error:
        # A plugin command's failure the person can act on: one line, like the core's own.
        if os.environ.get("HERMES_DEBUG"):
            raise
        print(f"hermes: {terminal_safe(str(error))}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        if os.environ.get("HERMES_DEBUG"):
            raise
        print("hermes: interrupted", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
