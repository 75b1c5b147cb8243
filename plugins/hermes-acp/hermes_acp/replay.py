"""A stored history as the ``session/update`` notifications ``session/load`` replays.

Any session can be replayed, whatever its origin (a chat, a platform, an import): the user's
turns as ``user_message_chunk``, the answers as ``agent_message_chunk`` (their reasoning as
``agent_thought_chunk`` first), tool calls as completed ``tool_call`` entries carrying their
results. System messages (a compression summary, an imported system prompt) are not part of
the conversation shown in an editor and are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from hermes_hookspecs import Message

from .turns import Update, tool_call_title


def replay_updates(messages: Iterable[Message]) -> Iterator[Update]:
    """The updates that show ``messages`` (oldest first) in an editor."""
    for message in messages:
        if message.role == "user":
            if message.content:
                yield update_user_message_text(message.content)
        elif message.role == "assistant":
            if message.reasoning:
                yield update_agent_thought_text(message.reasoning)
            if message.content:
                yield update_agent_message_text(message.content)
            for index, call in enumerate(message.tool_calls):
                call_id = call.id or f"{message.id}-{index}"
                yield start_tool_call(
                    call_id, tool_call_title(call), kind="other", status="completed"
                )
        elif message.role == "tool" and message.tool_call_id:
            yield update_tool_call(
                message.tool_call_id,
                status="completed",
                content=[tool_content(text_block(message.content))],
            )
