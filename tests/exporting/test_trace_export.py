"""The ``trace`` exporter's Claude Code JSONL, written through a directory sink."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hermes_export_trace import TraceExporter
from hermes_hookspecs import Message, Session, SessionRecord, ToolCall
from html_trace_samples import (
    HOSTILE_TEXTS,
    DirectorySink,
    MemorySink,
    chat_session,
    coding_session,
    hostile_session,
    options,
)
from trace_checks import assert_claude_trace_shape, parse_trace

from hermes_core.plugins import PluginHost


def export_one(tmp_path: Path, record: SessionRecord) -> list[dict[str, Any]]:
    sink = DirectorySink(tmp_path)
    result = TraceExporter().export(iter([record]), sink, options(single=True))
    (written,) = result.files
    return parse_trace((tmp_path / written.path).read_bytes())


def test_trace_exporter_is_registered_and_redacts_by_default() -> None:
    exporter = PluginHost().exporter("trace")
    assert exporter.name == "trace"
    assert exporter.redact_by_default is True
    # The traits the export engine reads: a file per session, stdout for one session without
    # OUTPUT, the latest session when nothing is selected, --upload allowed.
    for trait in (
        "one_file_per_session",
        "stdout_for_single_session",
        "exports_latest_by_default",
        "supports_upload",
    ):
        assert getattr(exporter, trait, False) is True, trait


def test_trace_is_a_claude_code_transcript(tmp_path: Path) -> None:
    record = coding_session()
    records = export_one(tmp_path, record)
    assert_claude_trace_shape(records, record.session.id)
    assert records[0] == {
        "type": "summary",
        "summary": "Fix the parser",
        "leafUuid": records[-1]["uuid"],
    }
    chain = records[1:]
    assert [r["type"] for r in chain] == [
        "system",
        "user",
        "assistant",  # thinking
        "assistant",  # text
        "assistant",  # tool_use read_file
        "assistant",  # tool_use terminal
        "user",  # tool_result
        "user",  # tool_result
        "assistant",
        "user",
        "assistant",
    ]
    assert chain[1]["message"] == {
        "role": "user",
        "content": "Why does the parser fail on empty files?",
    }
    reply = [r["message"] for r in chain[2:6]]
    assert len({message["id"] for message in reply}) == 1
    assert [message["content"][0]["type"] for message in reply] == [
        "thinking",
        "text",
        "tool_use",
        "tool_use",
    ]
    assert reply[0]["content"][0]["thinking"] == "The empty-file branch is probably missing."
    assert reply[2]["content"][0] == {
        "type": "tool_use",
        "id": "call_read_1",
        "name": "read_file",
        "input": {"path": "parser.py"},
    }
    assert [m["stop_reason"] for m in reply] == [None, None, None, "tool_use"]
    assert {m["model"] for m in reply} == {"claude-sonnet-4-6"}
    assert chain[6]["message"]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "call_read_1",
            "content": "def parse(text):\n    return text.split()[0]",
        }
    ]
    assert chain[7]["message"]["content"][0]["tool_use_id"] == "call_test_1"
    assert chain[1]["timestamp"] == "2026-01-01T09:00:01.000Z"
    assert chain[1]["cwd"] == "/home/ana/parser"
    assert chain[1]["gitBranch"] == "main"


def test_the_same_session_gives_the_same_trace(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = export_one(tmp_path / "a", coding_session())
    second = export_one(tmp_path / "b", coding_session())
    assert first == second


def test_tool_ids_are_paired_even_when_the_store_lacks_them(tmp_path: Path) -> None:
    session = Session(id="no-ids", source="cli", started_at=1767258000.0)
    messages = [
        Message("user", "list and count"),
        Message(
            "assistant",
            "",
            tool_calls=(ToolCall("ls", "not json at all"), ToolCall("wc", "[1, 2]")),
        ),
        Message("tool", "a b c", tool_name="ls"),
        Message("tool", "3", tool_name="wc"),
        Message("tool", "stray output", tool_call_id="unknown", tool_name="cat"),
        Message("assistant", "again", tool_calls=(ToolCall("ls", "{}", id="dup"),)),
        Message("tool", "x", tool_call_id="dup"),
        Message("assistant", "", tool_calls=(ToolCall("ls", "{}", id="dup"),)),
        Message("tool", "y", tool_call_id="dup"),
    ]
    records = export_one(tmp_path, SessionRecord(session=session, messages=messages))
    assert_claude_trace_shape(records, "no-ids")
    uses = [
        block
        for r in records
        if r["type"] == "assistant"
        for block in r["message"]["content"]
        if block["type"] == "tool_use"
    ]
    assert [u["input"] for u in uses[:2]] == [
        {"arguments": "not json at all"},
        {"arguments": [1, 2]},
    ]
    results = [
        block
        for r in records
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
        for block in r["message"]["content"]
    ]
    assert [(b["tool_use_id"], b["content"]) for b in results] == [
        (uses[0]["id"], "a b c"),
        (uses[1]["id"], "3"),
        (uses[2]["id"], "x"),
        (uses[3]["id"], "y"),
    ]
    notes = [r for r in records if r.get("isMeta")]
    assert len(notes) == 1
    assert "stray output" in notes[0]["message"]["content"]


def test_every_character_stays_inside_its_line(tmp_path: Path) -> None:
    odd = "line\u2028separator\u2029para\x85nel\r\nwindows\x00nul \udcff surrogate"
    record = chat_session()
    record.messages[0].content = odd
    result = TraceExporter().export(iter([record]), DirectorySink(tmp_path), options())
    data = (tmp_path / result.files[0].path).read_bytes()
    assert len(data.splitlines()) == len(data.decode().splitlines()) == 3
    records = parse_trace(data)
    assert records[1]["message"]["content"].startswith("line\u2028separator\u2029para\x85nel\r\n")


def test_hostile_text_is_carried_verbatim(tmp_path: Path) -> None:
    record = hostile_session(session_id="evil-1")
    records = export_one(tmp_path, record)
    assert_claude_trace_shape(records, "evil-1")
    text = json.dumps(records, ensure_ascii=False)
    for evil in HOSTILE_TEXTS:
        assert json.dumps(evil, ensure_ascii=False)[1:-1] in text


def test_bulk_export_writes_one_file_per_session(tmp_path: Path) -> None:
    sink = DirectorySink(tmp_path)
    records = [coding_session(), chat_session(), hostile_session(session_id="../etc/passwd")]
    result = TraceExporter().export(iter(records), sink, options())
    assert sink.names == [
        "20260101_090000_a1b2c3.trace.jsonl",
        "a1b2c3d4.trace.jsonl",
        "_etc_passwd.trace.jsonl",
    ]
    assert result.sessions_written == 3
    for written, record in zip(result.files, records, strict=True):
        assert written.session_ids == (record.session.id,)
        assert written.message_count == len(record.messages)
        data = (tmp_path / written.path).read_bytes()
        assert written.sha256 == hashlib.sha256(data).hexdigest()
        assert_claude_trace_shape(parse_trace(data), record.session.id)


def test_one_session_to_stdout(tmp_path: Path) -> None:
    sink = MemorySink()
    result = TraceExporter().export(iter([chat_session()]), sink, options(single=True))
    assert sink.names == ["a1b2c3d4.trace.jsonl"]
    assert result.files[0].session_ids == ("a1b2c3d4",)
    records = parse_trace(sink.buffer.getvalue())
    assert [r["type"] for r in records] == ["summary", "user", "assistant"]


@pytest.mark.parametrize("messages", [[], [Message("assistant", "")]])
def test_sessions_with_little_in_them_still_give_valid_traces(
    tmp_path: Path, messages: list[Message]
) -> None:
    session = Session(id="tiny", source="cli", started_at=0.0)
    record = SessionRecord(session=session, messages=messages)
    result = TraceExporter().export(iter([record]), DirectorySink(tmp_path), options())
    data = (tmp_path / result.files[0].path).read_bytes()
    if not messages:
        assert data == b""
    else:
        records = parse_trace(data)
        assert records[0]["message"]["content"] == [{"type": "text", "text": ""}]
