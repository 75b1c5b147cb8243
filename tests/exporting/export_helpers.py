"""Helpers shared by the export tests: sessions with chosen shapes, a plugin host holding the
real jsonl and markdown plugins (plus any test plugin), and the command line on ``build_app``."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hermes_export_jsonl.plugin as jsonl_plugin
import hermes_export_markdown.plugin as markdown_plugin
from click.testing import Result
from hermes_hookspecs import (
    ExportedFile,
    Exporter,
    ExportOptions,
    ExportResult,
    ExportSink,
    Message,
    SessionRecord,
    ToolCall,
    hookimpl,
)
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

REPO_ROOT = Path(__file__).resolve().parents[2]
DAY = 86_400.0
runner = CliRunner()


def make(
    store: SessionStore,
    *,
    title: str | None = None,
    source: str = "cli",
    days_ago: float = 2.0,
    messages: int = 2,
    ended: bool = True,
    text: str = "hello",
    tool: bool = False,
    **fields: Any,
) -> str:
    """A session started ``days_ago`` days ago with ``messages`` alternating user/assistant
    messages (``tool`` adds a tool call and its output)."""
    started = time.time() - days_ago * DAY
    session = store.create_session(source, title=title, started_at=started, **fields)
    batch = []
    for index in range(messages):
        role = "user" if index % 2 == 0 else "assistant"
        batch.append(Message(role, f"{text} {index}", timestamp=started + index + 1))
    if tool:
        batch.append(
            Message(
                "assistant",
                "",
                timestamp=started + messages + 1,
                tool_calls=(ToolCall("terminal", '{"command": "ls"}', "call_1"),),
            )
        )
        batch.append(
            Message(
                "tool",
                "file_a\nfile_b",
                timestamp=started + messages + 2,
                tool_call_id="call_1",
                tool_name="terminal",
            )
        )
    if batch:
        store.append_messages(session.id, batch)
    if ended:
        store.end_session(session.id, "user_exit", ended_at=started + len(batch) + 5)
    return session.id


class ExporterPlugin:
    """An in-process plugin registering the given exporter objects."""

    def __init__(self, *exporters: Any) -> None:
        self.exporters = exporters

    @hookimpl
    def hermes_register_exporters(self, register: Any) -> None:
        for exporter in self.exporters:
            register(exporter)


def host(*extra: tuple[str, object]) -> PluginHost:
    """A host with the real jsonl and markdown plugins, the PostgreSQL store backend (for
    homes whose ``store.url`` names one) and ``extra`` plugins, nothing else."""
    import hermes_store_postgres.plugin

    return PluginHost(
        load_entry_points=False,
        extra_plugins=[
            ("jsonl", jsonl_plugin),
            ("markdown", markdown_plugin),
            ("store-postgres", hermes_store_postgres.plugin),
            *extra,
        ],
    )


def invoke(plugin_host: PluginHost, home: Path, *args: str, input: str | None = None) -> Result:
    return runner.invoke(build_app(plugin_host), ["--home", str(home), *args], input=input)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class RecordingExporter:
    """Writes one line per session and remembers what it was given (tests of the engine)."""

    extension = "txt"
    description = "test exporter"

    def __init__(
        self, name: str = "spy", *, redact_by_default: bool = False, **traits: Any
    ) -> None:
        self.name = name
        self.redact_by_default = redact_by_default
        for key, value in traits.items():
            setattr(self, key, value)
        self.received_type: type | None = None
        self.records: list[SessionRecord] = []
        self.options: ExportOptions | None = None

    def export(
        self, sessions: Iterator[SessionRecord], sink: ExportSink, options: ExportOptions
    ) -> ExportResult:
        self.received_type = type(sessions)
        self.options = options
        result = ExportResult()
        digest = hashlib.sha256()
        ids: list[str] = []
        with sink.open_binary("spy.txt") as out:
            for record in sessions:
                self.records.append(record)
                line = f"{record.session.id}\t{len(record.messages)}\n".encode()
                out.write(line)
                digest.update(line)
                ids.append(record.session.id)
        result.files.append(ExportedFile(Path("spy.txt"), tuple(ids), 0, digest.hexdigest()))
        result.sessions_written = len(ids)
        return result


def is_exporter(candidate: object) -> bool:
    return isinstance(candidate, Exporter)
