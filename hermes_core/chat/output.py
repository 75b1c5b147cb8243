"""How the chat writes to the terminal: notices and errors, streamed answers, tool activity.

:class:`ChatConsole` is the chat's one output. Its one-line notices and errors (and the recap
panel, :mod:`.recap`) are printed with prompt_toolkit, which the prompt loads anyway, so nothing
shown before the first prompt imports rich — about 20 ms of start-up, and ``hermes -c`` has a
budget (issue 11). Streamed answers and the waiting spinner use rich, through a console made on
first use; :meth:`ChatConsole.warm_up` makes it on a background thread once the prompt is on
screen, while the person types.

:class:`StreamPrinter` is the turn listener the chat hands to the turn engine; the engine calls
it from the thread that runs the turn while the main thread waits for Ctrl-C. Styles are
prompt_toolkit style strings for lines (``"dim"``, ``"bold ansiyellow"``) and rich style names
inside a streamed answer.

What a model streams, what tools return and the notices quoting titles or errors are shown
through :func:`~hermes_core.terminal_text.terminal_safe` (an escape sequence prints as ``^[…``),
never as rich markup; a sequence cut across two streamed pieces is shown the same.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING

from hermes_core.agent.listener import TurnListener
from hermes_core.terminal_text import terminal_safe

if TYPE_CHECKING:
    from hermes_hookspecs import Session, TokenUsage, ToolCall
    from prompt_toolkit.formatted_text import AnyFormattedText
    from rich.console import Console

TOOL_ARGUMENT_CHARS = 80
TOOL_OUTPUT_CHARS = 100


def make_console() -> Console:
    """A rich console for the chat: no markup or highlighting in what models and people write."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, emoji=False)


class ChatConsole:
    """The chat's terminal output: lines with prompt_toolkit, streamed answers with rich."""

    def __init__(self) -> None:
        self._rich: Console | None = None
        self._making = threading.Lock()

    @property
    def rich(self) -> Console:
        """The rich console (made on first use, at most once)."""
        with self._making:
            if self._rich is None:
                self._rich = make_console()
            return self._rich

    def warm_up(self) -> None:
        """Make the rich console on a background thread (the first answer then starts at once)."""
        if self._rich is None:
            threading.Thread(target=lambda: self.rich, name="hermes-rich", daemon=True).start()

    def show(self, text: AnyFormattedText) -> None:
        """Print prompt_toolkit formatted text; plain text, one ``\\n`` per line, when the
        output is not a terminal (a pipe, a file)."""
        if sys.stdout.isatty():
            from prompt_toolkit import print_formatted_text

            print_formatted_text(text)
            return
        from prompt_toolkit.formatted_text import to_plain_text

        print(to_plain_text(text), flush=True)

    def line(self, message: str, style: str = "") -> None:
        """One line of ``message`` in a prompt_toolkit ``style``, printed as it is written
        (its control characters shown as ``^[``…)."""
        message = terminal_safe(message)
        if not sys.stdout.isatty():
            print(message, flush=True)
            return
        from prompt_toolkit.formatted_text import FormattedText

        self.show(FormattedText([(style, message)]))


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe_call(call: ToolCall) -> str:
    """``session_search(query="deploy")`` shortened for one line."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError:
        shown = call.arguments
    else:
        if isinstance(arguments, dict):
            shown = ", ".join(
                f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items()
            )
        else:
            shown = call.arguments
    return f"{call.name}({_short(shown, TOOL_ARGUMENT_CHARS)})"


class StreamPrinter(TurnListener):
    """Prints one turn as it streams: the answer's text, then a line per tool call/result."""

    def __init__(self, console: ChatConsole) -> None:
        self.console = console.rich
        self._lock = threading.Lock()
        self._mid_line = False

    def _text(self, text: str, style: str | None = None) -> None:
        text = terminal_safe(text)
        self.console.print(text, end="", style=style, markup=False, highlight=False)
        self._mid_line = not text.endswith("\n")

    def _line(self, text: str, style: str | None = None) -> None:
        with self._lock:
            if self._mid_line:
                self.console.print()
                self._mid_line = False
            self.console.print(terminal_safe(text), style=style, markup=False, highlight=False)

    def finish(self) -> None:
        """End the answer's last line, if it is open."""
        with self._lock:
            if self._mid_line:
                self.console.print()
                self._mid_line = False

    # -- the turn listener -------------------------------------------------------------

    def on_text(self, delta: str) -> None:
        with self._lock:
            self._text(delta)

    def on_reasoning(self, delta: str) -> None:
        """Reasoning is stored by the engine, not shown."""

    def on_tool_call(self, call: ToolCall) -> None:
        self._line(f"⚙ {describe_call(call)}", style="cyan")

    def on_tool_result(self, call: ToolCall, output: str) -> None:
        self._line(f"  ↳ {_short(output, TOOL_OUTPUT_CHARS)}", style="dim")

    def on_usage(self, usage: TokenUsage) -> None:
        """Usage is recorded on the session by the engine; the chat shows it on request."""

    def on_compressed(self, old: Session, new: Session) -> None:
        name = f" “{new.title}”" if new.title else ""
        self._line(
            f"↻ The conversation was compressed into a continuation session {new.id}{name}.",
            style="yellow",
        )


def error_line(console: ChatConsole, message: str) -> None:
    """A failure the person can act on, as one line."""
    console.line(f"✗ {message}", "ansired")


def notice_line(console: ChatConsole, message: str, style: str = "dim") -> None:
    """A plain informational line (``style``: a prompt_toolkit style string)."""
    console.line(message, style)
