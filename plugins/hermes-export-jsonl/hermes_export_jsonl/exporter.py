"""The ``jsonl`` exporter: one JSON object per session (see :mod:`.shape`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from hermes_hookspecs import (
    ExportedFile,
    ExportOptions,
    ExportResult,
    ExportSink,
    SessionRecord,
)

from .shape import prompt_to_dict, record_to_dict


def _line(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class JsonlExporter:
    """Writes every session (or, with ``--only user-prompts``, every prompt) as JSON lines."""

    name = "jsonl"
    extension = "jsonl"
    description = "JSON Lines: one object per session with every field and message (backups)."
    redact_by_default = False
    supports_user_prompts = True

    def export(
        self, sessions: Iterator[SessionRecord], sink: ExportSink, options: ExportOptions
    ) -> ExportResult:
        """Write one line per session (or prompt) into one file; hold one session at a time."""
        result = ExportResult()
        digest = hashlib.sha256()
        session_ids: list[str] = []
        messages = 0
        name: str | None = None
        # The file is opened on the first session: an empty selection writes no file, and an
        # error half-way leaves the previous file (if any) untouched.
        with contextlib.ExitStack() as opened:
            handle: BinaryIO | None = None
            for record in sessions:
                if handle is None:
                    name = self._file_name(record, options)
                    handle = opened.enter_context(sink.open_binary(name))
                for line in self._lines(record, options):
                    handle.write(line)
                    digest.update(line)
                messages += len(record.messages)
                session_ids.append(record.session.id)
        if name is None:
            return result
        result.files.append(
            ExportedFile(Path(name), tuple(session_ids), messages, digest.hexdigest())
        )
        result.sessions_written = len(session_ids)
        return result

    @staticmethod
    def _file_name(first: SessionRecord, options: ExportOptions) -> str:
        kind = "prompts" if options.only == "user-prompts" else "sessions"
        if not options.single_session:
            return f"{kind}.jsonl"
        suffix = ".prompts" if kind == "prompts" else ""
        return f"{first.session.id}{suffix}.jsonl"

    @staticmethod
    def _lines(record: SessionRecord, options: ExportOptions) -> Iterator[bytes]:
        if options.only == "user-prompts":
            index = 0
            for message in record.messages:
                if message.role == "user":
                    index += 1
                    yield _line(prompt_to_dict(record.session.id, index, message))
            return
        yield _line(record_to_dict(record))
