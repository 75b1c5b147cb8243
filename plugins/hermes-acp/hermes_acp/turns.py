"""One turn as the editor sees it: the prompt's content blocks as the user's text, and what
the turn engine reports while it runs as ``session/update`` notifications, in order.

The engine runs on a worker thread; :class:`UpdateQueue` is its listener and hands each
update to the event loop, where :meth:`UpdateQueue.send_all` writes them to the editor. The
prompt's answer is sent only after the last of them, so the editor never sees ``end_turn``
before the text it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)
from hermes_hookspecs import ToolCall

from hermes_core.agent import TurnListener

Update = (
    AgentMessageChunk | AgentThoughtChunk | UserMessageChunk | ToolCallStart | ToolCallProgress
)
"""The ``session/update`` payloads this agent sends."""
Send = Callable[[Update], Awaitable[None]]


def prompt_text(blocks: Sequence[Any]) -> str:
    """The user's text of a prompt: its text blocks, with a line for each linked or embedded
    resource (the embedded text included). Other blocks (images, audio: not advertised) are
    named, not read."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f"{resource.uri}:\n```\n{resource.text}\n```")
            else:
                parts.append(f"[{resource.uri}]")
        else:
            parts.append(f"[{getattr(block, 'type', 'unknown')} content, not read]")
    return "\n\n".join(part for part in parts if part)


def tool_call_title(call: ToolCall) -> str:
    """How the editor labels a tool call: its name and arguments."""
    arguments = call.arguments if len(call.arguments) <= 200 else call.arguments[:199] + "…"
    return f"{call.name} {arguments}".strip()


class UpdateQueue(TurnListener):
    """The turn's listener: queues one update per piece of the answer (from the worker
    thread) for the event loop to send."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[Update | None] = asyncio.Queue()

    def _put(self, update: Update | None) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, update)

    def on_text(self, delta: str) -> None:
        if delta:
            self._put(update_agent_message_text(delta))

    def on_reasoning(self, delta: str) -> None:
        if delta:
            self._put(update_agent_thought_text(delta))

    def on_tool_call(self, call: ToolCall) -> None:
        self._put(
            start_tool_call(
                call.id or call.name, tool_call_title(call), kind="other", status="in_progress"
            )
        )

    def on_tool_result(self, call: ToolCall, output: str) -> None:
        self._put(
            update_tool_call(
                call.id or call.name,
                status="completed",
                content=[tool_content(text_block(output))],
            )
        )

    def finish(self) -> None:
        """No more updates (called once the turn is over, from any thread)."""
        self._put(None)

    async def send_all(self, send: Send) -> None:
        """Send every update until :meth:`finish`; an editor that went away stops the sending,
        never the turn (what it says is stored all the same)."""
        sending = True
        while (update := await self._queue.get()) is not None:
            if not sending:
                continue
            try:
                await send(update)
            except (ConnectionError, OSError):
                sending = False
