"""Compression (SPEC S6): the model summarises the conversation and a continuation session,
seeded with that summary, carries it on; the parent keeps every message.

The summary is stored as the continuation's first message with role ``system``, starting with
:data:`SUMMARY_HEADER`; the engine sends stored ``system`` messages after the system prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_hookspecs import Message, ModelRequest

from .history import CHARS_PER_TOKEN

COMPRESSION_PROMPT = (
    "You are compressing a conversation between a user and an AI assistant so it can go on "
    "in a fresh context. Write a summary the assistant will read instead of the transcript. "
    "Keep: the user's goals and preferences, decisions taken and why, facts, names, file "
    "paths, commands and numbers that matter, what was tried and its outcome, questions still "
    "open and the next step. Drop small talk and anything superseded. Write in the "
    "conversation's language, as plain text with short paragraphs or bullet points, at most "
    "about 400 words. Do not address the user and do not add anything that was not said."
)
"""The system prompt of the summary request; the transcript follows as the user message."""

SUMMARY_HEADER = "Summary of the conversation so far (compressed from session {parent}):"
"""The first line of the seeded summary message."""

COMPRESSION_THRESHOLD = 0.8
"""Automatic compression starts when the stored history is estimated above this share of
``model.context_tokens``: the rest is left for the answer and the tools' definitions."""

TRANSCRIPT_SHARE = 0.6
"""At most this share of ``model.context_tokens`` goes into the summary request (the newest
messages are kept; an earlier summary is always included)."""

TOOL_OUTPUT_CHARS = 1000
"""A tool output is cut to this many characters in the transcript to summarise."""


def transcript(history: Sequence[Message], context_tokens: int | None) -> str:
    """The history as plain text for the summary request, newest kept within the budget."""
    earlier = [m.content for m in history if m.role == "system"]
    lines = []
    for message in history:
        if message.role == "system":
            continue
        if message.role == "tool":
            output = message.content
            if len(output) > TOOL_OUTPUT_CHARS:
                output = output[:TOOL_OUTPUT_CHARS] + " …"
            lines.append(f"[tool result {message.tool_name or ''}] {output}")
            continue
        line = f"{message.role}: {message.content}"
        for call in message.tool_calls:
            line += f"\n[tool call {call.name}] {call.arguments}"
        lines.append(line)
    budget = None if context_tokens is None else int(context_tokens * TRANSCRIPT_SHARE)
    head = "\n\n".join(earlier)
    if budget is not None:
        room = budget * CHARS_PER_TOKEN - len(head)
        kept: list[str] = []
        for line in reversed(lines):
            if len(line) + 2 > room:
                if not kept:  # the newest message always goes in, its end at least
                    kept.append("… " + line[-max(room, 400) :])
                break
            room -= len(line) + 2
            kept.append(line)
        dropped = len(lines) - len(kept)
        lines = list(reversed(kept))
        if dropped:
            lines.insert(0, f"[{dropped} earlier messages left out]")
    body = "\n\n".join(lines)
    return f"{head}\n\n{body}" if head else body


def summary_request(history: Sequence[Message], context_tokens: int | None) -> ModelRequest:
    """The request asking the model for a summary of ``history``."""
    text = "Summarise this conversation:\n\n" + transcript(history, context_tokens)
    return ModelRequest(
        messages=(Message(role="user", content=text),),
        system_prompt=COMPRESSION_PROMPT,
        stream=False,  # only the whole summary is used
    )


def summary_message(parent_id: str, summary: str, timestamp: float) -> Message:
    """The message that seeds a continuation."""
    header = SUMMARY_HEADER.format(parent=parent_id)
    return Message(role="system", content=f"{header}\n{summary.strip()}", timestamp=timestamp)
