"""``hermes sessions import`` (SPEC I1–I3, D): bring other tools' sessions into the store.

* ``import PATH…`` — each file (the importer is found with ``sniff``; ``--from`` overrides);
  a directory means every log under it that an importer recognises.
* ``import --all`` — everything every installed importer (or the ``--from`` one) discovers in
  its default place, with a progress line on a terminal. Files already imported and unchanged
  are only counted.
* bare, on a terminal — a picker over everything discovered, newest first (Tab marks several).
* bare, without a terminal — a hint on stderr and exit code 2 (nothing to do without a PATH or
  ``--all``).

Each imported session prints its id and a ready-to-paste ``hermes --resume <id>``; the run
ends with a summary line. Exit code 1 when some file failed (missing, unreadable, not
recognised) and none was imported, appended or found already imported, or when a file held
records that could not be read (a backup's damaged lines, each named with its line number);
0 otherwise.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .context import cli_context
from .echo import echo
from .errors import UserError, handle_user_errors

if TYPE_CHECKING:
    from hermes_hookspecs import Importer

    from hermes_core.importing import FileOutcome, FoundLog, ImportRun, ImportSummary

EXIT_NOTHING_TO_DO = 2
MAX_LISTED_SESSIONS = 10
"""A file holding more top-level sessions (a whole store) is reported with one count line."""

HINT = """\
hermes: nothing to import without a terminal to pick on. Try:
  hermes sessions import --all                 import every log found (Claude Code, Codex CLI…)
  hermes sessions import PATH…                 import these files (or every log under a folder)
  hermes sessions import --from claude --all   only one tool's logs"""


def register(sessions: typer.Typer) -> None:
    """Add ``import`` to the ``sessions`` group."""

    @sessions.command("import")
    @handle_user_errors
    def import_(
        ctx: typer.Context,
        paths: Annotated[
            list[Path] | None,
            typer.Argument(
                metavar="PATH",
                help="Log files to import, or folders to import every log under.",
            ),
        ] = None,
        from_: Annotated[
            str | None,
            typer.Option(
                "--from",
                metavar="NAME",
                help="The importer to use (claude, codex, hermes-agent…): overrides detection, "
                "limits --all and the picker to that tool. A database importer (hermes-agent) "
                "without PATH imports the store it finds in its default place.",
                autocompletion=lambda: ["claude", "codex", "hermes-agent", "jsonl"],
            ),
        ] = None,
        all_: Annotated[
            bool,
            typer.Option(
                "--all", help="Import every log the installed importers find (idempotent)."
            ),
        ] = False,
    ) -> None:
        """Import sessions from other agent CLIs (Claude Code, Codex CLI…) and Hermes Agent
        stores as ended sessions; re-importing skips unchanged logs and appends the new turns
        of grown ones."""
        from hermes_core.importing import ImportRun, ImportSummary, is_database_importer

        from .picker import is_interactive

        if paths and all_:
            raise UserError("give PATHs or --all, not both")
        context = cli_context(ctx)
        importers = context.host.importers()
        forced = context.host.importer(from_) if from_ else None
        if not importers:
            raise UserError(
                "no importer is installed (pip install hermes-import-claude hermes-import-codex)"
            )
        database = forced is not None and is_database_importer(forced)
        if not paths and not all_ and not database and not is_interactive():
            echo(HINT, err=True)
            raise typer.Exit(EXIT_NOTHING_TO_DO)
        run = ImportRun(context.store)
        summary = ImportSummary()
        with run.bulk_load():
            if paths:
                _import_paths(run, summary, paths, importers, forced)
            elif all_:
                _import_everything(run, summary, importers, from_)
            elif forced is not None and is_database_importer(forced):
                _import_default_store(run, summary, forced)
            else:
                chosen = pick_foreign_logs(importers, from_, skip=run.is_own_store)
                if chosen is None:
                    return
                for log in chosen:
                    _report(run.import_file(log.candidate.path, log.importer), summary)
        echo(summary.line())
        for line in (summary.skipped_line(), summary.repaired_line()):
            if line:
                echo(line)
        if (summary.failed and not summary.succeeded) or summary.lost_records:
            raise typer.Exit(1)


# ---------------------------------------------------------------------- the three ways


