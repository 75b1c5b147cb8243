"""The ``hermes mcp`` command: checks its options, opens the store, runs the chosen transport."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from hermes_core.cli.context import cli_context
from hermes_core.cli.errors import UserError, handle_user_errors

from .settings import DEFAULT_IMPORT_EVERY, ServerSettings

DEFAULT_PORT = 8765
MIN_TOKEN_LENGTH = 16
TOKEN_VARIABLE = "HERMES_MCP_TOKEN"


def register(app: Any) -> None:
    """Add ``hermes mcp`` to the root app."""

    @app.command("mcp", rich_help_panel="Plugins")  # type: ignore[untyped-decorator]
    @handle_user_errors
    def mcp(
        ctx: typer.Context,
        http: Annotated[
            bool,
            typer.Option(
                "--http",
                help="Serve streamable HTTP on 127.0.0.1 (needs a bearer token) instead of stdio.",
            ),
        ] = False,
        port: Annotated[
            int, typer.Option(help="The HTTP port (0: any free port, printed on start).")
        ] = DEFAULT_PORT,
        token: Annotated[
            str | None,
            typer.Option(
                envvar=TOKEN_VARIABLE,
                help=f"The bearer token HTTP clients must send (better: set {TOKEN_VARIABLE}).",
                show_default=False,
                show_envvar=True,
            ),
        ] = None,
        import_from: Annotated[
            str | None,
            typer.Option(
                "--import",
                metavar="NAMES",
                help="Bring new log lines of these importers (e.g. claude,codex) into the store "
                "before answering, incrementally.",
                show_default=False,
            ),
        ] = None,
        import_every: Annotated[
            float,
            typer.Option(
                metavar="SECONDS", help="With --import: look for new lines at most this often."
            ),
        ] = DEFAULT_IMPORT_EVERY,
        allow_writes: Annotated[
            bool,
            typer.Option(
                "--allow-writes", help="Offer the tools that change sessions (rename, pin)."
            ),
        ] = False,
        redact: Annotated[
            bool,
            typer.Option(
                "--redact", help="Apply the redaction rules to everything the server returns."
            ),
        ] = False,
    ) -> None:
        """Serve every stored session to MCP clients (Claude Code, Codex, Claude Desktop…)."""
        if http:
            _check_token(token)
        if not 0 <= port <= 65535:
            raise UserError(f"--port {port}: give a port from 0 to 65535")
        if not import_every >= 0:
            raise UserError(f"--import-every {import_every}: give a number of seconds, 0 or more")
        context = cli_context(ctx)
        importers = _importer_names(import_from)
        for name in importers:
            context.host.importer(name)  # a missing importer: one line naming its distribution
        settings = ServerSettings(
            allow_writes=allow_writes,
            redact=redact,
            importers=importers,
            import_every=import_every,
        )
        from .server import build_server

        server = build_server(context.store, context.host, settings)
        try:
            if http:
                from .http import serve_http

                assert token is not None
                try:
                    serve_http(server, token, port)
                except OSError as error:
                    raise UserError(str(error)) from None
            else:
                from .stdio import serve_stdio

                serve_stdio(server)
        except KeyboardInterrupt:
            pass


def _check_token(token: str | None) -> None:
    if not token:
        raise UserError(
            f"--http needs a bearer token: set {TOKEN_VARIABLE} (or --token); "
            "clients send it as 'Authorization: Bearer <token>'"
        )
    if len(token) < MIN_TOKEN_LENGTH or token != token.strip():
        raise UserError(
            f"the bearer token must be at least {MIN_TOKEN_LENGTH} characters without spaces "
            "around it (e.g. the output of: openssl rand -hex 32)"
        )


def _importer_names(value: str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    names = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    if not names:
        raise UserError("--import: name at least one importer (e.g. claude,codex)")
    return names
