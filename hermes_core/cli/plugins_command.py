"""``hermes plugins``: what is installed, what it provides, what failed to load."""

from __future__ import annotations

from typing import Annotated

import typer

from .context import cli_context
from .echo import echo, echo_json
from .errors import handle_user_errors


def register(app: typer.Typer) -> None:
    @app.command("plugins")
    @handle_user_errors
    def plugins(
        ctx: typer.Context,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        include_builtin: Annotated[
            bool, typer.Option("--all", help="Also show the core's built-in plugins.")
        ] = False,
    ) -> None:
        """List installed plugins: name, distribution, version, hooks, components."""
        context = cli_context(ctx)
        records = context.host.describe(include_builtin=include_builtin)
        if as_json:
            echo_json([r.as_json() for r in records], ensure_ascii=True)
            return
        if not records:
            echo("No plugins installed. (--all shows the built-in ones.)")
            return
        for record in records:
            status = f"FAILED: {record.error}" if record.error else "ok"
            echo(f"{record.name}  ({record.distribution} {record.version or '?'})  {status}")
            if record.hooks:
                echo(f"    hooks: {', '.join(record.hooks)}")
            if record.components:
                echo(f"    components: {', '.join(sorted(record.components))}")
