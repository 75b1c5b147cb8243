"""The ``hermes serve`` command: checks its options, opens the store, serves until Ctrl-C."""

from __future__ import annotations

import contextlib
import secrets
from typing import Annotated, Any

import typer

from hermes_core.cli.context import cli_context
from hermes_core.cli.echo import echo
from hermes_core.cli.errors import UserError, handle_user_errors
from hermes_core.loopback import LOOPBACK

from .settings import DEFAULT_PORT, ServeSettings


def register(app: Any) -> None:
    """Add ``hermes serve`` to the root app."""

    @app.command("serve", rich_help_panel="Plugins")  # type: ignore[untyped-decorator]
    @handle_user_errors
    def serve(
        ctx: typer.Context,
        port: Annotated[
            int, typer.Option(help="The port on 127.0.0.1 (0: any free port).")
        ] = DEFAULT_PORT,
        allow_writes: Annotated[
            bool,
            typer.Option("--allow-writes", help="Let the pages rename, pin and archive sessions."),
        ] = False,
        redact: Annotated[
            bool,
            typer.Option("--redact", help="Apply the redaction rules to every page."),
        ] = False,
    ) -> None:
        """Browse, search and read every session in your browser, live (127.0.0.1 only).

        The first line printed is the address to open, with a random token; the browser
        keeps it as a cookie. Read-only unless --allow-writes."""
        if not 0 <= port <= 65535:
            raise UserError(f"--port {port}: give a port from 0 to 65535")
        context = cli_context(ctx)
        from hermes_core.insights import PriceTable

        from .app import build_app
        from .archive import WebArchive
        from .serving import listen, run

        prices = PriceTable.from_config(context.config["insights.prices"])
        archive = WebArchive(context.store, context.host, prices=prices, redact=redact)
        try:
            listener = listen(port)
        except OSError as error:
            raise UserError(str(error)) from None
        settings = ServeSettings(
            port=listener.getsockname()[1],
            token=secrets.token_urlsafe(24),
            csrf=secrets.token_urlsafe(24),
            allow_writes=allow_writes,
            redact=redact,
        )

        def ready() -> None:
            echo(f"http://{LOOPBACK}:{settings.port}/?token={settings.token}")
            mode = "read and write" if allow_writes else "read-only"
            extra = ", redacted" if redact else ""
            echo(f"hermes serve: open the address above ({mode}{extra}); Ctrl-C stops.")

        with contextlib.suppress(KeyboardInterrupt):
            run(build_app(archive, settings), listener, ready)
