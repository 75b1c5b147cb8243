"""``hermes sessions migrate --to URL [--from URL]``: copy every session into another store.

The engine is :mod:`hermes_core.migration`; this module opens the two stores, shows a
progress bar on a terminal (rich, on stderr) and prints what was done.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from .context import cli_context
from .echo import echo
from .errors import UserError, handle_user_errors

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from rich.progress import TaskID

    from hermes_core.migration import MigrationProgress


def register(sessions: typer.Typer) -> None:
    """Add ``migrate`` to the ``sessions`` group."""

    @sessions.command("migrate")
    @handle_user_errors
    def migrate(
        ctx: typer.Context,
        to: Annotated[
            str, typer.Option("--to", help="The store.url to copy into (e.g. postgresql://…).")
        ],
        from_url: Annotated[
            str | None,
            typer.Option(
                "--from", help="The store.url to copy from (default: the configured store)."
            ),
        ] = None,
        batch: Annotated[
            int, typer.Option("--batch", min=1, max=100_000, help="Messages per transaction.")
        ] = 500,
    ) -> None:
        """Copy every session, message, link, pin, route and import record into another
        store, resumably, and verify the copy."""
        from hermes_core.migration import migrate_store
        from hermes_core.store.backends import open_url, redacted

        context = cli_context(ctx)
        source_url = from_url or context.store_url
        if _same_store(source_url, to):
            raise UserError(f"--to and --from name the same store ({redacted(to)})")
        source = open_url(source_url, host=context.host)
        try:
            target = open_url(to, host=context.host)
            try:
                with _progress_bar() as show:
                    report = migrate_store(source, target, batch=batch, on_progress=show)
            finally:
                target.close()
        finally:
            source.close()
        echo(
            f"Migrated {report.sessions} sessions ({report.messages} messages, "
            f"{report.routes} routing rows, {report.import_files} import records) "
            f"from {redacted(source_url)} to {redacted(to)}."
        )
        if report.skipped or report.redone:
            echo(f"Resumed: {report.skipped} already copied, {report.redone} copied again.")
        echo("Verified: counts and every session's hash match.")


def _same_store(first: str, second: str) -> bool:
    from hermes_core.store.backends import SQLITE_SCHEME, sqlite_path, url_scheme

    if url_scheme(first) == url_scheme(second) == SQLITE_SCHEME:
        return sqlite_path(first).resolve() == sqlite_path(second).resolve()
    return first.strip() == second.strip()


class _ProgressBar:
    """A rich progress bar on stderr, sized on the first report."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self._progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task: TaskID | None = None

    def __call__(self, progress: MigrationProgress) -> None:
        if self._task is None:
            self._progress.start()
            self._task = self._progress.add_task("Copying sessions", total=progress.total)
        self._progress.update(self._task, completed=progress.done)

    def stop(self) -> None:
        self._progress.stop()


@contextlib.contextmanager
def _progress_bar() -> Iterator[Callable[[MigrationProgress], None] | None]:
    """The progress bar when stderr is a terminal, else no progress reports."""
    bar = _ProgressBar() if sys.stderr.isatty() else None
    try:
        yield bar
    finally:
        if bar is not None:
            bar.stop()
