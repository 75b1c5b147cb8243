"""The ``hermes`` command line, built by a factory so tests can choose the plugin set."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from . import (
    chat_command,
    chat_start,
    demo_command,
    export_commands,
    gateway_commands,
    import_commands,
    insights_command,
    lifecycle_commands,
    maintenance_commands,
    migrate_command,
    plugins_command,
    repair_command,
    search_commands,
    session_commands,
)
from .context import CliContext, cli_context, default_home
from .echo import echo
from .errors import fail, handle_user_errors

if TYPE_CHECKING:
    from collections.abc import Sequence

    from typer.models import CommandInfo

    from hermes_core.plugins import PluginHost


def _version(value: bool) -> None:
    if value:
        from hermes_core import __version__

        echo(f"hermes-sessions {__version__}")
        raise typer.Exit()


def build_app(
    host: PluginHost | None = None,
    *,
    with_plugin_commands: bool = True,
    command_path: Sequence[str] = (),
) -> typer.Typer:
    """The root app. ``host`` replaces the entry-point plugin host (tests). ``command_path``
    (the command words of the command line, ``("sessions", "list")``) keeps only the commands
    on that path (see :func:`keep_only_path`)."""
    app = typer.Typer(
        name="hermes",
        help="Hermes sessions: every conversation your agents have, in one local store. "
        "With no command, starts a chat (as 'hermes chat').",
        no_args_is_help=False,
        invoke_without_command=True,
        add_completion=True,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def root(
        ctx: typer.Context,
        home: Annotated[
            Path | None,
            typer.Option(
                "--home", help="Hermes home directory (default: $HERMES_HOME or ~/.hermes)."
            ),
        ] = None,
        version: Annotated[
            bool,
            typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
        ] = False,
        continue_: chat_command.ContinueOption = None,
        resume: chat_command.ResumeOption = None,
        in_dir: chat_command.InOption = None,
        no_restore_cwd: chat_command.NoRestoreOption = False,
    ) -> None:
        context = CliContext(home=home.expanduser() if home else default_home(), host_override=host)
        ctx.obj = context
        ctx.call_on_close(context.close)
        options = chat_start.ChatOptions(continue_, resume, in_dir, no_restore_cwd)
        if ctx.invoked_subcommand is None:
            handle_user_errors(chat_start.start_chat)(context, options)
        elif options != chat_start.ChatOptions():
            raise fail(
                f"-c/--continue, -r/--resume, --in and --no-restore-cwd go with the chat, "
                f"not with '{ctx.invoked_subcommand}'",
                2,
            )

    sessions = typer.Typer(
        help="List, show, rename, pin, delete and maintain sessions.", no_args_is_help=True
    )

    @sessions.callback()
    @handle_user_errors
    def sessions_group(ctx: typer.Context) -> None:
        cli_context(ctx).start_sessions_command()

    session_commands.register(sessions)
    maintenance_commands.register(sessions)
    repair_command.register(sessions)
    lifecycle_commands.register(sessions)
    search_commands.register(sessions)
    export_commands.register(sessions)
    import_commands.register(sessions)
    gateway_commands.register_repair(sessions)
    migrate_command.register(sessions)
    app.add_typer(sessions, name="sessions")
    insights_command.register(app)
    gateway_commands.register(app)
    plugins_command.register(app)
    demo_command.register(app)
    chat_command.register(app)
    if with_plugin_commands and host is not None:
        host.register_commands(app)
    keep_only_path(app, command_path)
    return app


COMMANDS_RUN_BY = {"browse": ("show",)}
"""Commands that run a sibling command of their group (``sessions browse`` runs ``show`` on
the session picked): kept beside them by :func:`keep_only_path`."""


def keep_only_path(app: typer.Typer, words: Sequence[str]) -> None:
    """Drop, level by level, every command and group beside the one ``words`` name.

    Start-up time is a budget: on every start typer turns each registered command into a
    click command, reading the parameters of its function, for the forty-odd commands of the
    tree; only the command that runs needs it. A word naming no command
    stops the pruning there, so a typo still gets the whole level to report and suggest
    from, and a group's ``--help`` (no word after it) lists all of its commands."""
    group = app
    for word in words:
        wanted = {word, *COMMANDS_RUN_BY.get(word, ())}
        kept_commands = [c for c in group.registered_commands if _command_name(c) in wanted]
        kept_groups = [g for g in group.registered_groups if g.name == word]
        if len(kept_commands) + len(kept_groups) != len(wanted):
            return
        group.registered_commands = kept_commands
        group.registered_groups = kept_groups
        if not kept_groups or kept_groups[0].typer_instance is None:
            return
        group = kept_groups[0].typer_instance


def _command_name(info: CommandInfo) -> str | None:
    """The name typer gives a registered command (its own, else the function's, dashed)."""
    if info.name:
        return info.name
    if info.callback is None:
        return None
    return info.callback.__name__.lower().replace("_", "-")