def _import_paths(
    run: ImportRun,
    summary: ImportSummary,
    paths: Iterable[Path],
    importers: Mapping[str, Importer],
    forced: Importer | None,
) -> None:
    from hermes_core.importing import FileOutcome, FileStatus, importer_for_path
    from hermes_core.importing.files import walk_regular_files

    known = ", ".join(sorted(importers))
    for given in paths:
        path = given.expanduser()
        try:
            mode = os.stat(path).st_mode
        except OSError as error:
            reason = "no such file" if not os.path.lexists(path) else error.strerror or str(error)
            _report(
                FileOutcome(path, FileStatus.UNREADABLE, detail=f"cannot read: {reason}"), summary
            )
            continue
        if stat.S_ISDIR(mode):
            found = 0
            for file in walk_regular_files(path):
                if run.is_own_store(file):
                    continue  # the home itself, say: its state.db is never opened by path
                importer = forced or importer_for_path(file, importers)
                if importer is None:
                    continue
                found += 1
                _report(run.import_file(file, importer), summary)
            if not found:
                _report(
                    FileOutcome(
                        path,
                        FileStatus.UNRECOGNISED,
                        detail=f"no log any importer reads was found under it ({known})",
                    ),
                    summary,
                )
            continue
        if not stat.S_ISREG(mode):
            _report(
                FileOutcome(path, FileStatus.UNREADABLE, detail="cannot read: not a regular file"),
                summary,
            )
            continue
        if run.is_own_store(path):  # refused before any importer's sniff opens it
            _report(run.own_store_outcome(path, forced), summary)
            continue
        importer = forced or importer_for_path(path, importers)
        if importer is None:
            _report(
                FileOutcome(
                    path,
                    FileStatus.UNRECOGNISED,
                    detail=f"no installed importer recognises it (try --from NAME: {known})",
                ),
                summary,
            )
            continue
        _report(run.import_file(path, importer), summary)


def _import_everything(
    run: ImportRun, summary: ImportSummary, importers: Mapping[str, Importer], only: str | None
) -> None:
    """``--all``: stat every discovered file; read only the new and grown ones."""
    from hermes_core.importing import FileOutcome, FileStatus, gather_candidates

    found = [
        log
        for log in gather_candidates(importers, os.environ, only=only, on_error=_discovery_failed)
        if not run.is_own_store(log.candidate.path)  # Hermes Agent's default is ~/.hermes too
    ]
    progress = _Progress(len(found)) if sys.stderr.isatty() else None
    for index, log in enumerate(found, start=1):
        path = log.candidate.path
        try:
            known = run.quick_check(path, log.importer)
        except OSError as error:
            reason = error.strerror or str(error)
            outcome = FileOutcome(path, FileStatus.UNREADABLE, detail=f"cannot read: {reason}")
        else:
            if known is not None:
                summary.add(known)  # counted, not listed: --all is run again and again
                if progress is not None:
                    progress.show(index)
                continue
            outcome = run.import_file(path, log.importer)
        if progress is not None:
            progress.clear()
        _report(outcome, summary)
        if progress is not None:
            progress.show(index)
    if progress is not None:
        progress.finish()
    if not found:
        echo("No sessions found to import.")


def _import_default_store(run: ImportRun, summary: ImportSummary, importer: Importer) -> None:
    """``--from NAME`` of a database importer without PATH: the store(s) it finds in its
    default place (a Hermes Agent ``state.db``); this store itself is refused."""
    from hermes_core.importing import gather_candidates

    found = gather_candidates(
        {importer.name: importer}, os.environ, on_error=_discovery_failed, keep_held=True
    )
    if not found:
        label = getattr(importer, "label", importer.name)
        raise UserError(f"no {label} store was found in its default place; give its PATH")
    for log in found:
        _report(run.import_file(log.candidate.path, importer), summary)


def pick_foreign_logs(
    importers: Mapping[str, Importer],
    only: str | None,
    *,
    multi: bool = True,
    skip: Callable[[Path], bool] | None = None,
) -> list[FoundLog] | None:
    """The picker over every log the importers (or only the one named ``only``) discover,
    newest first; the chosen logs, or None when nothing was found or chosen (said on the
    terminal). The bare ``import`` marks several; ``hermes --resume @claude`` can ask for one
    with ``multi=False``."""
    from hermes_core.importing import described, gather_candidates

    from .picker import PickerRow, filter_rows, pick

    found = [
        described(log)
        for log in gather_candidates(importers, os.environ, only=only, on_error=_discovery_failed)
        if skip is None or not skip(log.candidate.path)
    ]
    # Newest first by the date each row shows (describing may have found the start).
    found.sort(key=lambda log: (log.shown_time, str(log.candidate.path)), reverse=True)
    if not found:
        echo("No sessions found to import.")
        return None
    rows = [
        PickerRow(str(index), candidate_cells(log), str(log.candidate.path))
        for index, log in enumerate(found)
    ]
    chosen = pick(
        lambda typed: filter_rows(rows, typed),
        title="Import sessions — type to filter" + (", Tab marks several" if multi else ""),
        header=("Date", "Tool", "Title", "Folder", "Turns"),
        multi=multi,
    )
    if not chosen:
        echo("Nothing imported.")
        return None
    return [found[int(key)] for key in chosen]


