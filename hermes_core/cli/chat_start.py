"""Starting the terminal chat (SPEC R1–R5), shared by ``hermes`` / ``hermes chat`` of the typer
app and by the direct chat path (``chat_fast_path``).

:func:`start_chat` checks the model configuration, changes directory (``--in``), opens the
store (or starts degraded, recording nothing), resolves what to resume, prints the recap and runs
the REPL. The rules themselves live in ``hermes_core.chat`` (resume resolution, crumbs, recap).
Start-up time is a budget: this module imports neither typer nor the other commands' modules.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from hermes_core.terminal_text import terminal_safe

from .context import CliContext
from .errors import STORE_UNAVAILABLE, UserError

if TYPE_CHECKING:
    from hermes_hookspecs import ModelProvider, ModelSettings, Session

    from hermes_core.chat.conversation import Conversation
    from hermes_core.chat.output import ChatConsole
    from hermes_core.chat.repl import ChatRepl
    from hermes_core.chat.resume import ResumeRequest
    from hermes_core.store import SessionStore
    from hermes_core.store.protocol import Store


@dataclass(frozen=True, slots=True)
class ChatOptions:
    """The chat's command-line options."""

    continue_: str | None = None
    resume: str | None = None
    in_dir: Path | None = None
    no_restore_cwd: bool = False


def start_chat(context: CliContext, options: ChatOptions) -> None:
    """Everything from the options to the end of the chat."""
    from hermes_core.agent import load_model_settings, open_provider
    from hermes_core.chat.output import ChatConsole, notice_line
    from hermes_core.chat.provider import DeferredProvider
    from hermes_core.chat.resume import ResumeRequest
    from hermes_core.lifecycle.startup import arm_auto_clean

    config = context.config
    settings = load_model_settings(config, os.environ)  # NoModelConfigured: one line, exit 1
    # Opened at the first message: finding it loads every plugin, which the prompt does not need.
    provider = DeferredProvider(settings.provider, lambda: open_provider(context.host, settings))
    if options.in_dir is not None:
        _change_into(options.in_dir)
    console = ChatConsole()
    request = ResumeRequest(options.continue_, options.resume, options.in_dir)
    arm_auto_clean(context)
    with _open_store(context, console) as (store, recorded):
        if not recorded and request.wanted:
            notice_line(console, "Nothing can be resumed without the store; starting fresh.")
        conversation = _conversation(context, store, recorded, provider, settings)
        resumed = _resume(context, store, conversation, request, console) if recorded else None
        if resumed is not None and not (options.no_restore_cwd or options.in_dir is not None):
            from hermes_core.chat.resume import restore_workspace

            line = restore_workspace(resumed)
            if line is not None:
                notice_line(console, line, "ansicyan")
        _banner(console, settings, resumed)
        if resumed is not None:
            _show_resumed(context, console, resumed)
        try:
            _repl(context, console, conversation, recorded).run()
        finally:
            _farewell(console, conversation, recorded)


def _change_into(directory: Path) -> None:
    target = directory.expanduser()
    try:
        os.chdir(target)
    except OSError as error:
        raise UserError(f"--in {directory}: {error.strerror or error}") from None


@contextlib.contextmanager
def _open_store(context: CliContext, console: ChatConsole) -> Iterator[tuple[Store, bool]]:
    """The home's store and True; when it cannot be opened (R5), a throw-away store in a
    private temporary directory, deleted at exit, and False: the chat works, records nothing."""
    from hermes_core.chat.output import notice_line
    from hermes_core.store import (
        SessionStore,
        StoreDamaged,
        StoreFull,
        StoreReadOnly,
        StoreUnavailable,
    )

    try:
        store = context.store
        store.require_writable()  # a chat writes every turn: a read-only store is no use
    except (StoreUnavailable, StoreFull, StoreReadOnly) as error:
        way_back = (
            "; 'hermes sessions repair' is the way back" if isinstance(error, StoreDamaged) else ""
        )
        notice_line(
            console,
            f"{STORE_UNAVAILABLE} — {error}. This chat is not recorded{way_back}.",
            "bold ansiyellow",
        )
    else:
        yield store, True
        return
    import tempfile  # only for a degraded start: start-up time is a budget

    with tempfile.TemporaryDirectory(prefix="hermes-unrecorded-") as scratch:
        store = SessionStore.open(Path(scratch))
        try:
            yield store, False
        finally:
            store.close()


def _conversation(
    context: CliContext,
    store: Store,
    recorded: bool,
    provider: ModelProvider,
    settings: ModelSettings,
) -> Conversation:
    from hermes_core.agent import TurnEngine
    from hermes_core.chat.conversation import Conversation
    from hermes_core.chat.crumbs import CrumbJar, terminal_key

    # The engine still types its store as the SQLite SessionStore (it passes token counts to
    # append_message, which the Store protocol does not declare yet): see the merge note.
    engine = TurnEngine(cast("SessionStore", store), provider, settings)
    crumbs, terminal = None, None
    if recorded and context.config["session.terminal_continue"]:
        crumbs, terminal = CrumbJar(context.home), terminal_key(os.environ)
    return Conversation(store, engine, model=settings.model, crumbs=crumbs, terminal=terminal)


