"""``hermes`` (bare) and ``hermes chat`` in the typer app: the chat's options (SPEC R1–R5).

The root command and ``chat`` take the same options; both end up in
:func:`hermes_core.cli.chat_start.start_chat`. A plain chat start usually never reaches the
typer app: ``chat_fast_path`` reads these same options directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .chat_start import ChatOptions, start_chat
from .context import cli_context
from .errors import handle_user_errors

ContinueOption = Annotated[
    str | None,
    typer.Option(
        "--continue",
        "-c",
        metavar="[NAME]",
        help="Continue this terminal's last session; with NAME, the newest session of that "
        "title's lineage (or an id or id prefix).",
        show_default=False,
    ),
]
ResumeOption = Annotated[
    str | None,
    typer.Option(
        "--resume",
        "-r",
        metavar="REF",
        help="Resume REF: an id, a unique id prefix or a title; 'latest' for the most recent "
        "CLI session; @claude / @codex to import a log of that tool and continue it.",
        show_default=False,
    ),
]
InOption = Annotated[
    Path | None,
    typer.Option(
        "--in",
        metavar="DIR",
        help="Change into DIR first; with -c or --resume latest, pick that workspace's newest "
        "session. Implies --no-restore-cwd.",
        show_default=False,
    ),
]
NoRestoreOption = Annotated[
    bool,
    typer.Option(
        "--no-restore-cwd",
        help="Stay in the current directory instead of the resumed session's workspace.",
    ),
]


def register(app: typer.Typer) -> None:
    """Add ``hermes chat``."""

    @app.command("chat")
    @handle_user_errors
    def chat(
        ctx: typer.Context,
        continue_: ContinueOption = None,
        resume: ResumeOption = None,
        in_dir: InOption = None,
        no_restore_cwd: NoRestoreOption = False,
    ) -> None:
        """Chat with the configured model; every turn is recorded as a session."""
        start_chat(cli_context(ctx), ChatOptions(continue_, resume, in_dir, no_restore_cwd))
