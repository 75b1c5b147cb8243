"""``hermes gateway run|status`` and ``hermes sessions repair-routing`` (SPEC G1–G6)."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from .context import cli_context
from .echo import echo
from .errors import fail, handle_user_errors


def register(app: typer.Typer) -> None:
    """Add the ``gateway`` command group to the root app."""
    gateway = typer.Typer(
        help="Run the messaging gateway: one continuous session per chat.", no_args_is_help=True
    )

    @gateway.command("run")
    @handle_user_errors
    def run(ctx: typer.Context) -> None:
        """Serve the platforms enabled under gateway.platforms in config.yaml, in the
        foreground, until Ctrl-C or SIGTERM (turns in flight are finished first)."""
        import asyncio

        from hermes_core.gateway.service import configure_logging, serve
        from hermes_core.lifecycle.startup import arm_auto_clean

        context = cli_context(ctx)
        config = context.config
        arm_auto_clean(context)
        # Opening the store runs the automatic clean-up when switched on (L3); a store that
        # cannot be written is refused now, not at the first message.
        context.store.require_writable()
        store_url = context.store_url
        context.close()
        configure_logging()
        asyncio.run(serve(context.home, config, context.host, store_url=store_url))

    @gateway.command("status")
    @handle_user_errors
    def status(ctx: typer.Context) -> None:
        """Whether the gateway runs, how each platform fared, and the chats it routes.
        Exits 1 when it is not running."""
        from hermes_core.gateway.mirror import mirror_path
        from hermes_core.gateway.service import read_status

        context = cli_context(ctx)
        found = read_status(context.home)
        running = found is not None and found.alive
        if found is None:
            echo("Gateway: not running")
        elif not found.alive:
            echo(
                f"Gateway: not running (process {found.pid} ended without stopping cleanly; "
                "its chats resume where they were on the next start)"
            )
        else:
            since = time.strftime("%Y-%m-%d %H:%M", time.localtime(found.started_at))
            echo(f"Gateway: running (pid {found.pid}, since {since})")
            for platform in found.platforms:
                if platform.get("running"):
                    where = f" at {platform['address']}" if platform.get("address") else ""
                    echo(f"  {platform['name']}: running{where}")
                else:
                    echo(f"  {platform['name']}: not running — {platform.get('problem')}")
        routes = context.store.routing.routes()
        counts: dict[str, int] = {}
        for route in routes:
            counts[route.platform] = counts.get(route.platform, 0) + 1
        split = ", ".join(f"{name}: {count}" for name, count in sorted(counts.items()))
        echo(f"Routed chats: {len(routes)}" + (f" ({split})" if split else ""))
        mirror = (
            f"on ({mirror_path(context.home)})"
            if context.config["gateway.write_sessions_json"]
            else "off"
        )
        echo(f"sessions.json mirror: {mirror}")
        if not running:
            raise typer.Exit(1)

    app.add_typer(gateway, name="gateway")


def register_repair(sessions: typer.Typer) -> None:
    """Add ``repair-routing`` to the ``sessions`` group."""

    @sessions.command("repair-routing")
    @handle_user_errors
    def repair_routing(
        ctx: typer.Context,
        apply: Annotated[
            bool, typer.Option("--apply", help="Carry out the adoptions (stop the gateway first).")
        ] = False,
        max_gap_seconds: Annotated[
            float,
            typer.Option(
                "--max-gap-seconds",
                min=0,
                help="How long before an orphan started its predecessor may have gone quiet.",
            ),
        ] = 900.0,
    ) -> None:
        """Re-attach gateway sessions that lost their routing identity to the chat they
        continue, on unambiguous evidence only (report-only unless --apply)."""
        from hermes_core.gateway.repair import apply_repairs, plan_repairs
        from hermes_core.gateway.service import read_status
        from hermes_core.store import SessionStore
        from hermes_core.store.backends import redacted

        context = cli_context(ctx)
        store = context.store
        table = store.routing
        plan = plan_repairs(table, max_gap_seconds=max_gap_seconds)
        if not plan:
            echo("No orphaned gateway sessions: every session with messages is routed.")
            return
        for adoption in plan:
            echo(adoption.describe())
        repairable = [a for a in plan if a.repairable]
        echo(
            f"{len(plan)} orphan(s): {len(repairable)} repairable, "
            f"{len(plan) - len(repairable)} left alone."
        )
        if not apply:
            if repairable:
                echo(
                    "Nothing was changed. Stop the gateway, then run with --apply to adopt them "
                    + (
                        "(a backup of state.db is made first)."
                        if isinstance(store, SessionStore)
                        else "(no file backup is made on this store: take one with pg_dump first)."
                    )
                )
            return
        if not repairable:
            return
        running = read_status(context.home)
        if running is not None and running.alive:
            raise fail(
                f"the gateway is running (pid {running.pid}): stop it first — a running "
                "gateway keeps the old routing in memory and would write over the repair"
            )
        echo("Make sure the gateway is stopped: a running one would write over the repair.")
        if isinstance(store, SessionStore):
            backup = store.backup()
            echo(f"Backup written to {backup}")
        else:
            echo(
                f"No file backup on {redacted(context.store_url)}: this store is a database server "
                "(use pg_dump beforehand to keep a copy); applying the repairs in one "
                "transaction each."
            )
        done = apply_repairs(table, plan)
        for adoption in done:
            donor = adoption.donor.session_id if adoption.donor else "?"
            echo(
                f"  ✓ {adoption.orphan.session_id} adopted; {donor} retired (superseded_by_repair)"
            )
