"""The ``hermes batch FILE`` command: reads the file, checks what earlier runs answered, runs
the rest, stops cleanly on SIGINT/SIGTERM and prints the summary."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer

from hermes_core.cli.context import CliContext, cli_context
from hermes_core.cli.echo import echo
from hermes_core.cli.errors import UserError, handle_user_errors

from .prompts import BatchPrompt, PromptFile, read_prompts
from .report import BarProgress, BatchSummary, PlainProgress, Progress, SilentProgress
from .runner import MAX_CONCURRENCY, BatchRunner


def register(app: Any) -> None:
    """Add ``hermes batch`` to the root app."""

    @app.command("batch")  # type: ignore[untyped-decorator]
    @handle_user_errors
    def batch(
        ctx: typer.Context,
        file: Annotated[
            Path,
            typer.Argument(
                help='A .jsonl file of {"prompt": …} objects or a .txt file '
                "of one prompt per line.",
                show_default=False,
            ),
        ],
        as_json: Annotated[
            bool, typer.Option("--json", help="Print the summary as JSON (and no progress).")
        ] = False,
        concurrency: Annotated[
            int,
            typer.Option(help=f"Prompts run at the same time (1 to {MAX_CONCURRENCY})."),
        ] = 1,
        stop_on_error: Annotated[
            bool, typer.Option("--stop-on-error", help="Start no prompt after one failed.")
        ] = False,
        resume: Annotated[
            bool,
            typer.Option("--resume", help="Skip the prompts an earlier run of FILE answered."),
        ] = False,
        again: Annotated[
            bool,
            typer.Option("--again", help="Run every prompt, even those answered before."),
        ] = False,
    ) -> None:
        """Run each prompt of FILE as one turn in a new session (source 'batch').

        Malformed lines are skipped and counted. Ctrl-C or SIGTERM stops after the turns in
        flight. A prompt an earlier run of FILE answered is refused unless --resume or
        --again says what to do with it. Exits non-zero when a prompt failed."""
        if not 1 <= concurrency <= MAX_CONCURRENCY:
            raise UserError(f"--concurrency {concurrency}: give 1 to {MAX_CONCURRENCY}")
        if resume and again:
            raise UserError("--resume and --again contradict each other: give one")
        context = cli_context(ctx)
        context.start_sessions_command()
        run_batch(
            context,
            file,
            as_json=as_json,
            concurrency=concurrency,
            stop_on_error=stop_on_error,
            resume=resume,
            again=again,
        )


def run_batch(
    context: CliContext,
    path: Path,
    *,
    as_json: bool,
    concurrency: int,
    stop_on_error: bool,
    resume: bool,
    again: bool,
) -> None:
    """Everything ``hermes batch`` does after its options are checked; exits with the code of
    :meth:`BatchSummary.exit_code`."""
    from hermes_core.agent import load_model_settings, open_provider
    from hermes_core.store.backends import open_url

    from .ledger import answered_prompts

    found = read_prompts(path)
    if not found.prompts:
        skipped = f" ({len(found.malformed)} malformed line(s) skipped)" if found.malformed else ""
        raise UserError(f"{path}: no prompt to run{skipped}")
    settings = load_model_settings(context.config, os.environ)
    provider = open_provider(context.host, settings)
    store = context.store
    store.require_writable()
    answered = answered_prompts(store, path)
    summary = BatchSummary(str(path), malformed=found.malformed)
    to_run = _to_run(found, answered, summary, resume=resume, again=again)
    progress = _progress(len(to_run), as_json=as_json)
    runner = BatchRunner(
        lambda: open_url(context.store_url, events=context.host, host=context.host),
        provider,
        settings,
        path=path,
        concurrency=concurrency,
        stop_on_error=stop_on_error,
        on_start=progress.started,
        on_finish=progress.finished,
    )
    received: list[int] = []

    def on_signal(number: int, frame: FrameType | None) -> None:
        received.append(number)
        if len(received) == 1:
            runner.stop()
            echo(
                "hermes batch: stopping after the turns in flight (again to interrupt them)",
                err=True,
            )
        else:
            runner.cancel()

    previous = {n: signal.signal(n, on_signal) for n in (signal.SIGINT, signal.SIGTERM)}
    try:
        summary.outcomes = runner.run(to_run) if to_run else []
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        progress.close()
    ran = {outcome.prompt.line for outcome in summary.outcomes}
    summary.not_run = [prompt for prompt in to_run if prompt.line not in ran]
    if summary.not_run:
        summary.stopped_by = signal.Signals(received[0]).name if received else "--stop-on-error"
    summary.show(as_json=as_json, listed=isinstance(progress, BarProgress))
    raise typer.Exit(summary.exit_code(received[0] if received else None))


def _to_run(
    found: PromptFile,
    answered: dict[str, str],
    summary: BatchSummary,
    *,
    resume: bool,
    again: bool,
) -> list[BatchPrompt]:
    """The prompts to run now; without --resume or --again, answered prompts are refused."""
    before = [(prompt, answered[prompt.key]) for prompt in found.prompts if prompt.key in answered]
    if not before or again:
        return list(found.prompts)
    if not resume:
        raise UserError(
            f"{found.path}: {len(before)} of its {len(found.prompts)} prompt(s) were answered by "
            "an earlier batch run; --resume skips them, --again runs them anew"
        )
    summary.answered = before
    return [prompt for prompt in found.prompts if prompt.key not in answered]


def _progress(total: int, *, as_json: bool) -> Progress:
    if as_json or total == 0:
        return SilentProgress()
    if sys.stdout.isatty():
        return BarProgress(total)
    return PlainProgress(total)
