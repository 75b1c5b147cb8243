"""From stored messages to what the model sees, and how big that is.

Tokens are estimated, not counted: one token per :data:`CHARS_PER_TOKEN` characters of
content, tool-call arguments and reasoning. That is close enough for deciding when to compress
(English text averages about four characters per token) and needs no tokenizer per model.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hermes_hookspecs import Message

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
"""Added per message for the role and framing every chat format carries."""
MISSING_RESULT = "(no result: the turn ended before this tool call finished)"
"""Sent (not stored) for a tool call whose result was never stored (a kill mid-turn)."""


def estimate_tokens(text: str) -> int:
    """The estimated token count of ``text``."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_message_tokens(message: Message) -> int:
    """The estimated tokens a stored message takes in the model's input."""
    size = len(message.content) + sum(len(c.name) + len(c.arguments) for c in message.tool_calls)
    return MESSAGE_OVERHEAD_TOKENS + (size + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_history_tokens(messages: Iterable[Message]) -> int:
    """The estimated tokens of a stored history."""
    return sum(estimate_message_tokens(message) for message in messages)


def system_prompt_with_context(system_prompt: str | None, history: Sequence[Message]) -> str | None:
    """The system prompt sent: the configured one, followed by the stored ``system`` messages
    (a compression summary seeds a continuation as one)."""
    parts = [system_prompt] if system_prompt else []
    parts.extend(message.content for message in history if message.role == "system")
    return "\n\n".join(parts) if parts else None


def conversation_for_model(history: Sequence[Message]) -> tuple[Message, ...]:
    """The stored history as the model input: no ``system`` messages (they join the system
    prompt), a tool result only after the call it answers, and a stand-in result for every
    call whose result was never stored, so an interrupted turn can always be continued."""
    sent: list[Message] = []
    pending: dict[str, str] = {}  # call id -> tool name, awaiting its result

    def close_pending() -> None:
        for call_id, name in pending.items():
            sent.append(
                Message(role="tool", content=MISSING_RESULT, tool_call_id=call_id, tool_name=name)
            )
        pending.clear()

    for message in history:
        if message.role == "system":
            continue
        if message.role == "tool":
            if message.tool_call_id in pending:
                del pending[message.tool_call_id]
                sent.append(message)
            continue  # an answer to no call the model made: the endpoint would refuse it
        close_pending()
        sent.append(message)
        if message.role == "assistant":
            pending = {c.id: c.name for c in message.tool_calls if c.id}
    close_pending()
    return tuple(sent)