def _resume(
    context: CliContext,
    store: Store,
    conversation: Conversation,
    request: ResumeRequest,
    console: ChatConsole,
) -> Session | None:
    from hermes_core.chat.crumbs import CrumbJar, terminal_key
    from hermes_core.chat.output import notice_line
    from hermes_core.chat.resume import resolve_resume

    if not request.wanted:
        return None
    crumbs = CrumbJar(context.home) if context.config["session.terminal_continue"] else None
    choice = resolve_resume(store, request, crumbs=crumbs, terminal=terminal_key(os.environ))
    session_id = choice.session_id
    if choice.import_from is not None:
        session_id = _import_foreign(context, store, choice.import_from)
    if session_id is None:
        notice_line(console, f"Nothing to continue ({choice.how}); starting a new session.")
        return None
    return conversation.attach(session_id)


def _import_foreign(context: CliContext, store: Store, name: str) -> str:
    """``--resume @claude``: the import picker over that tool's logs, then the import."""
    from hermes_core.chat.resume import check_importer
    from hermes_core.importing import FileStatus, ImportRun

    from .import_commands import pick_foreign_logs
    from .picker import is_interactive

    importers = context.host.importers()
    check_importer(importers, name, os.environ)
    if not is_interactive():
        raise UserError(f"--resume @{name} needs a terminal to pick a conversation")
    chosen = pick_foreign_logs(importers, name, multi=False)
    if not chosen:
        import typer

        raise typer.Exit(1)
    log = chosen[0]
    outcome = ImportRun(store).import_file(log.candidate.path, log.importer)
    if outcome.session_id is None or outcome.status in (
        FileStatus.UNREADABLE,
        FileStatus.UNRECOGNISED,
        FileStatus.NO_CONVERSATION,
    ):
        raise UserError(f"{log.candidate.path}: {outcome.detail or 'no conversation to resume'}")
    label = outcome.label or name
    verb = "Imported" if outcome.status is FileStatus.IMPORTED else "Found"
    print(terminal_safe(f"✓ {verb} the {label} conversation as {outcome.session_id}"), flush=True)
    return outcome.session_id


def _banner(console: ChatConsole, settings: ModelSettings, resumed: Session | None) -> None:
    from hermes_core.chat.output import notice_line

    model = settings.model or "the default model"
    where = f" at {settings.base_url}" if settings.base_url else ""
    notice_line(console, f"Hermes chat — {model}{where}. /help lists commands, Ctrl-D ends.")


def _show_resumed(context: CliContext, console: ChatConsole, session: Session) -> None:
    from hermes_core.chat.output import notice_line
    from hermes_core.chat.recap import minimal_notice, recap_of_session, recap_panel

    if context.config["display.resume_display"] == "minimal":
        notice_line(console, minimal_notice(session), "")
        return
    recap = recap_of_session(context.store, session.id)
    console.show(recap_panel(session, recap, shutil.get_terminal_size().columns))


def _repl(
    context: CliContext, console: ChatConsole, conversation: Conversation, recorded: bool
) -> ChatRepl:
    from hermes_core.chat.commands import SlashContext
    from hermes_core.chat.output import StreamPrinter
    from hermes_core.chat.repl import ChatRepl

    def pick_session(title: str) -> str | None:
        from .picker import is_interactive, pick
        from .search_commands import browse_source

        if not is_interactive():
            raise UserError("the session picker needs a terminal; give a name: /resume NAME")
        chosen = pick(
            browse_source(context), title=title, header=("Title", "Last Active", "Src", "Preview")
        )
        return chosen[0] if chosen else None

    def titles() -> list[str]:
        if not recorded:
            return []
        return [s.title for s in conversation.store.list_sessions(limit=200) if s.title]

    slash = SlashContext(
        conversation=conversation,
        console=console,
        home=context.home,
        pick_session=pick_session,
        show_resumed=lambda session: _show_resumed(context, console, session),
        listener=lambda: StreamPrinter(console),
        recorded=recorded,
        config=context.config,
    )
    return ChatRepl(conversation, console, context.home, slash, titles=titles)


def _farewell(console: ChatConsole, conversation: Conversation, recorded: bool) -> None:
    from hermes_core.chat.output import notice_line

    if conversation.handed_off:
        return  # the session goes on on a platform: not ended, the crumb still points at it
    ended = conversation.end("user_exit")
    if not recorded:
        notice_line(console, "This chat was not recorded (the session store is unavailable).")
        return
    if ended is None:
        notice_line(console, "No message was sent; no session was recorded.")
        return
    notice_line(console, f"Session {ended.id} ended.", "")
    notice_line(console, f"Resume it with:  hermes --resume {ended.id}", "")
