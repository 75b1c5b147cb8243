"""Sample sessions and a directory sink shared by the html and trace exporter tests.

Plain functions and a small class, no fixtures: the sink writes real files under a test's
``tmp_path``, the way the export engine's sink does (one file per ``open_binary`` name).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO

from hermes_hookspecs import ExportOptions, Message, Session, SessionRecord, ToolCall

HOSTILE_TEXTS = (
    "<script>window.__pwned = 'script'; alert(1)</script>",
    "<img src=x onerror=\"window.__pwned='img'; alert(2)\">",
    "<a href=\"javascript:window.__pwned='link';alert(3)\">click me</a> javascript:alert(4)",
    "</script><script>window.__pwned='breakout'</script>",
    "\"'><svg onload=alert(5)> & &amp; </textarea></style>",
)


class DirectorySink:
    """An ``ExportSink`` writing each name under ``directory`` (or one fixed ``file``)."""

    def __init__(self, directory: Path, file: Path | None = None) -> None:
        self.directory = directory
        self.file = file
        self.names: list[str] = []

    @property
    def destination(self) -> Path | None:
        return self.file or self.directory

    def open_binary(self, relative_name: str) -> BinaryIO:
        self.names.append(relative_name)
        target = self.file or self.directory / relative_name
        return target.open("wb")


class MemorySink:
    """An ``ExportSink`` standing for stdout: everything written lands in ``buffer``."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()
        self.names: list[str] = []

    @property
    def destination(self) -> Path | None:
        return None

    def open_binary(self, relative_name: str) -> BinaryIO:
        self.names.append(relative_name)
        sink = self

        class _Kept(io.BytesIO):
            def close(self) -> None:
                sink.buffer.write(self.getvalue())
                super().close()

        return _Kept()


def options(*, single: bool = False, **extra: object) -> ExportOptions:
    """Export options as the engine builds them (``extra`` carries upload/public)."""
    return ExportOptions(output=None, single_session=single, extra=extra)


def coding_session(
    session_id: str = "20260101_090000_a1b2c3", title: str = "Fix the parser"
) -> SessionRecord:
    """A small coding session: prompt, tool call + result, reasoning, answer, follow-up."""
    base = 1767258000.0
    session = Session(
        id=session_id,
        source="cli",
        started_at=base,
        title=title,
        model="claude-sonnet-4-6",
        cwd="/home/ana/parser",
        git_branch="main",
        ended_at=base + 120,
        end_reason="user_exit",
    )
    messages = [
        Message("system", "You are a careful coding agent.", timestamp=base),
        Message("user", "Why does the parser fail on empty files?", timestamp=base + 1),
        Message(
            "assistant",
            "Let me look at the parser first.",
            timestamp=base + 5,
            reasoning="The empty-file branch is probably missing.",
            tool_calls=(
                ToolCall("read_file", '{"path": "parser.py"}', id="call_read_1"),
                ToolCall("terminal", '{"command": "pytest -q"}', id="call_test_1"),
            ),
        ),
        Message(
            "tool",
            "def parse(text):\n    return text.split()[0]",
            timestamp=base + 6,
            tool_call_id="call_read_1",
            tool_name="read_file",
        ),
        Message(
            "tool",
            "1 failed, 3 passed",
            timestamp=base + 7,
            tool_call_id="call_test_1",
            tool_name="terminal",
        ),
        Message(
            "assistant",
            "`split()[0]` raises IndexError on empty input; guard it.",
            timestamp=base + 10,
        ),
        Message("user", "Thanks, please apply the fix.", timestamp=base + 60),
        Message("assistant", "Done: the parser returns None for empty files.", timestamp=base + 90),
    ]
    return SessionRecord(session=session, messages=messages)


def chat_session(session_id: str = "a1b2c3d4", title: str = "Weekend plans") -> SessionRecord:
    """A short gateway chat with a distinctive phrase, for switching and search tests."""
    base = 1767344400.0
    session = Session(id=session_id, source="telegram", started_at=base, title=title)
    messages = [
        Message("user", "Suggest a hike near Sintra with ocean views.", timestamp=base),
        Message(
            "assistant", "Try the trail from Azenhas do Mar to Praia da Ursa.", timestamp=base + 4
        ),
    ]
    return SessionRecord(session=session, messages=messages)


def hostile_session(session_id: str = "evil<script>1", title: str | None = None) -> SessionRecord:
    """A session whose every text field holds markup that must stay inert."""
    base = 1767430800.0
    evil = HOSTILE_TEXTS
    session = Session(
        id=session_id,
        source="cli<b>",
        started_at=base,
        title=title or f"{evil[0]} title",
        model=evil[1],
        cwd=evil[2],
        end_reason=evil[4],
        ended_at=base + 1,
    )
    messages = [
        Message("user", evil[0], timestamp=base),
        Message(
            "assistant",
            evil[1],
            timestamp=base + 1,
            reasoning=evil[3],
            tool_calls=(ToolCall(evil[4], evil[2], id=evil[3]),),
        ),
        Message("tool", evil[2], timestamp=base + 2, tool_call_id=evil[3], tool_name=evil[0]),
        Message("user", evil[3], timestamp=base + 3),
        Message("system", evil[4], timestamp=base + 4),
    ]
    return SessionRecord(session=session, messages=messages, children=(evil[1],))
