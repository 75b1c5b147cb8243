"""``hermes sessions repair`` (SPEC C6, R5): check the store, fix what drifted, salvage a
damaged file, and offer a rolling backup for what the damage took.

What can go wrong is said in one line and changes nothing. Repair never advises running
repair: a store it cannot help (made by a newer Hermes, read-only, held open by a gateway)
is named for what it is.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .context import cli_context
from .echo import echo
from .errors import UserError, fail, handle_user_errors

if TYPE_CHECKING:
    from hermes_core.cli.context import CliContext
    from hermes_core.store.backups import Backup, BackupContents, BackupSettings
    from hermes_core.store.repair import Inspection, Salvaged
    from hermes_core.store.salvage import SalvageReport

MERGE, RESTORE, SALVAGE_ONLY, QUIT = "merge", "restore", "salvage", "quit"


def _stdin_is_terminal() -> bool:
    """Whether a question can be asked."""
    return sys.stdin.isatty()


def register(sessions: typer.Typer) -> None:
    """Add ``repair`` to the ``sessions`` group."""

    @sessions.command("repair")
    @handle_user_errors
    def repair(
        ctx: typer.Context,
        check_only: Annotated[
            bool,
            typer.Option(
                "--check-only", help="Only report problems (and what a salvage would keep)."
            ),
        ] = False,
        merge_backup: Annotated[
            bool,
            typer.Option(
                "--merge-backup",
                help="Damaged store: keep the salvage and add what the backup holds that the "
                "damage took.",
            ),
        ] = False,
        restore_backup: Annotated[
            bool,
            typer.Option(
                "--restore-backup",
                help="Damaged or missing store: replace it with the backup as it was.",
            ),
        ] = False,
        no_backup: Annotated[
            bool, typer.Option("--no-backup", help="Damaged store: keep only the salvage.")
        ] = False,
        backup: Annotated[
            Path | None,
            typer.Option(
                "--backup",
                help="The backup file to use (default: the newest rolling backup).",
                dir_okay=False,
            ),
        ] = None,
        yes: Annotated[
            bool,
            typer.Option("--yes", "-y", help="Do not ask: merge the backup when there is one."),
        ] = False,
    ) -> None:
        """Check the store; fix what drifted (backup first); salvage a damaged file into a new
        store, keeping the damaged one, and offer a rolling backup for what was lost."""
        from hermes_core.store.backends import SQLITE_SCHEME, sqlite_path, url_scheme
        from hermes_core.store.errors import StoreDamaged

        chosen = [
            name
            for name, flag in (
                (MERGE, merge_backup),
                (RESTORE, restore_backup),
                (SALVAGE_ONLY, no_backup),
            )
            if flag
        ]
        if len(chosen) > 1:
            raise fail("choose one of --merge-backup, --restore-backup and --no-backup", 2)
        if check_only and (chosen or yes):
            raise fail("--check-only changes nothing: it takes no backup choice or --yes", 2)
        context = cli_context(ctx)
        url = context.store_url
        if url_scheme(url) != SQLITE_SCHEME:
            if chosen or backup is not None:
                raise fail("backups are SQLite stores' only (back PostgreSQL up with pg_dump)", 2)
            _repair_other_backend(context, url, check_only)
            return
        from hermes_core.store.backups import BackupSettings

        settings = BackupSettings.from_config(context.config)
        choice = chosen[0] if chosen else (MERGE if yes else None)
        try:
            _repair_sqlite(
                sqlite_path(url),
                settings,
                check_only,
                choice,
                backup,
                wants_backup=backup is not None or merge_backup or restore_backup,
            )
        except StoreDamaged as error:
            raise fail(str(error)) from None  # never the advice to run repair


def _repair_other_backend(context: CliContext, url: str, check_only: bool) -> None:
    """Another backend repairs itself when its store offers ``repair`` (optional: not part
    of the store protocol)."""
    from hermes_core.store.backends import redacted, url_scheme
    from hermes_core.store.maintenance import RepairReport

    store_repair = getattr(context.store, "repair", None)
    if store_repair is None:
        raise fail(f"repair checks SQLite stores only; store.url names a {url_scheme(url)} one")
    label = redacted(url)
    report: RepairReport = store_repair(check_only=check_only)
    if not report.problems:
        echo(f"{label}: no problems found.")
        return
    echo(f"{label}: {len(report.problems)} problem(s):")
    for problem in report.problems:
        echo(f"  - {problem}")
    if check_only:
        raise typer.Exit(1)
    for action in report.actions:
        echo(f"  ✓ {action}")
    if not report.healthy_after:
        raise fail("the store still has problems")
    echo("The store is healthy now.")


def _repair_sqlite(
    path: Path,
    settings: BackupSettings,
    check_only: bool,
    choice: str | None,
    backup: Path | None,
    *,
    wants_backup: bool = False,
) -> None:
    from hermes_core.store.failures import shown
    from hermes_core.store.repair import inspect

    found = inspect(path)  # a newer Hermes's or another program's file: one line, raised
    label = shown(path)
    if found.read_only is not None and not check_only:
        raise fail(
            f"{found.read_only}".replace("nothing was written", "nothing was changed")
            + " (--check-only checks it as it is)"
        )
    if found.state == "healthy":
        echo(f"{label}: no problems found.")
        for skipped in found.not_run:
            echo(f"  (read-only, so not checked: {skipped})")
        if wants_backup:
            echo("  (the store is not damaged, so no backup was used)")
        return
    if found.state in ("missing", "empty"):
        _nothing_to_salvage(found, settings, check_only, choice, backup)
        return
    echo(f"{label}: {len(found.problems)} problem(s):")
    for problem in found.problems:
        echo(f"  - {problem}")
    for skipped in found.not_run:
        echo(f"  (read-only, so not checked: {skipped})")
    if found.state == "fixable":
        if check_only:
            raise typer.Exit(1)
        _fix(found)
        return
    if check_only:
        _estimate(path, settings, backup)
        raise typer.Exit(1)
    _salvage(found, settings, choice, backup)


def _fix(found: Inspection) -> None:
    from hermes_core.store.repair import fix_in_place

    report = fix_in_place(found.path, found)
    echo(f"Backup written to {report.backup}")
    for action in report.actions:
        echo(f"  ✓ {action}")
    if report.remaining:
        raise fail(
            f"the store still has problems ({report.remaining[0]}); your backup is {report.backup}"
        )
    echo("The store is healthy now.")


def _estimate(path: Path, settings: BackupSettings, explicit: Path | None) -> None:
    """``--check-only`` on a damaged store: what a salvage would keep, and the backup."""
    from hermes_core.store.errors import StoreError
    from hermes_core.store.repair import salvage_estimate

    try:
        report = salvage_estimate(path)
    except (StoreError, OSError) as error:
        echo(f"A salvage could not be tried here: {error}")
    else:
        echo(f"A repair would keep {_kept(report)}.")
    found = _usable_backup(path, settings, explicit)
    if found is not None:
        echo(_backup_line(*found))


def _salvage(
    found: Inspection, settings: BackupSettings, choice: str | None, explicit: Path | None
) -> None:
    from hermes_core.store.repair import salvage_store

    backup = _usable_backup(found.path, settings, explicit)
    if backup is not None and choice is None and not _stdin_is_terminal():
        raise UserError(
            f"not a terminal, so nothing was asked or changed: a backup from "
            f"{backup[0].local_time} exists — run again with --merge-backup (keeps the salvage "
            "and adds what the backup holds that the damage took; or --yes), --restore-backup "
            "or --no-backup"
        )
    if backup is None and choice in (MERGE, RESTORE) and explicit is None:
        if choice == RESTORE:
            raise UserError("there is no backup to restore; nothing was changed")
        choice = SALVAGE_ONLY  # --yes with nothing to merge: the salvage alone
    salvaged = salvage_store(found.path)
    try:
        echo(f"Salvaged what was readable: kept {_kept(salvaged.report)}.")
        if backup is not None:
            echo(_backup_line(*backup))
            choice = choice or _ask(restore_only=False)
            _apply(salvaged, backup[0], choice)
        _install(salvaged)
    except BaseException:
        salvaged.discard()
        raise


def _nothing_to_salvage(
    found: Inspection,
    settings: BackupSettings,
    check_only: bool,
    choice: str | None,
    explicit: Path | None,
) -> None:
    """A store that is missing or empty: only a backup can bring sessions back."""
    from hermes_core.store.failures import shown
    from hermes_core.store.repair import salvage_store

    label = shown(found.path)
    what = f"no session store at {label}" if found.state == "missing" else found.problems[0]
    backup = _usable_backup(found.path, settings, explicit)
    if backup is None:
        if found.state == "missing":
            raise fail(f"{what}; there is no backup of it either")
        echo(f"{label}: {what}; there is no backup of it: nothing to repair.")
        return
    if found.state == "empty":
        what = f"{label}: {what}"
    echo(f"{what}.")
    echo(_backup_line(*backup))
    if check_only:
        raise typer.Exit(1)
    if choice is None and not _stdin_is_terminal():
        raise UserError(
            "not a terminal, so nothing was asked or changed: run again with "
            "--restore-backup (or --yes) to restore it"
        )
    if choice == SALVAGE_ONLY:
        raise UserError("nothing to salvage and --no-backup: nothing was changed")
    choice = RESTORE if choice is not None else _ask(restore_only=True)
    salvaged = salvage_store(found.path)
    try:
        _apply(salvaged, backup[0], choice)
        _install(salvaged)
    except BaseException:
        salvaged.discard()
        raise


def _apply(salvaged: Salvaged, backup: Backup, choice: str) -> None:
    if choice == QUIT:
        raise UserError("nothing was changed")
    if choice == MERGE:
        sessions, messages = salvaged.merge_backup(backup.path)
        echo(f"Merged the backup: added {sessions:,} session(s) and {messages:,} message(s).")
    elif choice == RESTORE:
        salvaged.use_backup(backup.path)
        echo(f"Restored the backup of {backup.local_time}.")


def _install(salvaged: Salvaged) -> None:
    from hermes_core.store.failures import shown
    from hermes_core.store.repair import check_installed

    kept = salvaged.install()
    if kept is not None:
        echo(f"Kept the damaged file as {shown(kept)}")
    problems = check_installed(salvaged.path)
    sessions, messages = _totals(salvaged.path)
    if problems:
        raise fail(f"the new store still has problems: {problems[0]}")
    echo(
        f"{shown(salvaged.path)} now holds {sessions:,} session(s) and {messages:,} message(s); "
        "it is healthy."
    )


def _totals(path: Path) -> tuple[int, int]:
    from hermes_core.store.backups import describe

    contents = describe(path)
    return contents.sessions, contents.messages


def _ask(*, restore_only: bool) -> str:
    if restore_only:
        echo(f"  {RESTORE:<8} — restore the backup")
        echo(f"  {QUIT:<8} — change nothing")
        options = [RESTORE, QUIT]
    else:
        echo(
            f"  {MERGE:<8} — keep the salvage and add what the backup holds that the damage "
            "took (recommended)"
        )
        echo(
            f"  {RESTORE:<8} — replace the store with the backup as it was: what came after "
            "it is lost"
        )
        echo(f"  {SALVAGE_ONLY:<8} — keep only the salvage")
        echo(f"  {QUIT:<8} — change nothing")
        options = [MERGE, RESTORE, SALVAGE_ONLY, QUIT]
    shown = "/".join(options)
    while True:
        answer = str(typer.prompt(f"Use the backup? [{shown}]", default=options[0]))
        chosen = [option for option in options if option.startswith(answer.strip().lower())]
        if answer.strip() and len(chosen) == 1:
            return chosen[0]
        echo(f"Answer one of: {', '.join(options)}.")


def _usable_backup(
    path: Path, settings: BackupSettings, explicit: Path | None
) -> tuple[Backup, BackupContents] | None:
    """The backup to offer: ``explicit`` (which must be readable), else the newest rolling
    backup that can be read (a damaged one is passed over)."""
    from hermes_core.store.backups import Backup, describe, list_backups
    from hermes_core.store.errors import StoreError
    from hermes_core.store.failures import shown

    if explicit is not None:
        try:
            contents = describe(explicit)
            moment = explicit.stat().st_mtime
        except (StoreError, OSError) as error:
            raise UserError(f"{shown(explicit)}: cannot use it as a backup ({error})") from error
        return Backup(explicit, moment), contents
    for candidate in list_backups(path, settings):
        try:
            return candidate, describe(candidate.path)
        except StoreError:
            continue
    return None


def _backup_line(backup: Backup, contents: BackupContents) -> str:
    from hermes_core.store.failures import shown

    return (
        f"Backup from {backup.local_time}: {contents.sessions:,} session(s), "
        f"{contents.messages:,} message(s) ({shown(backup.path)})"
    )


def _kept(report: SalvageReport) -> str:
    sessions = f"{report.sessions_kept:,} of {report.sessions_held} sessions"
    if not report.sessions_held.value and not report.sessions_held.exact:
        sessions = f"{report.sessions_kept:,} sessions (how many the file held cannot be told)"
    messages = f"{report.messages_kept:,} of {report.messages_held} messages"
    if not report.messages_held.value and not report.messages_held.exact:
        messages = f"{report.messages_kept:,} messages"
    text = f"{sessions}, {messages}"
    if report.sessions_rebuilt:
        text += (
            f" ({report.sessions_rebuilt:,} session(s) whose own row was lost rebuilt from "
            "their index entries and messages)"
        )
    return text
