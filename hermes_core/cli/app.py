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
    from hermes_core.plugins import PluginHost


def _version(value: bool) -> None:
    if value:
        from hermes_core import __version__

        echo(f"hermes-sessions {__version__}")
        raise typer.Exit()


def build_app(host: PluginHost | None = None, *, with_plugin_commands: bool = True) -> typer.Typer:
    """The root app. ``host`` replaces the entry-point plugin host (tests)."""
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
        # A broken config.yaml is reported before any session command runs.
        context = cli_context(ctx)
        _ = context.config
        from hermes_core.lifecycle.startup import arm_auto_clean

        arm_auto_clean(context)

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
    return app
