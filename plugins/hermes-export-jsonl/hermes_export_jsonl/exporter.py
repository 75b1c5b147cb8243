"""The ``jsonl`` exporter: one JSON object per session (see :mod:`.shape`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
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

_PLAIN = re.compile(r"[A-Za-z0-9_-]{1,80}")
_NOT_PLAIN = re.compile(r"[^A-Za-z0-9_-]+")


def file_stem(session_id: str) -> str:
    """The session id as a file name: itself when plain (every id of the standard shape is),
    else its plain characters and 12 hex digits of its SHA-256, so an id such as
    ``../../x`` (held by a store made before ids were checked) names a file in the export
    folder and two such ids never share one. The id inside the file is kept exactly."""
    if _PLAIN.fullmatch(session_id):
        return session_id
    readable = _NOT_PLAIN.sub("-", session_id).strip("-")[:67].strip("-") or "session"
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{readable}-{digest}"


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
        return f"{file_stem(first.session.id)}{suffix}.jsonl"

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
