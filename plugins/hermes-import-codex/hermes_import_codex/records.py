"""What single Codex CLI rollout records mean: their kind, text, images and tool names.

A rollout line is either an *envelope* (``{"timestamp", "type", "payload"}``, Sept 2025 on)
or, in the older *bare* format, the session header (``{"id", "timestamp", …}``) followed by
bare response items (``{"type": "message", …}``) and ``{"record_type": "state"}`` snapshots.
:func:`classify` turns both into one ``(kind, payload, timestamp)`` shape so the reader never
needs to know which era a line came from.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

ROLLOUT_NAME = re.compile(
    r"^rollout-(?:(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2})-)?"
    r"(?P<uuid>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
    r"\.jsonl$"
)
"""``rollout-2025-05-07T17-24-21-<uuid>.jsonl`` (the time part is absent in a few old files)."""

ENVELOPE_KINDS = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
    }
)
"""Top-level record types Codex writes; anything else is skipped and counted as unknown."""

RESPONSE_ITEM_KINDS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "image_generation_call",
        "tool_search_call",
        "tool_search_output",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "context_compaction",
        "agent_message",
        "additional_tools",
    }
)
"""Response-item payload types Codex writes (bare-era lines are response items too)."""

TOOL_NAME_BY_ITEM = {
    "local_shell_call": "shell",
    "web_search_call": "web_search",
    "image_generation_call": "image_generation",
    "tool_search_call": "tool_search",
}
"""Tool activity whose record carries no tool name of its own."""

NAMED_TOOL_ITEMS = frozenset({"function_call", "custom_tool_call"})

INJECTED_PREFIXES = (
    "<user_instructions>",
    "<environment_context>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<skills_instructions>",
    "<plugins_instructions>",
    "<apps_instructions>",
    "<environment>",
    "<environment-change>",
    "<app-context>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions for ",
)
"""Text the harness puts into user messages; the person never typed it."""

INJECTED_TAG = re.compile(r"^<(?P<tag>[A-Za-z_][\w -]*(?:instructions|context))>")
"""Tags of the same families that newer versions may add (``<foo_instructions>``…)."""

REQUEST_MARKER = "## My request for Codex:"
"""In 2025 rollouts the typed request follows this marker inside a wrapped user message."""

ENVIRONMENT_CWD = re.compile(r"<environment_context>.*?<cwd>(?P<cwd>[^<]+)</cwd>", re.DOTALL)

IMAGE_PLACEHOLDER = "[image]"


def file_identity(path: Path) -> tuple[str | None, float | None]:
    """The session uuid and the local start time encoded in a rollout file's name."""
    match = ROLLOUT_NAME.match(path.name)
    if not match:
        return None, None
    started = None
    stamp = match["stamp"]
    if stamp:
        try:  # local time, as Codex names its files
            started = datetime(
                int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10]),
                int(stamp[11:13]), int(stamp[14:16]), int(stamp[17:19]),
            ).timestamp()  # fmt: skip
        except (ValueError, OverflowError, OSError):
            started = None
    return match["uuid"].lower(), started


def parse_timestamp(value: Any) -> float | None:
    """POSIX seconds from an RFC 3339 string (``…Z``); None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    try:
        return parsed.timestamp()
    except (OverflowError, OSError):
        return None


def classify(record: dict[str, Any]) -> tuple[str, dict[str, Any], float | None] | None:
    """``(kind, payload, timestamp)`` of one decoded line, in either format.

    ``kind`` is a top-level type (``session_meta``, ``response_item``…, or an unknown string);
    None means the line is a bare-era state snapshot or a header-less oddity with nothing
    to read.
    """
    kind = record.get("type")
    payload = record.get("payload")
    if isinstance(kind, str) and "payload" in record:
        return (
            kind,
            payload if isinstance(payload, dict) else {},
            parse_timestamp(record.get("timestamp")),
        )
    if "record_type" in record:
        return None
    if isinstance(kind, str):
        return "response_item", record, None
    if isinstance(record.get("id"), str) and "timestamp" in record:
        return "session_meta", record, parse_timestamp(record.get("timestamp"))
    return None


def is_injected(text: str) -> bool:
    """True for harness-injected context (environment, instructions, AGENTS.md…)."""
    head = text.lstrip()
    if head.startswith(INJECTED_PREFIXES):
        return True
    return INJECTED_TAG.match(head) is not None


def typed_request(text: str) -> str:
    """The part of a wrapped user message the person typed (what follows
    :data:`REQUEST_MARKER`), with the files they mentioned (attached in the IDE, pasted
    pictures) listed after it; ``text`` itself when it is not wrapped."""
    before, marker, after = text.partition(REQUEST_MARKER)
    if not marker:
        return text
    request = after.strip()
    files = mentioned_files(before)
    if files:
        listed = "\n".join(f"- {file}" for file in files)
        request = f"{request}\n\nFiles mentioned:\n{listed}" if request else listed
    return request


FILES_MARKER = re.compile(r"^#{1,3}\s*Files mentioned by the user:\s*$", re.IGNORECASE)
"""The heading of the list of files a person attached to a prompt in Codex's IDE extension
or app; each entry is a heading of its own, ``## NAME: PATH``."""

