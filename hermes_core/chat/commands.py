"""Slash commands inside the chat (SPEC R4, S4, G7): ``/title``, ``/new``, ``/compress``,
``/resume``, ``/sessions``, ``/branch``, ``/save``, ``/handoff``, ``/help``, ``/exit``.

Each command is a function of a :class:`SlashContext` and its argument text; failures the
person can act on raise ``UserFacingError`` and are printed by the REPL as one line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_hookspecs import Session

from .conversation import ChatError, Conversation
from .output import ChatConsole, notice_line

if TYPE_CHECKING:
    from hermes_core.agent import TurnListener
    from hermes_core.config import Config


@dataclass(slots=True)
class SlashContext:
    """What a slash command may use."""

    conversation: Conversation
    console: ChatConsole
    home: Path
    pick_session: Callable[[str], str | None]
    """Runs the session picker with a title; the chosen id, None when cancelled."""
    show_resumed: Callable[[Session], None]
    """Prints the recap (or the one-line notice) of a session just resumed."""
    listener: Callable[[], TurnListener]
    """A fresh listener for a model call a command makes (``/compress``)."""
    recorded: bool = True
    """False in a degraded start: nothing is stored, so there is nothing to resume or save."""
    config: Config | None = None
    """The configuration (``/handoff`` reads ``gateway.platforms``); None in bare tests."""


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One command: its name, argument synopsis, help line and action."""

    name: str
    arguments: str
    help: str
    run: Callable[[SlashContext, str], bool]
    """Returns True when the chat should end."""


def _say(context: SlashContext, text: str, style: str = "dim") -> None:
    notice_line(context.console, text, style)


def _needs_store(context: SlashContext, what: str) -> None:
    if not context.recorded:
        raise ChatError(f"{what} needs the session store, which is unavailable")


def _title(context: SlashContext, argument: str) -> bool:
    conversation = context.conversation
    if not argument:
        current = conversation.title()
        _say(context, f"Title: {current}" if current else "This session has no title yet.", "")
        return False
    stored = conversation.set_title(argument)
    if conversation.started:
        _say(context, f"✓ Title set: {stored}", "ansigreen")
    else:
        _say(context, f"✓ Title queued: {stored} (applied when the session starts)", "ansigreen")
    return False


def _new(context: SlashContext, argument: str) -> bool:
    old = context.conversation.session_id if context.conversation.started else None
    context.conversation.new(argument or None)
    ended = f" (ended {old})" if old else ""
    named = f" titled “{argument}”" if argument else ""
    _say(context, f"✓ New session{named}{ended}.", "ansigreen")
    return False


def _compress(context: SlashContext, argument: str) -> bool:
    _say(context, "Compressing the conversation…")
    continuation = context.conversation.compress(context.listener())
    title = continuation.title or "(untitled)"
    _say(context, f"✓ Compressed into {continuation.id}: {title}", "ansigreen")
    return False


def _resume(context: SlashContext, argument: str) -> bool:
    _needs_store(context, "/resume")
    reference = argument or context.pick_session("Resume a session — type to search")
    if not reference:
        _say(context, "Nothing chosen.")
        return False
    session = context.conversation.resume(reference)
    context.show_resumed(session)
    return False


def _sessions(context: SlashContext, argument: str) -> bool:
    _needs_store(context, "/sessions")
    chosen = context.pick_session("Sessions — type to search, Enter resumes")
    if not chosen:
        _say(context, "Nothing chosen.")
        return False
    session = context.conversation.resume(chosen)
    context.show_resumed(session)
    return False


def _branch(context: SlashContext, argument: str) -> bool:
    parent = context.conversation.session_id
    child = context.conversation.branch()
    _say(context, f"✓ Branched {parent} into {child.id}; you are now in the branch.", "ansigreen")
    return False


def _save(context: SlashContext, argument: str) -> bool:
    from .snapshot import save_snapshot

    _needs_store(context, "/save")
    conversation = context.conversation
    if not conversation.started:
        raise ChatError("nothing to save yet: send a message first")
    from hermes_core.files import OutputError

    try:
        path = save_snapshot(conversation.store, context.home, conversation.session_id)
    except OutputError as error:
        raise ChatError(str(error)) from None
    _say(context, f"✓ Saved a snapshot to {path}", "ansigreen")
    return False


def _handoff(context: SlashContext, argument: str) -> bool:
    from .handoff import hand_off

    return hand_off(context, argument)


def _help(context: SlashContext, argument: str) -> bool:
    width = max(len(f"/{c.name} {c.arguments}".rstrip()) for c in COMMANDS.values())
    for command in COMMANDS.values():
        synopsis = f"/{command.name} {command.arguments}".rstrip()
        _say(context, f"  {synopsis.ljust(width)}  {command.help}", "")
    _say(context, "  Enter sends · Alt-Enter (or Esc Enter) adds a line · Ctrl-C stops an answer")
    return False


def _exit(context: SlashContext, argument: str) -> bool:
    return True


COMMANDS: dict[str, SlashCommand] = {
    command.name: command
    for command in (
        SlashCommand("title", "[NAME]", "show the title, or set it to NAME", _title),
        SlashCommand("new", "[NAME]", "end this session and start a new one (titled NAME)", _new),
        SlashCommand("compress", "", "continue in a new session seeded with a summary", _compress),
        SlashCommand("resume", "[NAME]", "switch to a session by id, prefix or title", _resume),
        SlashCommand("sessions", "", "pick a recent session to switch to", _sessions),
        SlashCommand("branch", "", "continue in a copy of this conversation", _branch),
        SlashCommand("save", "", "write a JSON snapshot to $HERMES_HOME/sessions/saved/", _save),
        SlashCommand(
            "handoff", "PLATFORM", "move this session to a gateway platform and exit", _handoff
        ),
        SlashCommand("help", "", "list these commands", _help),
        SlashCommand("exit", "", "end the chat (also Ctrl-D)", _exit),
    )
}
ALIASES = {"quit": "exit", "q": "exit", "?": "help"}


def parse_slash(line: str) -> tuple[str, str] | None:
    """``("title", "my project")`` for ``/title my project``; None when ``line`` is not a
    slash command (it does not start with ``/``, or starts with ``//``: the way to send a
    message that begins with a slash)."""
    text = line.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, argument = text[1:].partition(" ")
    return name.lower(), argument.strip()


def run_slash(context: SlashContext, name: str, argument: str) -> bool:
    """Run command ``name``; True when the chat should end. An unknown name is one line."""
    command = COMMANDS.get(ALIASES.get(name, name))
    if command is None:
        raise ChatError(f"unknown command /{name} (type /help for the list)")
    return command.run(context, argument)
