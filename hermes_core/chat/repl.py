"""The chat loop on prompt_toolkit: read a line, run a slash command or a turn, repeat.

Input: a history file in ``$HERMES_HOME`` (:data:`HISTORY_FILE_NAME`), multi-line paste
(bracketed paste keeps newlines; Alt-Enter or Esc Enter adds a line), completion of slash
commands and, after ``/resume`` and ``/title``, of session titles. Without a terminal on
standard input the loop reads plain lines (scripts, pipes).

A turn runs on a worker thread while the main thread waits, so Ctrl-C during an answer sets
the engine's ``cancel`` event: the turn stops, what was said so far is kept, and the prompt
comes back. Ctrl-D or ``/exit`` ends the chat.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import UserFacingError

from .commands import COMMANDS, SlashContext, parse_slash, run_slash
from .output import ChatConsole, StreamPrinter, error_line, notice_line

if TYPE_CHECKING:
    from prompt_toolkit.completion import CompleteEvent, Completion
    from prompt_toolkit.document import Document

    from hermes_core.agent import TurnResult

    from .conversation import Conversation

HISTORY_FILE_NAME = "chat_history"
PROMPT = "› "
TITLE_COMMANDS = ("resume", "title")
"""Commands whose argument completes to session titles."""


def slash_completions(text: str, titles: Callable[[], Iterable[str]]) -> list[tuple[str, int]]:
    """What to offer for the text before the cursor: ``(completion, start offset)`` pairs,
    the offset being where the replaced text begins (negative, as prompt_toolkit wants)."""
    if not text.startswith("/"):
        return []
    name, space, argument = text[1:].partition(" ")
    if not space:
        return [(f"/{command}", -len(text)) for command in COMMANDS if command.startswith(name)]
    if name not in TITLE_COMMANDS:
        return []
    typed = argument.casefold()
    return [(title, -len(argument)) for title in titles() if title.casefold().startswith(typed)]


def _completer(titles: Callable[[], Iterable[str]]) -> Any:
    from prompt_toolkit.completion import Completer, Completion

    from hermes_core.terminal_text import terminal_line

    class SlashCompleter(Completer):
        def get_completions(
            self, document: Document, complete_event: CompleteEvent
        ) -> Iterator[Completion]:
            # A title is inserted as stored (so it resolves) but listed as it may be shown.
            for text, start in slash_completions(document.text_before_cursor, titles):
                yield Completion(text, start_position=start, display=terminal_line(text))

    return SlashCompleter()


def _key_bindings() -> Any:
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    return bindings


@dataclass
class ChatRepl:
    """One interactive chat over a :class:`Conversation`."""

    conversation: Conversation
    console: ChatConsole
    home: Path
    slash: SlashContext
    titles: Callable[[], Iterable[str]] = lambda: ()
    interactive: bool = field(default_factory=lambda: sys.stdin.isatty())

    def _reader(self) -> Callable[[], str]:
        if not self.interactive:

            def plain() -> str:
                line = sys.stdin.readline()
                if not line:
                    raise EOFError
                return line.rstrip("\n")

            return plain
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory

        history = self.home / HISTORY_FILE_NAME
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            history.touch(mode=0o600, exist_ok=True)
        except OSError:
            pass  # no history file then; the chat still works
        session: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)) if history.exists() else None,
            completer=_completer(self.titles),
            complete_while_typing=True,
            key_bindings=_key_bindings(),
            enable_history_search=False,
        )

        def warm_up_once(_: object) -> None:
            session.app.after_render -= warm_up_once
            self.console.warm_up()  # rich loads while the person types, not before the prompt

        session.app.after_render += warm_up_once
        return lambda: session.prompt(PROMPT)

    def run(self) -> None:
        """Read and answer until Ctrl-D or ``/exit``."""
        read = self._reader()
        while True:
            try:
                line = read()
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line
            except EOFError:
                return
            if not line.strip():
                continue
            if self.handle(line):
                return

    def handle(self, line: str) -> bool:
        """One line of input; True when the chat should end."""
        parsed = parse_slash(line)
        if parsed is not None:
            try:
                return run_slash(self.slash, *parsed)
            except KeyboardInterrupt:
                notice_line(self.console, f"⏹ /{parsed[0]} stopped.", "ansiyellow")
            except Exception as error:
                if isinstance(error, (UserFacingError, *_store_errors())):
                    error_line(self.console, str(error))
                    return False
                # a bug must not end the conversation
                if os.environ.get("HERMES_DEBUG"):
                    raise
                error_line(self.console, f"/{parsed[0]} failed: {type(error).__name__}: {error}")
            return False
        text = line[1:] if line.lstrip().startswith("//") else line
        self.answer(text)
        return False

    def answer(self, text: str) -> TurnResult | None:
        """Run one turn on a worker thread; Ctrl-C stops it."""
        cancel = threading.Event()
        printer = StreamPrinter(self.console)
        outcome: dict[str, Any] = {}
        finished = threading.Event()

        def work() -> None:
            try:
                outcome["result"] = self.conversation.send(text, listener=printer, cancel=cancel)
            except BaseException as error:  # reported on the main thread
                outcome["error"] = error
            finally:
                finished.set()

        worker = threading.Thread(target=work, name="hermes-turn", daemon=True)
        with _ctrl_c_sets(cancel):
            worker.start()
            # An event, not Thread.join: a Ctrl-C inside join can leave the thread looking
            # finished while it still runs.
            while not finished.is_set():
                finished.wait(0.1)
        printer.finish()
        if cancel.is_set():
            notice_line(self.console, "⏹ Stopped. What was said so far is kept.", "ansiyellow")
        failure = outcome.get("error")
        if failure is not None:
            if os.environ.get("HERMES_DEBUG"):
                raise failure
            if isinstance(failure, (UserFacingError, *_store_errors())):
                error_line(self.console, str(failure))
            else:
                error_line(self.console, f"the turn failed: {type(failure).__name__}: {failure}")
            return None
        result: TurnResult = outcome["result"]
        if result.error:
            error_line(self.console, result.error)
        return result


def _store_errors() -> tuple[type[Exception], ...]:
    from hermes_core.store import StoreError

    return (StoreError,)


@contextmanager
def _ctrl_c_sets(cancel: threading.Event) -> Iterator[None]:
    """While a turn runs, Ctrl-C sets ``cancel`` instead of raising ``KeyboardInterrupt``.

    A ``KeyboardInterrupt`` raised inside a threading primitive (between a lock's acquire
    and the block that releases it) can leave the lock held: the turn's thread then waits
    forever to say it finished, and the chat hangs after the Ctrl-C. A handler that only
    sets an event raises nothing. Signal handlers belong to the main thread; elsewhere
    nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda _signum, _frame: cancel.set())
    try:
        yield
    finally:
        signal.signal(
            signal.SIGINT, previous if previous is not None else signal.default_int_handler
        )
