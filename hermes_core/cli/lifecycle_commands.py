"""``hermes sessions prune|archive|unarchive`` (SPEC L1, L2).

Both bulk commands select through the shared F1 filters, preview before acting (the match
count with the oldest and newest match) and ask; ``--yes`` skips the question, ``--dry-run``
lists every match and changes nothing. Without a terminal to ask on, they refuse unless
``--yes`` is given.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hermes_core.selection.options import bulk_filter_options

from .context import cli_context
from .echo import confirm, echo
from .errors import UserError, fail, handle_user_errors

if TYPE_CHECKING:
    from hermes_core.lifecycle.prune import PruneProgress


def _stdin_is_terminal() -> bool:
    """Whether a question can be asked (tests replace this)."""
    return sys.stdin.isatty()


def _when(moment: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))


def _describe(session_id: str, title: str | None, last_active_at: float) -> str:
    label = f"{session_id} '{title}'" if title else session_id
    return f"{label}, last active {_when(last_active_at)}"


def _match_line(session_id: str, title: str | None, last_active_at: float, messages: int) -> str:
    return f"  {session_id:<24}  {_when(last_active_at)}  {messages:>6} msgs  {title or '—'}"


def _confirm(question: str, *, yes: bool, hint: str) -> None:
    """Ask ``question`` unless ``yes``; refuse when there is no terminal to ask on."""
    if yes:
        return
    if not _stdin_is_terminal():
        raise UserError(f"not a terminal, so nothing was asked or changed: {hint}")
    if not confirm(question):
        raise UserError("nothing changed")


_YES = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
_DRY_RUN = Annotated[bool, typer.Option("--dry-run", help="List every match; change nothing.")]


def register(sessions: typer.Typer) -> None:
    """Add the lifecycle commands to the ``sessions`` group."""

    @sessions.command("prune")
    @handle_user_errors
    @bulk_filter_options
    def prune(
        ctx: typer.Context,
        filter_options: dict[str, Any],
        include_archived: Annotated[
            bool, typer.Option("--include-archived", help="Delete matching archived sessions too.")
        ] = False,
        dry_run: _DRY_RUN = False,
        yes: _YES = False,
    ) -> None:
        """Delete ended sessions for good: bare, those idle 90 days or more; with filters, every
        match of any age. Pinned sessions (and their lineages) and running ones are kept."""
        from hermes_core.lifecycle.lock import LockHeld, acquire
        from hermes_core.lifecycle.prune import plan_prune, prune_selection, run_prune
        from hermes_core.selection.options import filter_from_options

        selection = prune_selection(
            filter_from_options(**filter_options), include_archived=include_archived
        )
        store = cli_context(ctx).store
        plan = plan_prune(store.lifecycle, selection)
        kept = _kept_note(plan.protected_count, plan.active_count)
        if not plan.candidates:
            echo("No sessions to prune." + (f" {kept}" if kept else ""))
            return
        count = len(plan.candidates)
        delegates = (
            f", plus {plan.delegate_count} delegate session(s) that go with them"
            if plan.delegate_count
            else ""
        )
        if dry_run:
            for c in plan.candidates:
                echo(_match_line(c.id, c.title, c.last_active_at, c.message_count))
        echo(f"{count} session(s) to prune ({plan.message_count} messages){delegates}.")
        if plan.oldest and plan.newest:
            o, n = plan.oldest, plan.newest
            echo(f"  oldest: {_describe(o.id, o.title, o.last_active_at)}")
            echo(f"  newest: {_describe(n.id, n.title, n.last_active_at)}")
        if kept:
            echo(kept)
        if dry_run:
            echo("Dry run: nothing was deleted.")
            return
        _confirm(
            f"Delete these {count} session(s) for good?",
            yes=yes,
            hint=f"add --yes to delete these {count} session(s), or --dry-run to list them",
        )
        try:
            lock = acquire(store.lifecycle, "prune")
        except LockHeld as held:
            raise UserError(f"{held}; try again when it has finished") from None
        try:
            deleted = run_prune(store.lifecycle, plan, lock, on_batch=_progress())
        finally:
            lock.release()
        echo(
            f"Pruned {deleted} session(s). The file keeps its size until "
            "'hermes sessions optimize' reclaims the space."
        )

    @sessions.command("archive")
    @handle_user_errors
    @bulk_filter_options
    def archive(
        ctx: typer.Context,
        filter_options: dict[str, Any],
        dry_run: _DRY_RUN = False,
        yes: _YES = False,
    ) -> None:
        """Hide matching ended sessions from listings, keeping their messages and search.
        Needs at least one filter; pinned sessions are left alone."""
        from hermes_core.lifecycle.archive import archive as archive_sessions
        from hermes_core.lifecycle.archive import archive_selection, plan_archive
        from hermes_core.selection.options import filter_from_options

        chosen = filter_from_options(**filter_options)
        if not chosen.has_attribute_filters:
            raise fail(
                "archive needs at least one filter (for example --older-than 30 or --source "
                "cron): a bare archive would hide your whole history"
            )
        store = cli_context(ctx).store
        plan = plan_archive(store.lifecycle, archive_selection(chosen))
        pinned = f"{plan.pinned_count} pinned session(s) left alone." if plan.pinned_count else ""
        if not plan.matches:
            echo("No sessions to archive." + (f" {pinned}" if pinned else ""))
            return
        count = len(plan.matches)
        if dry_run:
            for m in plan.matches:
                echo(_match_line(m.id, m.title, m.last_active_at, m.message_count))
        echo(f"{count} session(s) to archive.")
        oldest, newest = plan.matches[0], plan.matches[-1]
        echo(f"  oldest: {_describe(oldest.id, oldest.title, oldest.last_active_at)}")
        echo(f"  newest: {_describe(newest.id, newest.title, newest.last_active_at)}")
        if pinned:
            echo(pinned)
        if dry_run:
            echo("Dry run: nothing was archived.")
            return
        _confirm(
            f"Archive these {count} session(s)?",
            yes=yes,
            hint=f"add --yes to archive these {count} session(s), or --dry-run to list them",
        )
        done = archive_sessions(store.lifecycle, [m.id for m in plan.matches])
        echo(
            f"Archived {done} session(s): hidden from listings, messages and search kept "
            "('hermes sessions unarchive' brings them back)."
        )

    @sessions.command("unarchive")
    @handle_user_errors
    @bulk_filter_options
    def unarchive(
        ctx: typer.Context,
        filter_options: dict[str, Any],
        sessions_: Annotated[
            list[str] | None,
            typer.Argument(metavar="[SESSION]...", help="Ids, unique prefixes or titles."),
        ] = None,
        dry_run: _DRY_RUN = False,
    ) -> None:
        """Bring archived sessions back into listings, by id or by filters."""
        from hermes_core.lifecycle.archive import archived_matching
        from hermes_core.lifecycle.archive import unarchive as unarchive_sessions
        from hermes_core.selection.options import filter_from_options

        chosen = filter_from_options(**filter_options)
        references: Sequence[str] = sessions_ or []
        if references and chosen.has_attribute_filters:
            raise fail("give session ids or filters, not both")
        if not references and not chosen.has_attribute_filters:
            raise fail("name the sessions to unarchive, or select them with filters")
        store = cli_context(ctx).store
        if references:
            ids = list(dict.fromkeys(store.resolve(r) for r in references))
        else:
            ids = archived_matching(store.lifecycle, chosen)
        if dry_run:
            for session_id in ids:
                echo(f"  {session_id}")
            echo(f"Dry run: {len(ids)} session(s) would be unarchived.")
            return
        done = unarchive_sessions(store.lifecycle, ids)
        echo(f"Unarchived {done} session(s).")


def _progress() -> Callable[[PruneProgress], None] | None:
    """A progress line on stderr for long prunes, when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(progress: PruneProgress) -> None:
        done = progress.done_candidates == progress.total_candidates
        echo(
            f"Deleted {progress.done_candidates}/{progress.total_candidates} sessions…",
            err=True,
            nl=done,
            redraw=True,
        )

    return show


def _kept_note(protected: int, active: int) -> str:
    parts = []
    if protected:
        parts.append(f"{protected} pinned or protected session(s)")
    if active:
        parts.append(f"{active} running session(s)")
    return f"Kept: {' and '.join(parts)} that match." if parts else ""
