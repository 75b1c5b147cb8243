"""How the chat writes to the terminal with rich: streamed answers, tool activity, notices.

:class:`StreamPrinter` is the turn listener the chat hands to the turn engine; the engine calls
it from the thread that runs the turn while the main thread waits for Ctrl-C.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING

from hermes_core.agent.listener import TurnListener

if TYPE_CHECKING:
    from hermes_hookspecs import Session, TokenUsage, ToolCall
    from rich.console import Console

TOOL_ARGUMENT_CHARS = 80
TOOL_OUTPUT_CHARS = 100


def make_console() -> Console:
    """The chat's console: no markup or highlighting in what models and people write."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, emoji=False)


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

    def __init__(self, console: Console) -> None:
        self.console = console
        self._lock = threading.Lock()
        self._mid_line = False

    def _text(self, text: str, style: str | None = None) -> None:
        self.console.print(text, end="", style=style, markup=False, highlight=False)
        self._mid_line = not text.endswith("\n")

    def _line(self, text: str, style: str | None = None) -> None:
        with self._lock:
            if self._mid_line:
                self.console.print()
                self._mid_line = False
            self.console.print(text, style=style, markup=False, highlight=False)

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


def error_line(console: Console, message: str) -> None:
    """A failure the person can act on, as one line."""
    console.print(f"✗ {message}", style="red", markup=False, highlight=False)


def notice_line(console: Console, message: str, style: str = "dim") -> None:
    """A plain informational line."""
    console.print(message, style=style, markup=False, highlight=False)
