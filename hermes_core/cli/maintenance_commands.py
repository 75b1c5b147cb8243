"""``hermes sessions stats|optimize`` (SPEC C5, C6); ``repair`` is in :mod:`.repair_command`."""

from __future__ import annotations

import typer

from .context import CliContext, cli_context
from .echo import echo
from .errors import handle_user_errors
from .formatting import human_size


def register(sessions: typer.Typer) -> None:
    """Add the store maintenance commands to the ``sessions`` group."""

    @sessions.command("stats")
    @handle_user_errors
    def stats(ctx: typer.Context) -> None:
        """Counts per origin and the size of the store, then where the space goes and what
        the automatic clean-up last did."""
        context = cli_context(ctx)
        found = context.store.stats()
        echo(f"Total sessions: {found.total_sessions}")
        echo(f"Total messages: {found.total_messages}")
        for source, count in found.sessions_by_source:
            echo(f"  {source}: {count} sessions")
        echo(f"Database size: {human_size(found.database_bytes)}")
        echo(
            f"Active: {found.active_sessions}   Pinned: {found.pinned_sessions}   "
            f"Archived: {found.archived_sessions}"
        )
        _print_lifecycle(context, found.indexed_in_part)

    @sessions.command("optimize")
    @handle_user_errors
    def optimize(ctx: typer.Context) -> None:
        """Merge full-text index segments and VACUUM; no session data is touched."""
        from hermes_core.lifecycle.vacuum import vacuum

        before, after = vacuum(cli_context(ctx).store.lifecycle)
        change = before - after
        verdict = (
            f"reclaimed {human_size(change)}" if change >= 0 else f"grew by {human_size(-change)}"
        )
        echo(f"Database size: {human_size(before)} → {human_size(after)} ({verdict})")
        echo(f"Bytes reclaimed: {max(0, change):,}")


def _print_lifecycle(context: CliContext, indexed_in_part: int) -> None:
    """The lines below the seed's: the size split, what the index covers and the automatic
    clean-up's record."""
    from hermes_core.lifecycle.state import load_record
    from hermes_core.store.fulltext import INDEXED_CHARS

    store = context.store
    split = store.lifecycle.size_split()
    how = split.how or ("measured" if split.measured else "estimated")
    echo(
        f"Size by content: messages {human_size(split.messages_bytes)}, full-text index "
        f"{human_size(split.fulltext_bytes)}, other {human_size(split.other_bytes)} ({how})"
    )
    echo(
        f"Searchable in part: {indexed_in_part} messages (longer than {INDEXED_CHARS:,} "
        "characters: kept whole, their words past that point are not found)"
    )
    record = load_record(store.lifecycle)
    config = context.config

    def when(moment: float | None) -> str:
        return _local(moment) if moment is not None else "never"

    prune = when(record.last_auto_prune)
    if record.last_auto_prune is not None and record.last_auto_prune_removed is not None:
        prune += f" (removed {record.last_auto_prune_removed} sessions)"
    if not config["sessions.auto_prune"]:
        prune += " — sessions.auto_prune is off"
    echo(f"Last auto-prune: {prune}")
    sweep = when(record.last_auto_archive)
    if record.last_auto_archive is not None and record.last_auto_archive_archived is not None:
        sweep += f" (archived {record.last_auto_archive_archived} sessions)"
    if not config["sessions.auto_archive"]:
        sweep += " — sessions.auto_archive is off"
    echo(f"Last auto-archive: {sweep}")
    echo(f"Last VACUUM: {when(record.last_vacuum)}")
    failure = "none"
    if record.last_failure is not None:
        failure = f"{when(record.last_failure_at)}: {record.last_failure}"
    echo(f"Last clean-up failure: {failure}")
    _print_backups(context)


def _print_backups(context: CliContext) -> None:
    """``Last backup:`` and ``Last backup failure:`` of a SQLite store's rolling backups."""
    from hermes_core.store import SessionStore
    from hermes_core.store.backups import (
        BackupSettings,
        backup_folder,
        last_failure,
        list_backups,
    )
    from hermes_core.store.failures import shown

    store = context.store
    if not isinstance(store, SessionStore):
        return
    settings = BackupSettings.from_config(context.config)
    backups = list_backups(store.path, settings)
    if backups:
        where = shown(backup_folder(store.path, settings))
        line = f"{backups[0].local_time} ({len(backups)} kept in {where})"
    else:
        line = "never"
    if not settings.enabled:
        line += " — off (store.backups.interval_hours or keep is 0)"
    echo(f"Last backup: {line}")
    failed = last_failure(store.connection)
    text = "none" if failed is None else f"{_local(failed[0])}: {failed[1]}"
    echo(f"Last backup failure: {text}")


def _local(moment: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))