def candidate_cells(log: FoundLog) -> tuple[str, str, str, str, str]:
    """The picker's cells for one discovered log: date, tool, title, cwd folder, turns."""
    candidate = log.candidate
    moment = log.shown_time
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(moment)) if moment else "—"
    folder = Path(candidate.cwd).name if candidate.cwd else "—"
    turns = str(candidate.turn_count) if candidate.turn_count is not None else "?"
    title = candidate.title_guess or candidate.foreign_id
    return (when, getattr(log.importer, "label", log.importer.name), title, folder, turns)


# ---------------------------------------------------------------------- output


def _report(outcome: FileOutcome, summary: ImportSummary) -> None:
    """Print what happened to one file and add it to the summary."""
    from hermes_core.importing import FileStatus

    summary.add(outcome)
    status = outcome.status
    label = outcome.label or outcome.importer or "foreign"
    if status is FileStatus.IMPORTED:
        top_level = outcome.top_level
        if len(top_level) > MAX_LISTED_SESSIONS:
            delegates = len(outcome.delegates)
            echo(
                f"✓ Imported {len(top_level)} {label} sessions"
                + (f" and {delegates} delegate session(s)" if delegates else "")
                + f" from {outcome.path}"
            )
            echo(f"  List them with:  hermes sessions list --limit {len(top_level)}")
        else:
            for stored in top_level:
                what = "session (restored)" if stored.restored else "session"
                echo(f"✓ Imported {label} {what} as {stored.session_id}: {stored.title or '—'}")
                echo(f"  Continue it with:  hermes --resume {stored.session_id}")
            _report_delegates(outcome)
        _report_appended(outcome)
    elif status is FileStatus.APPENDED and outcome.appended:
        _report_appended(outcome)
    elif status is FileStatus.APPENDED:
        main = outcome.sessions[0]
        echo(f"↻ Appended {main.messages} new message(s) to {main.session_id} from {outcome.path}")
        echo(f"  Continue it with:  hermes --resume {main.session_id}")
        _report_delegates(outcome)
    elif status is FileStatus.UNCHANGED:
        echo(f"= {outcome.path}: {outcome.detail}")
    elif status is FileStatus.NO_CONVERSATION:
        echo(f"– {outcome.path}: no conversation")
    elif status is FileStatus.CHANGED:
        echo(f"! {outcome.path}: {outcome.detail}")
    else:
        echo(f"hermes: {outcome.path}: {outcome.detail}", err=True)
    for problem in outcome.unreadable_records:
        echo(f"hermes: {outcome.path} {problem}", err=True)
    if outcome.routes_added:
        echo(f"  with {outcome.routes_added} gateway routing row(s)")
    for note in outcome.notes:
        echo(f"  note: {note}")


def _report_appended(outcome: FileOutcome) -> None:
    """The sessions of a database file that were here already and got new messages."""
    if not outcome.appended:
        return
    messages = sum(stored.messages for stored in outcome.appended)
    echo(
        f"↻ Appended {messages} new message(s) to {len(outcome.appended)} session(s) "
        f"from {outcome.path}"
    )


def _report_delegates(outcome: FileOutcome) -> None:
    delegates = [stored for stored in outcome.sessions[1:] if stored.delegate]
    if delegates:
        ids = ", ".join(stored.session_id for stored in delegates)
        echo(f"  with {len(delegates)} subagent session(s) as delegates: {ids}")


def _discovery_failed(importer: str, error: Exception) -> None:
    echo(f"hermes: importer '{importer}' could not look for logs: {error}", err=True)


class _Progress:
    """A one-line progress bar on stderr (only drawn on a terminal)."""

    WIDTH = 30

    def __init__(self, total: int) -> None:
        self.total = total
        self._last = 0.0

    def show(self, done: int) -> None:
        now = time.monotonic()
        if done < self.total and now - self._last < 0.1:
            return
        self._last = now
        filled = self.WIDTH * done // max(1, self.total)
        bar = "█" * filled + "·" * (self.WIDTH - filled)
        sys.stderr.write(f"\rImporting [{bar}] {done}/{self.total} files")
        sys.stderr.flush()

    def clear(self) -> None:
        sys.stderr.write("\r\x1b[2K")
        sys.stderr.flush()

    def finish(self) -> None:
        self.show(self.total)
        sys.stderr.write("\n")
        sys.stderr.flush()
