"""What a turn reports while it runs (:class:`TurnListener`) and when it ends (:class:`TurnResult`)."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_hookspecs import Session, TokenUsage, ToolCall


class TurnListener:
    """Callbacks for a caller that shows a turn as it happens (the chat prints, the gateway
    sends). Every method does nothing here: subclass and override the ones you need. They are
    called on the thread that runs the turn."""

    def on_user_turn(self, session_id: str) -> None:
        """The user's turn is committed to the store in ``session_id`` (the gateway
        acknowledges the platform's message at this moment, not before)."""

    def on_text(self, delta: str) -> None:
        """A piece of the answer's text arrived."""

    def on_reasoning(self, delta: str) -> None:
        """A piece of the model's visible reasoning arrived."""

    def on_tool_call(self, call: ToolCall) -> None:
        """The model asked for a tool call (it is stored; it runs next)."""

    def on_tool_result(self, call: ToolCall, output: str) -> None:
        """A tool call finished; ``output`` is what the model gets back (and what is stored)."""

    def on_usage(self, usage: TokenUsage) -> None:
        """One model call reported its token usage (recorded on the session)."""

    def on_compressed(self, old: Session, new: Session) -> None:
        """The conversation continues in a compression continuation ``new`` of ``old``."""


@dataclass(frozen=True, slots=True)
class TurnResult:
    """How a turn ended."""

    session_id: str
    """The session the turn ended in: a compression continuation's id when it compressed."""
    text: str
    """The final assistant text (of the last model call)."""
    tool_calls: tuple[ToolCall, ...]
    """Every tool call the model made during the turn, in order."""
    usage: TokenUsage
    """Token usage summed over the turn's model calls."""
    error: str | None = None
    """The one-line failure when a model call failed (everything before it is stored)."""
    interrupted: bool = False
    """True when the turn was cancelled; the partial text is stored."""
