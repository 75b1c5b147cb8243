"""``hermes sessions export`` (SPEC X1–X6): one door for every export format.

The command only parses options and prints; the export engine (``hermes_core.exporting``)
checks the request, selects, redacts and drives the exporter plugin. Messages go to stderr
when the export itself goes to stdout (``-``, ``/dev/stdout``), so the output stays clean for
a pipe.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hermes_core.selection.options import bulk_filter_options

from .context import cli_context
from .echo import echo
from .errors import UserError, handle_user_errors

if TYPE_CHECKING:
    from collections.abc import Callable

    from hermes_hookspecs import SessionRecord

    from hermes_core.exporting import ExportPlan, ExportReport, VerifiedExport
    from hermes_core.store.protocol import Store

    from .context import CliContext

_LINEAGE_MODES = ("single", "logical")
_ONLY_MODES = ("user-prompts",)


def _stdout_closed() -> None:
    """The reader of stdout went away (``hermes sessions export - | head``): stop quietly.

    stdout is pointed at /dev/null so the interpreter's final flush does not fail again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # not a real file descriptor (tests): nothing left to flush into a pipe
    raise typer.Exit(1)


def _complete_format(incomplete: str) -> list[str]:
    from hermes_core.plugins import PluginHost

    names = PluginHost(report=lambda _line: None).exporters()
    return sorted(name for name in names if name.startswith(incomplete))


def _when(moment: float | None) -> str:
    return "—" if moment is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))


def _checked_choice(flag: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    if value is not None and value not in allowed:
        raise UserError(f"{flag} takes {' or '.join(allowed)}, not '{value}'")
    return value


def _say(plan: ExportPlan | None, line: str) -> None:
    """A message for the person: on stderr when the export writes where stdout goes (``-``,
    ``/dev/stdout``)."""
    to_stderr = plan is not None and plan.layout.messages_to_stderr
    echo(line, err=to_stderr)


def register(sessions: typer.Typer) -> None:
    """Add ``export`` to the ``sessions`` group."""

    @sessions.command("export")
    @handle_user_errors
    @bulk_filter_options
    def export(
        ctx: typer.Context,
        filter_options: dict[str, Any],
        output: Annotated[
            str | None,
            typer.Argument(
                metavar="[OUTPUT]",
                help="A file, a directory, or - for stdout (default: per format; md/qmd write "
                "to $HERMES_HOME/session-exports).",
                show_default=False,
            ),
        ] = None,
        format_name: Annotated[
            str,
            typer.Option(
                "--format",
                "-f",
                help="Export format: jsonl, md, qmd, html, trace, or any installed plugin's.",
                autocompletion=_complete_format,
            ),
        ] = "jsonl",
        session_id: Annotated[
            str | None,
            typer.Option(
                "--session-id", help="Export one session: an id, a unique prefix or a title."
            ),
        ] = None,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="List what would be exported; write nothing.")
        ] = False,
        redact: Annotated[
            bool | None,
            typer.Option(
                "--redact/--no-redact",
                help="Scrub secrets (API keys, tokens, credentials) from every field; "
                "--no-redact turns off a format's default redaction (trace).",
                show_default=False,
            ),
        ] = None,
        only: Annotated[
            str | None,
            typer.Option(
                "--only", metavar="user-prompts", help="Only the prompts you wrote (jsonl, md)."
            ),
        ] = None,
        lineage: Annotated[
            str,
            typer.Option(
                "--lineage",
                metavar="single|logical",
                help="logical: a compression lineage as one conversation.",
            ),
        ] = "single",
        delete_after_verified: Annotated[
            bool,
            typer.Option(
                "--delete-after-verified",
                help="With --session-id: export the session and each delegate to its own "
                "file, re-read and verify every file, then delete them.",
            ),
        ] = False,
        yes: Annotated[
            bool,
            typer.Option(
                "--yes", "-y", help="Confirms --delete-after-verified (required with it)."
            ),
        ] = (False),
        upload: Annotated[
            bool, typer.Option("--upload", help="Upload the export (trace: a private HF dataset).")
        ] = False,
        public: Annotated[
            bool, typer.Option("--public", help="With --upload: make the upload public.")
        ] = False,
    ) -> None:
        """Export sessions to a file, a directory or stdout, in any installed format."""
        from hermes_core.exporting import ExportError, ExportRequest, plan_export

        request = ExportRequest(
            format=format_name,
            output=output,
            session_reference=session_id,
            filter_options=filter_options,
            lineage="logical"
            if _checked_choice("--lineage", lineage, _LINEAGE_MODES) == "logical"
            else "single",
            only="user-prompts" if _checked_choice("--only", only, _ONLY_MODES) else None,
            redact=redact,
            dry_run=dry_run,
            delete_after_verified=delete_after_verified,
            upload=upload,
            public=public,
        )
        if delete_after_verified and not yes and not dry_run:
            raise UserError(
                "--delete-after-verified deletes sessions, so it needs --yes "
                "(nothing was exported or deleted)"
            )
        context = cli_context(ctx)
        try:
            plan = plan_export(context.store, context.host, request, home=context.home)
            if dry_run:
                _dry_run(context.store, plan)
            elif delete_after_verified:
                _export_then_delete(context, plan)
            else:
                _export(context, plan)
        except ExportError as error:
            raise UserError(str(error)) from None
        except BrokenPipeError:
            _stdout_closed()


