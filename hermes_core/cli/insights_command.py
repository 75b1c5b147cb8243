"""``hermes insights``: token use, cost, tools and activity over the F1 filters (SPEC C5)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from hermes_core.selection.options import bulk_filter_options

from .context import cli_context
from .echo import echo, echo_json
from .errors import UserError, handle_user_errors

_HELP = (
    "Token use, cost, tool failures and activity, over every session or the filters.\n\n"
    "Cost is the stored actual cost, else the stored estimate, else an estimate from "
    "insights.prices in config.yaml. Activity is by day, weekday and hour; usage is also shown "
    "by source, by model and for the largest sessions."
)


def register(app: typer.Typer) -> None:
    """Add ``insights`` to the root app."""

    @app.command("insights", help=_HELP)
    @handle_user_errors
    @bulk_filter_options
    def insights(
        ctx: typer.Context,
        filter_options: dict[str, Any],
        days: Annotated[
            int | None,
            typer.Option(
                "--days",
                min=1,
                metavar="N",
                help="Only sessions active in the last N days (same as --newer-than Nd).",
            ),
        ] = None,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the report as JSON (shape in docs/cli.md).")
        ] = False,
        html: Annotated[
            Path | None,
            typer.Option(
                "--html",
                metavar="FILE",
                help="Write the report as one self-contained HTML page with charts.",
            ),
        ] = None,
    ) -> None:
        """Report usage over the selected sessions (help text: ``_HELP``)."""

        from hermes_core.insights import PriceTable, build_report
        from hermes_core.selection.options import filter_from_options

        context = cli_context(ctx)
        prices = PriceTable.from_config(context.config["insights.prices"])
        if days is not None:
            if filter_options.get("newer_than") is not None:
                raise UserError(
                    "--days and --newer-than both say where the period starts: give one"
                )
            filter_options = {**filter_options, "newer_than": f"{days}d"}
        selection = filter_from_options(**filter_options)
        target = _checked_target(html) if html is not None else None
        given = {name: str(value) for name, value in filter_options.items() if value is not None}
        report = build_report(context.store.insight_rows(selection), prices, filters=given)
        if target is not None:
            from hermes_core.files import OutputError, writes_to_standard_output
            from hermes_core.insights.html_page import write_page

            try:
                write_page(report, target)
            except OutputError as error:
                raise UserError(str(error)) from None
            echo(
                f"Wrote insights over {report.totals.sessions:,} session(s) to {target}",
                err=as_json or writes_to_standard_output(target),
            )
        if as_json:
            from hermes_core.insights.json_report import report_as_json

            echo_json(report_as_json(report))
        elif target is None:
            from rich.console import Console

            from hermes_core.insights.terminal import render

            render(report, Console(highlight=False))


def _checked_target(path: Path) -> Path:
    """Where ``--html`` writes; refused before any work when it cannot be a file (a device,
    a FIFO or ``/dev/stdout`` is written in place: see ``hermes_core.files``)."""
    from hermes_core.files import OutputError, output_kind

    target = path.expanduser()
    if target.is_dir():
        raise UserError(f"--html {path}: is a directory; name the file to write")
    if not target.parent.is_dir():
        raise UserError(f"--html {path}: the folder {target.parent} does not exist")
    try:
        output_kind(target)
    except OutputError as error:  # a block device or a socket
        raise UserError(str(error)) from None
    return target
