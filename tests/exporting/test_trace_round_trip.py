"""A trace read back by the Claude Code importer gives the same conversation.

The importer (``hermes-import-claude``) keeps the ordered user/assistant conversation and
condenses tool use into ``[ran tool: NAME]`` notes; everything an assistant says between two
prompts becomes one message. :func:`expected_conversation` states that independently of both
plugins, from the Hermes messages that were exported.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pytest
from hermes_export_trace import TraceExporter
from hermes_hookspecs import Message, SessionRecord
from html_trace_samples import DirectorySink, chat_session, coding_session, hostile_session, options
from installed_hermes import hermes_command

from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore


def expected_conversation(messages: list[Message]) -> list[tuple[str, str]]:
    """(role, text) turns as the Claude Code importer condenses a conversation."""
    turns: list[tuple[str, str]] = []
    pieces: list[str] = []

    def flush() -> None:
        if not pieces:
            return
        text = pieces[0]
        for previous, piece in itertools.pairwise(pieces):
            both_notes = previous.startswith("[ran tool: ") and piece.startswith("[ran tool: ")
            text += ("\n" if both_notes else "\n\n") + piece
        turns.append(("assistant", text))
        pieces.clear()

    for message in messages:
        if message.role == "user" and message.content.strip():
            flush()
            turns.append(("user", message.content.strip()))
        elif message.role == "assistant":
            if message.content.strip():
                pieces.append(message.content.strip())
            pieces.extend(f"[ran tool: {call.name}]" for call in message.tool_calls)
    flush()
    return turns


def export_trace(tmp_path: Path, record: SessionRecord) -> Path:
    result = TraceExporter().export(iter([record]), DirectorySink(tmp_path), options(single=True))
    return tmp_path / result.files[0].path


@pytest.mark.parametrize("make", [coding_session, chat_session, hostile_session])
def test_claude_importer_reads_back_the_same_conversation(tmp_path: Path, make: object) -> None:
    record = make(session_id="round-trip-1")  # type: ignore[operator]
    path = export_trace(tmp_path, record)
    importer = PluginHost().importer("claude")
    assert importer.sniff(path)
    (imported,) = list(importer.read(path))
    messages = list(imported.messages)
    assert [(m.role, m.content) for m in messages] == expected_conversation(record.messages)
    assert imported.warnings == {}
    assert imported.cwd == (record.session.cwd or None)
    prompts = [m for m in record.messages if m.role == "user"]
    imported_prompts = [m for m in messages if m.role == "user"]
    for original, back in zip(prompts, imported_prompts, strict=True):
        assert original.timestamp is not None and back.timestamp is not None
        assert abs(original.timestamp - back.timestamp) < 0.001


def test_claude_importer_reads_traces_of_real_conversation_shapes(tmp_path: Path) -> None:
    record = coding_session(session_id="shape-1")
    imported = next(PluginHost().importer("claude").read(export_trace(tmp_path, record)))
    messages = list(imported.messages)
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1].content == (
        "Let me look at the parser first.\n\n[ran tool: read_file]\n[ran tool: terminal]\n\n"
        "`split()[0]` raises IndexError on empty input; guard it."
    )
    assert imported.model == "claude-sonnet-4-6"
    assert imported.git_branch == "main"


def test_installed_hermes_round_trips_a_trace_between_two_homes(tmp_path: Path) -> None:
    hermes = hermes_command()
    source_home, target_home = tmp_path / "a", tmp_path / "b"
    source_home.mkdir()
    target_home.mkdir()
    record = coding_session()
    store = SessionStore.open(source_home)
    try:
        session = store.create_session(
            "cli",
            title=record.session.title,
            started_at=record.session.started_at,
            cwd=record.session.cwd,
            model=record.session.model,
        )
        store.append_messages(session.id, record.messages)
        store.end_session(session.id, "user_exit")
    finally:
        store.close()

    def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HOME": str(tmp_path), "HERMES_HOME": str(home)}
        env.pop("HERMES_DEBUG", None)
        return subprocess.run(
            [hermes, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    folder = tmp_path / "traces"
    exported = run(
        "sessions",
        "export",
        str(folder),
        "--format",
        "trace",
        "--session-id",
        session.id,
        "--no-redact",
        home=source_home,
    )
    assert exported.returncode == 0, exported.stderr
    trace = folder / f"{session.id}.trace.jsonl"
    imported = run("sessions", "import", str(trace), home=target_home)
    assert imported.returncode == 0, imported.stderr
    store = SessionStore.open(target_home)
    try:
        (row,) = store.list_sessions()
        back = store.messages(row.id)
    finally:
        store.close()
    assert [(m.role, m.content) for m in back] == expected_conversation(record.messages)