def _dry_run(store: Store, plan: ExportPlan) -> None:
    from hermes_core.exporting import preview

    count = 0
    messages = 0
    for item in preview(plan, store):
        count += 1
        session = item.session
        messages += session.message_count
        span = f"  (lineage of {len(item.lineage)})" if item.lineage else ""
        echo(
            f"  {session.id:<24}  {_when(session.last_active_at)}  "
            f"{session.message_count:>6} msgs  {session.title or '—'}{span}"
        )
    redacted = ", redacted" if plan.redact else ""
    echo(
        f"Dry run: {count} session(s) ({messages} messages) would be exported as "
        f"{plan.request.format}{redacted} to {plan.layout.describe()}; nothing was written."
    )
    if plan.request.delete_after_verified and plan.targets.session_id is not None:
        from hermes_core.exporting.deletion import delete_targets

        doomed = delete_targets(store, plan.targets.session_id)
        echo(
            f"Then {len(doomed)} session(s) would be deleted once their files verify: "
            + " ".join(doomed)
        )


def _summary(plan: ExportPlan, report: ExportReport) -> str:
    redacted = ", redacted" if plan.redact else ""
    where = plan.layout.describe()
    files = f", {len(report.files)} file(s)" if len(report.files) > 1 else ""
    manifest = f"; manifest: {report.manifest}" if report.manifest else ""
    vanished = (
        f" {report.sessions_vanished} selected session(s) were deleted meanwhile and left out."
        if report.sessions_vanished
        else ""
    )
    return (
        f"Exported {report.sessions_written} session(s) as {plan.request.format}{redacted} "
        f"to {where}{files}{manifest}.{vanished}"
    )


def _progress() -> tuple[Callable[[SessionRecord], None] | None, Callable[[], None]]:
    """A progress line on stderr for long exports, when stderr is a terminal (and a way to
    end it): the count of sessions handed to the exporter, at most ten updates a second."""
    if not sys.stderr.isatty():
        return None, lambda: None
    count = 0
    last = 0.0
    shown = False

    def show(_record: SessionRecord) -> None:
        nonlocal count, last, shown
        count += 1
        now = time.monotonic()
        if now - last >= 0.1:
            last, shown = now, True
            echo(f"Exporting… {count} session(s)", err=True, nl=False, redraw=True)

    def end() -> None:
        if shown:
            echo(f"Exporting… {count} session(s)", err=True, redraw=True)

    return show, end


def _export(context: CliContext, plan: ExportPlan) -> None:
    from hermes_core.exporting import run_export

    show, end = _progress()
    try:
        report = run_export(plan, context.store, context.host, on_record=show)
    finally:
        end()
    if report.sessions_written == 0:
        _say(plan, "No sessions matched; nothing was exported.")
        return
    _say(plan, _summary(plan, report))


def _export_then_delete(context: CliContext, plan: ExportPlan) -> None:
    """Export, verify, then delete (the seed: only with ``--session-id`` and ``--yes``)."""
    from hermes_core.exporting import delete_after_verified

    def confirm(verified: VerifiedExport) -> bool:
        _say(plan, f"Verified {len(verified.report.files)} file(s) in {plan.layout.describe()}.")
        return True

    report = delete_after_verified(plan, context.store, context.host, confirm=confirm)
    _say(plan, _summary(plan, report))
    if report.deleted:
        _say(plan, f"Deleted {len(report.deleted)} session(s): {' '.join(report.deleted)}.")
