"""``hermes sessions stats|optimize|repair`` (SPEC C5, C6, R5)."""

from __future__ import annotations

from typing import Annotated

import typer

from .context import cli_context
from .errors import fail, handle_user_errors
from .formatting import human_size


def register(sessions: typer.Typer) -> None:
    """Add the store maintenance commands to the ``sessions`` group."""

    @sessions.command("stats")
    @handle_user_errors
    def stats(ctx: typer.Context) -> None:
        """Counts per origin and the size of the store."""
        found = cli_context(ctx).store.stats()
        typer.echo(f"Total sessions: {found.total_sessions}")
        typer.echo(f"Total messages: {found.total_messages}")
        for source, count in found.sessions_by_source:
            typer.echo(f"  {source}: {count} sessions")
        typer.echo(f"Database size: {human_size(found.database_bytes)}")
        typer.echo(
            f"Active: {found.active_sessions}   Pinned: {found.pinned_sessions}   "
            f"Archived: {found.archived_sessions}"
        )

    @sessions.command("optimize")
    @handle_user_errors
    def optimize(ctx: typer.Context) -> None:
        """Merge full-text index segments and VACUUM; no session data is touched."""
        from hermes_core.store.maintenance import optimize as optimize_store

        store = cli_context(ctx).store
        before, after = optimize_store(store.connection, store.path)
        change = before - after
        verdict = (
            f"reclaimed {human_size(change)}" if change >= 0 else f"grew by {human_size(-change)}"
        )
        typer.echo(f"Database size: {human_size(before)} → {human_size(after)} ({verdict})")

    @sessions.command("repair")
    @handle_user_errors
    def repair(
        ctx: typer.Context,
        check_only: Annotated[
            bool, typer.Option("--check-only", help="Only report problems.")
        ] = False,
    ) -> None:
        """Check the store; back it up, then rebuild what is out of step."""
        from hermes_core.store import STATE_DB_NAME
        from hermes_core.store.maintenance import repair as repair_store

        path = cli_context(ctx).home / STATE_DB_NAME
        if not path.exists():
            raise fail(f"no session store at {path}")
        report = repair_store(path, check_only=check_only)
        if not report.problems:
            typer.echo(f"{path}: no problems found.")
            return
        typer.echo(f"{path}: {len(report.problems)} problem(s):")
        for problem in report.problems:
            typer.echo(f"  - {problem}")
        if check_only:
            raise typer.Exit(1)
        if report.backup:
            typer.echo(f"Backup written to {report.backup}")
        for action in report.actions:
            typer.echo(f"  ✓ {action}")
        if not report.healthy_after:
            raise fail(f"the store is still damaged; your backup is {report.backup}")
        typer.echo("The store is healthy now.")
