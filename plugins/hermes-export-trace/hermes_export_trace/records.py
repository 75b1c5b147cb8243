"""A Hermes session as Claude Code transcript records (the JSONL the HF trace viewer reads).

One record per chain entry, in order, linked by ``uuid``/``parentUuid`` into one unbroken
chain: ``user`` records for prompts and tool results, ``assistant`` records with **one content
block per record** (as Claude Code writes them; blocks of one reply share ``message.id``),
``system`` records for system messages. A tool call becomes a ``tool_use`` block and its output
a ``tool_result`` block in the next ``user`` records, with the same id. A title, when the session
has one, opens the file as a ``summary`` record.

Uuids and ids are derived from the session id and positions, so exporting the same session
twice gives the same file (re-uploads do not churn).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hermes_hookspecs import Message, SessionRecord, ToolCall

_NAMESPACE = uuid.UUID("8f0c6a53-2b1e-4d0e-9a3c-6d1b7f2e4a90")
Record = dict[str, Any]


def iso_timestamp(seconds: float) -> str:
    """POSIX seconds as ISO 8601 UTC with milliseconds and a ``Z`` (``2026-01-01T09:00:00.000Z``)."""
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        moment = datetime.fromtimestamp(0, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def tool_input(arguments: str) -> dict[str, Any]:
    """Tool-call arguments as the ``input`` object of a ``tool_use`` block.

    JSON objects pass through; anything else (other JSON, or text that is not JSON) is kept
    whole under ``arguments`` so nothing the model produced is lost.
    """
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):
        return {"arguments": arguments}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


@dataclass
class _ToolIds:
    """Keeps tool_use ids unique within a file and pairs each result with its call."""

    session_id: str
    emitted: set[str] = field(default_factory=set)
    pending: dict[str, str] = field(default_factory=dict)
    """Original call id (or a synthetic one) → emitted tool_use id, for calls without result."""

    def for_call(self, call: ToolCall, position: str) -> str:
        original = call.id or f"toolu_{uuid.uuid5(_NAMESPACE, self.session_id + position).hex[:24]}"
        emitted = original
        if emitted in self.emitted:
            emitted = f"{original}_{uuid.uuid5(_NAMESPACE, self.session_id + position).hex[:8]}"
        self.emitted.add(emitted)
        self.pending[original] = emitted
        return emitted

    def for_result(self, message: Message) -> str | None:
        """The tool_use id this output answers, or None for output with no call to pair."""
        if message.tool_call_id is not None:
            return self.pending.pop(message.tool_call_id, None)
        if self.pending:
            oldest = next(iter(self.pending))
            return self.pending.pop(oldest)
        return None


class _Chain:
    """Builds records with the shared envelope and links them into one chain."""

    def __init__(self, record: SessionRecord) -> None:
        session = record.session
        self.session_id = session.id
        self.envelope: Record = {"isSidechain": False, "userType": "external"}
        self.envelope["cwd"] = session.cwd or ""
        self.envelope["sessionId"] = session.id
        if session.git_branch:
            self.envelope["gitBranch"] = session.git_branch
        self.last_uuid: str | None = None
        self.clock = session.started_at
        self.count = 0

    def time_of(self, message: Message) -> str:
        # Messages without a time take the previous one's, so timestamps never go missing.
        if message.timestamp is not None:
            self.clock = message.timestamp
        return iso_timestamp(self.clock)

    def add(self, kind: str, stamp: str, body: Record) -> Record:
        record_uuid = str(uuid.uuid5(_NAMESPACE, f"{self.session_id}\x00{self.count}"))
        self.count += 1
        record: Record = {"parentUuid": self.last_uuid, **self.envelope, "type": kind}
        record.update(body)
        record["uuid"] = record_uuid
        record["timestamp"] = stamp
        self.last_uuid = record_uuid
        return record


def _assistant_records(
    chain: _Chain, tools: _ToolIds, message: Message, index: int, model: str
) -> Iterator[Record]:
    blocks: list[Record] = []
    if message.reasoning:
        blocks.append({"type": "thinking", "thinking": message.reasoning, "signature": ""})
    if message.content or not (message.tool_calls or message.reasoning):
        blocks.append({"type": "text", "text": message.content})
    for number, call in enumerate(message.tool_calls):
        call_id = tools.for_call(call, f"\x00{index}\x00{number}")
        blocks.append(
            {
                "type": "tool_use",
                "id": call_id,
                "name": call.name,
                "input": tool_input(call.arguments),
            }
        )
    message_key = f"{chain.session_id}\x00m{index}"
    message_id = f"msg_{uuid.uuid5(_NAMESPACE, message_key).hex[:24]}"
    stamp = chain.time_of(message)
    for position, block in enumerate(blocks):
        last = position == len(blocks) - 1
        stop_reason = None
        if last:
            stop_reason = "tool_use" if message.tool_calls else "end_turn"
        body: Record = {
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [block],
                "stop_reason": stop_reason,
                "stop_sequence": None,
            }
        }
        yield chain.add("assistant", stamp, body)


def _tool_records(chain: _Chain, tools: _ToolIds, message: Message) -> Iterator[Record]:
    stamp = chain.time_of(message)
    call_id = tools.for_result(message)
    if call_id is None:
        # Output with no call to answer: kept as a note, not as an unpaired tool_result.
        label = message.tool_name or "a tool"
        note = f"Output of {label} (no matching tool call):\n{message.content}"
        body: Record = {"isMeta": True, "message": {"role": "user", "content": note}}
        yield chain.add("user", stamp, body)
        return
    result: Record = {"type": "tool_result", "tool_use_id": call_id, "content": message.content}
    yield chain.add("user", stamp, {"message": {"role": "user", "content": [result]}})


def session_records(record: SessionRecord) -> Iterator[Record]:
    """Every record of ``record``'s transcript, in file order."""
    session = record.session
    chain = _Chain(record)
    tools = _ToolIds(session.id)
    model = session.model or "unknown"
    body: list[Record] = []
    for index, message in enumerate(record.messages):
        if message.role == "assistant":
            body.extend(_assistant_records(chain, tools, message, index, model))
        elif message.role == "tool":
            body.extend(_tool_records(chain, tools, message))
        elif message.role == "system":
            stamp = chain.time_of(message)
            fields: Record = {"subtype": "informational", "content": message.content}
            fields["level"] = "info"
            fields["isMeta"] = False
            body.append(chain.add("system", stamp, fields))
        else:
            stamp = chain.time_of(message)
            user_body: Record = {"message": {"role": "user", "content": message.content}}
            body.append(chain.add("user", stamp, user_body))
    if session.title:
        yield {"type": "summary", "summary": session.title, "leafUuid": chain.last_uuid}
    yield from body


_LINE_BREAKS_INSIDE_STRINGS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def jsonl_line(record: Record) -> bytes:
    """One complete JSONL line: compact JSON, UTF-8, exactly one ``\\n`` at its end.

    Characters some readers treat as line breaks (U+2028, U+2029, NEL) are escaped, and a
    lone surrogate becomes its ``\\udcxx`` escape, so a line never splits or fails to encode.
    """
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in _LINE_BREAKS_INSIDE_STRINGS.items():
        if raw in text:
            text = text.replace(raw, escaped)
    return text.encode("utf-8", errors="backslashreplace") + b"\n"