_MENTIONED_FILE = re.compile(r"^#{2,4}\s+(?P<name>[^:\n]+?):\s*(?P<path>\S.*)$")
_SECTION = re.compile(r"^#{1,3}\s+[^:\n]+:\s*$")


def mentioned_files(wrapper: str) -> list[str]:
    """The paths (else names) listed under :data:`FILES_MARKER` in the wrapper that precedes
    a typed request."""
    found: list[str] = []
    listing = False
    for line in wrapper.splitlines():
        stripped = line.strip()
        if FILES_MARKER.match(stripped):
            listing = True
            continue
        if not listing or not stripped:
            continue
        entry = _MENTIONED_FILE.match(stripped)
        if entry is None:
            if _SECTION.match(stripped):
                listing = False  # the next section of the wrapper (open tabs, active file…)
            continue
        found.append(entry["path"].strip() or entry["name"].strip())
    return found


def environment_cwd(text: str) -> str | None:
    """The ``<cwd>`` of an ``<environment_context>`` block (bare-era rollouts)."""
    match = ENVIRONMENT_CWD.search(text)
    return match["cwd"].strip() if match else None


def content_parts(content: Any) -> tuple[list[str], int]:
    """The text parts and the number of images of a response item's ``content`` list."""
    texts: list[str] = []
    images = 0
    if isinstance(content, str):
        return [content], 0
    if not isinstance(content, list):
        return texts, images
    for part in content:
        if not isinstance(part, dict):
            continue
        part_type = part.get("type")
        if part_type in ("input_image", "output_image", "image"):
            images += 1
            continue
        text = part.get("text")
        if isinstance(text, str):
            texts.append(text)
    return texts, images


def event_images(payload: dict[str, Any]) -> int:
    """How many images a ``user_message`` event carries (data URLs and local paths)."""
    count = 0
    for key in ("images", "local_images"):
        value = payload.get(key)
        if isinstance(value, list):
            count += len(value)
    return count


def tool_name(item_type: str, payload: dict[str, Any]) -> str | None:
    """The tool a response item ran, or None when the item is not a tool call."""
    if item_type in NAMED_TOOL_ITEMS:
        name = payload.get("name")
        return name if isinstance(name, str) and name.strip() else "tool"
    return TOOL_NAME_BY_ITEM.get(item_type)


def mcp_event_tool_name(payload: dict[str, Any]) -> str:
    """``mcp__<server>__<tool>`` for an older ``mcp_tool_call_end`` event."""
    invocation = payload.get("invocation")
    if isinstance(invocation, dict):
        server, tool = invocation.get("server"), invocation.get("tool")
        if isinstance(server, str) and isinstance(tool, str):
            return f"mcp__{server}__{tool}"
    return "mcp"


def subagent_parent(meta: dict[str, Any]) -> str | None:
    """The thread a subagent thread worked for, from its ``session_meta``; None otherwise.

    Only subagents count (``source: {"subagent": …}``); a fork (``forked_from_id``) is a
    conversation of its own.
    """
    source = meta.get("source")
    if not isinstance(source, dict) or "subagent" not in source:
        return None
    parent = meta.get("parent_thread_id")
    subagent = source.get("subagent")
    spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    if not isinstance(parent, str) and isinstance(spawn, dict):
        parent = spawn.get("parent_thread_id")
    return parent.lower() if isinstance(parent, str) and parent else None


TokenTotals = tuple[int, int, int]
"""Cumulative ``(input, output, cached input)`` tokens, as Codex counts them: its input
includes the cached input (``cached_input_tokens``), which the session stores apart."""


def token_totals(payload: dict[str, Any]) -> TokenTotals | None:
    """``(input, output, cached input)`` of a ``token_count`` event's cumulative
    ``total_token_usage`` (cached input 0 when it is not given)."""
    info = payload.get("info")
    if not isinstance(info, dict):
        return None
    total = info.get("total_token_usage")
    if not isinstance(total, dict):
        return None
    found = total.get("input_tokens"), total.get("output_tokens")
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in found):
        return None
    cached = total.get("cached_input_tokens")
    if not isinstance(cached, int) or isinstance(cached, bool) or cached < 0:
        cached = 0
    return int(found[0] or 0), int(found[1] or 0), cached


def one_line_title(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis when longer."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: limit - 1].rstrip() + "…"
