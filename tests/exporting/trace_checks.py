"""Checks on Claude Code JSONL trace text shared by the trace tests."""

from __future__ import annotations

import json
from typing import Any


def parse_trace(data: bytes) -> list[dict[str, Any]]:
    """Every line as JSON, asserting there is no blank or partial line."""
    assert data.endswith(b"\n"), "the trace must end with a complete line"
    lines = data.decode("utf-8").split("\n")[:-1]
    records = []
    for number, line in enumerate(lines, 1):
        assert line.strip(), f"line {number} is blank"
        records.append(json.loads(line))
    return records


def assert_claude_trace_shape(records: list[dict[str, Any]], session_id: str) -> None:
    """The shape the Claude Code importer and the HF trace viewer rely on."""
    chain = [record for record in records if "uuid" in record]
    assert chain, "no chain record"
    previous = None
    for record in chain:
        assert record["parentUuid"] == previous, "the uuid chain is broken"
        previous = record["uuid"]
        assert record["type"] in {"user", "assistant", "system"}
        assert record["sessionId"] == session_id
        assert isinstance(record["cwd"], str)
        assert record["timestamp"].endswith("Z") and "T" in record["timestamp"]
        if record["type"] in {"user", "assistant"}:
            assert record["message"]["role"] == record["type"]
    assert len({record["uuid"] for record in chain}) == len(chain), "uuids repeat"
    used: list[str] = []
    answered: list[str] = []
    for record in chain:
        content = record.get("message", {}).get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if block["type"] == "tool_use":
                assert block["id"] not in used, "tool_use ids repeat"
                used.append(block["id"])
                assert isinstance(block["input"], dict)
            elif block["type"] == "tool_result":
                assert block["tool_use_id"] in used, "tool_result before or without its tool_use"
                assert block["tool_use_id"] not in answered, "tool_use answered twice"
                answered.append(block["tool_use_id"])
