"""Entry point of the ``hermes`` console script."""

from __future__ import annotations

import os
import sys

CORE_COMMANDS = {"sessions", "insights", "plugins", "demo"}
"""Commands of the core itself: they load plugins only if they need them."""


def _command_of(argv: list[str]) -> str | None:
    """The first positional word, skipping the root options and their values."""
    words = iter(argv)
    for word in words:
        if word == "--home":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def main() -> None:
    """Run the command line. Plugin commands load only when a plugin command may be meant."""
    from .app import build_app

    host = None
    argv = sys.argv[1:]
    if _command_of(argv) not in CORE_COMMANDS and "--version" not in argv:
        # Plugin-provided commands (and the full help listing) need the plugins loaded.
        from hermes_core.plugins import PluginError, PluginHost

        try:
            host = PluginHost()
        except PluginError as error:
            print(f"hermes: {error}", file=sys.stderr)
            raise SystemExit(1) from None
    app = build_app(host)
    from hermes_hookspecs import UserFacingError

    try:
        app(prog_name="hermes")
    except UserFacingError as error:
        # A plugin command's failure the person can act on: one line, like the core's own.
        if os.environ.get("HERMES_DEBUG"):
            raise
        print(f"hermes: {error}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        if os.environ.get("HERMES_DEBUG"):
            raise
        print("hermes: interrupted", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
