"""The ``md`` and ``qmd`` exporters: one Markdown / Quarto document per session.

Each file is ``<id>-<slug>.md`` (or ``.qmd``) with YAML front matter; the core writes the
``manifest.jsonl`` from the files reported here. ``--only user-prompts`` (``md`` only) writes
one document with every selected session's prompts.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from hermes_hookspecs import (
    ExportedFile,
    ExportOptions,
    ExportResult,
    ExportSink,
    SessionRecord,
)

from .frontmatter import front_matter
from .naming import safe_id, session_file_name
from .render import iso, prompt_section, prompts_document, transcript

EXPORTER_LABEL = "hermes-export-markdown 1"


def _write(sink: ExportSink, name: str, chunks: Iterable[str]) -> tuple[str, int]:
    """Write ``chunks`` as UTF-8 to ``name``; returns the SHA-256 and the byte count."""
    digest = hashlib.sha256()
    size = 0
    with sink.open_binary(name) as handle:
        for chunk in chunks:
            data = chunk.encode("utf-8", errors="surrogatepass")
            handle.write(data)
            digest.update(data)
            size += len(data)
    return digest.hexdigest(), size


class MarkdownExporter:
    """One Markdown file per session (``md``) or Quarto document (``qmd``)."""

    redact_by_default = False
    one_file_per_session = True

    def __init__(self, name: str = "md") -> None:
        self.name = name
        self.extension = name
        self.quarto = name == "qmd"
        self.supports_user_prompts = not self.quarto
        self.description = (
            "Quarto documents (.qmd), one per session, with a manifest."
            if self.quarto
            else "Markdown files, one per session, with a manifest; --only user-prompts too."
        )

    def export(
        self, sessions: Iterator[SessionRecord], sink: ExportSink, options: ExportOptions
    ) -> ExportResult:
        """Write each session to its own file (hold one at a time) and report each file."""
        if options.only == "user-prompts":
            return self._export_prompts(sessions, sink, options)
        result = ExportResult()
        exported_at = time.time()
        for record in sessions:
            name = session_file_name(record.session.id, record.session.title, self.extension)
            header = front_matter(self._front_matter(record, options, exported_at))
            sha, _ = _write(sink, name, [header, "\n", *transcript(record)])
            ids = record.lineage or (record.session.id,)
            result.files.append(ExportedFile(Path(name), ids, len(record.messages), sha))
            result.sessions_written += 1
        return result

    def _front_matter(
        self, record: SessionRecord, options: ExportOptions, exported_at: float
    ) -> list[tuple[str, Any]]:
        session = record.session
        title = session.title or f"Session {session.id}"
        if self.quarto:
            # Quarto (pandoc) reads metadata strings as Markdown, raw HTML included.
            title = title.replace("<", "&lt;")
        fields: list[tuple[str, Any]] = [("title", title)]
        if self.quarto:
            fields.append(("format", "html"))
            fields.append(("date", iso(session.started_at)))
        fields += [
            ("session_id", session.id),
            ("source", session.source),
            ("started_at", iso(session.started_at)),
            ("last_active_at", iso(session.last_active_at)),
            ("ended_at", iso(session.ended_at)),
            ("end_reason", session.end_reason),
            ("model", session.model),
            ("provider", session.billing_provider),
            ("cwd", session.cwd),
            ("git_branch", session.git_branch),
            ("pinned", session.pinned),
            ("archived", session.archived),
            ("message_count", len(record.messages)),
            ("tool_call_count", session.tool_call_count),
            ("children", list(record.children)),
        ]
        if record.lineage:
            fields.append(("lineage_session_ids", list(record.lineage)))
        fields += [
            ("redacted", options.redacted),
            ("export_format", self.name),
            ("exported_at", iso(exported_at)),
            ("exporter", EXPORTER_LABEL),
        ]
        return fields

    def _export_prompts(
        self, sessions: Iterator[SessionRecord], sink: ExportSink, options: ExportOptions
    ) -> ExportResult:
        result = ExportResult()
        ids: list[str] = []
        count = 0
        first = next(sessions, None)
        if first is None:
            return result
        name = (
            f"{safe_id(first.session.id)}.prompts.{self.extension}"
            if options.single_session
            else f"prompts.{self.extension}"
        )

        def chunks() -> Iterator[str]:
            nonlocal count
            yield prompts_document()
            for record in _chain(first, sessions):
                ids.append(record.session.id)
                count += sum(1 for message in record.messages if message.role == "user")
                yield from prompt_section(record)

        sha, _ = _write(sink, name, chunks())
        result.files.append(ExportedFile(Path(name), tuple(ids), count, sha))
        result.sessions_written = len(ids)
        return result


def _chain(first: SessionRecord, rest: Iterator[SessionRecord]) -> Iterator[SessionRecord]:
    yield first
    yield from rest
