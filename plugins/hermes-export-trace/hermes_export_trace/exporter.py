"""The ``trace`` exporter: one Claude Code JSONL transcript per session.

Each session goes to ``<id>.trace.jsonl`` through the sink (the engine sends a single session
without OUTPUT to stdout). Every line is built whole, then written: no blank or partial line.
With ``extra["upload"]`` the same bytes are also kept in a temporary folder and, once all are
written, uploaded to the user's private ``hermes-traces`` dataset.
"""

from __future__ import annotations

import hashlib
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hermes_hookspecs import ExportedFile, ExportOptions, ExportResult, ExportSink, SessionRecord

from .records import jsonl_line, session_records
from .upload import HubUploader

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def trace_file_name(session_id: str) -> str:
    """``<id>.trace.jsonl``, with anything but letters, digits, ``._-`` replaced by ``_``."""
    safe = _UNSAFE.sub("_", session_id).strip(".") or "session"
    return f"{safe}.trace.jsonl"


class TraceExporter:
    """Claude Code JSONL traces (the format the Hugging Face Agent Trace Viewer reads)."""

    name = "trace"
    extension = "trace.jsonl"
    description = "Claude Code JSONL traces, one per session; --upload to a private HF dataset"
    redact_by_default = True
    # Traits the export engine reads (see hermes_core.exporting.formats):
    one_file_per_session = True
    stdout_for_single_session = True
    exports_latest_by_default = True
    supports_upload = True

    def export(
        self, sessions: Iterator[SessionRecord], sink: ExportSink, options: ExportOptions
    ) -> ExportResult:
        """Write one trace per session; upload them afterwards when ``extra["upload"]``."""
        upload = bool(options.extra.get("upload"))
        uploader = HubUploader() if upload else None  # fails before anything is written
        with tempfile.TemporaryDirectory(prefix="hermes-traces-") as staging:
            staged: list[tuple[str, Path]] = []
            result = ExportResult()
            for record in sessions:
                name = trace_file_name(record.session.id)
                digest = hashlib.sha256()
                copy = (Path(staging) / name).open("wb") if upload else None
                try:
                    with sink.open_binary(name) as stream:
                        for entry in session_records(record):
                            line = jsonl_line(entry)
                            digest.update(line)
                            stream.write(line)
                            if copy is not None:
                                copy.write(line)
                finally:
                    if copy is not None:
                        copy.close()
                if upload:
                    staged.append((name, Path(staging) / name))
                result.files.append(
                    ExportedFile(
                        path=Path(name),
                        session_ids=(record.session.id,),
                        message_count=len(record.messages),
                        sha256=digest.hexdigest(),
                    )
                )
                result.sessions_written += 1
            if uploader is not None and staged:
                uploaded = uploader.upload(staged, public=bool(options.extra.get("public")))
                visibility = "private" if uploaded.private else "public"
                print(
                    f"uploaded {len(uploaded.paths)} trace(s) to {uploaded.url} ({visibility})",
                    file=sys.stderr,
                )
        return result
