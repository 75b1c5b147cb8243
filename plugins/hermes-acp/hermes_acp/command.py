"""The ``hermes acp`` command: opens nothing until the editor asks, then serves it on stdio."""

from __future__ import annotations

from typing import Any

import typer

from hermes_core.cli.context import cli_context
from hermes_core.cli.errors import handle_user_errors


def register(app: Any) -> None:
    """Add ``hermes acp`` to the root app."""

    @app.command("acp", rich_help_panel="Plugins")  # type: ignore[untyped-decorator]
    @handle_user_errors
    def acp(ctx: typer.Context) -> None:
        """Run the Hermes agent for an editor (Zed…) over the Agent Client Protocol on stdio."""
        context = cli_context(ctx)
        _ = context.config  # a broken config.yaml: one line before anything starts
        from .agent import HermesAgent
        from .runtime import Runtime
        from .stdio import serve_stdio

        runtime = Runtime(context.home, context.store_url, context.host, context.config)
        serve_stdio(HermesAgent(runtime), runtime)
