"""Arming the automatic clean-up at the start of a ``hermes sessions`` command.

Kept tiny: with both ``sessions.auto_prune`` and ``sessions.auto_archive`` off (the defaults)
it imports nothing and reads nothing. Otherwise the clean-up runs when the command first opens
the store — so ``--help``, shell completion and commands that never open the store (``repair``
opens its own connection to a possibly damaged file) never trigger it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_core.cli.context import CliContext
    from hermes_core.store.protocol import Store


def arm_auto_clean(context: CliContext) -> None:
    """Run the automatic clean-up when this command opens the store, if it is switched on."""
    config = context.config
    if not (config["sessions.auto_prune"] or config["sessions.auto_archive"]):
        return

    def on_open(store: Store) -> None:
        if store.read_only:
            return  # nothing could be written; the command itself says so if it writes
        from .autoclean import run_auto_clean

        result = run_auto_clean(store, config)
        _report(result.pruned, result.archived, result.reclaimed_bytes, result.vacuumed)

    context.on_store_open.append(on_open)


def _report(pruned: int, archived: int, reclaimed: int, vacuumed: bool) -> None:
    done = []
    if pruned:
        done.append(f"pruned {pruned} old session(s)")
    if archived:
        done.append(f"archived {archived} idle session(s)")
    if vacuumed:
        from hermes_core.cli.formatting import human_size

        done.append(f"VACUUM reclaimed {human_size(max(0, reclaimed))}")
    if done:
        import typer  # only when there is something to say: the chat starts without typer

        typer.echo(f"hermes: automatic clean-up: {', '.join(done)}.", err=True)
