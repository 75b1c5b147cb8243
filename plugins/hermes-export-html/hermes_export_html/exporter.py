"""The ``html`` exporter: all selected sessions in one self-contained page.

Sessions stream through: each one is rendered and written as it arrives. Its small sidebar
entry waits in a spooled temporary file (memory first, disk past 1 MiB) until the end, since
the sidebar follows the sessions in the document; memory stays flat however many sessions.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hermes_hookspecs import ExportedFile, ExportOptions, ExportResult, ExportSink, SessionRecord

from ._hashing import HashingWriter
from .page import new_nonce, page_end, page_start, sidebar_end, sidebar_start
from .render import render_session, render_sidebar_entry, session_label

MULTI_SESSION_FILE = "sessions.html"
SIDEBAR_SPOOL_BYTES = 1 << 20
COPY_CHUNK_CHARS = 1 << 16


def file_name(first: SessionRecord | None, multi: bool) -> str:
    """``<id>.html`` for one session, ``sessions.html`` for several (the sink may rename)."""
    if first is None or multi:
        return MULTI_SESSION_FILE
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in first.session.id)
    return f"{safe.strip('.') or 'session'}.html"


class HtmlExporter:
    """One HTML page for one or many sessions: bubbles, collapsible tools, sidebar, themes."""

    name = "html"
    extension = "html"
    description = "One self-contained HTML page (offline, no remote resources)"
    redact_by_default = False

    def export(
        self, sessions: Iterator[SessionRecord], sink: ExportSink, options: ExportOptions
    ) -> ExportResult:
        """Write every session of ``sessions`` into one page opened through ``sink``."""
        head = list(itertools.islice(sessions, 2))
        multi = len(head) > 1
        first = head[0] if head else None
        nonce = new_nonce()
        title = "Hermes sessions" if multi or first is None else session_label(first.session)
        name = file_name(first, multi)
        session_ids: list[str] = []
        message_count = 0
        with (
            tempfile.SpooledTemporaryFile(
                max_size=SIDEBAR_SPOOL_BYTES, mode="w+", encoding="utf-8", errors="surrogatepass"
            ) as entries,
            sink.open_binary(name) as stream,
        ):
            out = HashingWriter(stream)
            out.write(page_start(title, nonce, multi))
            for index, record in enumerate(itertools.chain(head, sessions)):
                anchor = f"s{index + 1}"
                out.write(render_session(record, anchor, active=index == 0))
                if multi:
                    entries.write(render_sidebar_entry(record, anchor, active=index == 0))
                session_ids.append(record.session.id)
                message_count += len(record.messages)
            if first is None:
                out.write('<p class="empty muted">No sessions were selected.</p>\n')
            out.write("</main>\n")
            if multi:
                out.write(sidebar_start())
                entries.seek(0)
                while chunk := entries.read(COPY_CHUNK_CHARS):
                    out.write(chunk)
                out.write(sidebar_end())
            out.write(page_end(nonce))
        exported = ExportedFile(
            path=Path(name),
            session_ids=tuple(session_ids),
            message_count=message_count,
            sha256=out.sha256,
        )
        return ExportResult(files=[exported], sessions_written=len(session_ids))
