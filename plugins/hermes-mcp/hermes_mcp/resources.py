"""The resources: each session as Markdown (``hermes://session/{id}``) and the recent list.

A session is rendered by the installed ``md`` exporter (hermes-export-markdown), the same file
``hermes sessions export --format md`` writes; with ``--redact`` the record is redacted first,
as a redacted export is.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from hermes_core.search.browse import recent_sessions
from hermes_core.store.protocol import Store
from hermes_core.store.search_queries import search_index_of

if TYPE_CHECKING:
    from hermes_core.exporting.redacting import RecordRedactor
    from hermes_core.plugins import PluginHost

SESSION_PREFIX = "hermes://session/"
SESSION_TEMPLATE = SESSION_PREFIX + "{id}"
RECENT_URI = "hermes://sessions/recent"
LISTED_SESSIONS = 25
"""How many recent sessions ``resources/list`` names one by one."""
RECENT_SESSIONS = 50
"""How many the recent-sessions resource holds."""


class ResourceFailure(LookupError):
    """An unknown resource or session; the message is one line."""


@dataclass(frozen=True, slots=True)
class ResourceEntry:
    uri: str
    name: str
    description: str
    mime_type: str


class ArchiveResources:
    """Reads resources from one open store."""

    def __init__(
        self,
        store: Store,
        host: PluginHost,
        *,
        redact_record: RecordRedactor | None = None,
        redact_value: Callable[[Any], Any] | None = None,
    ) -> None:
        """With ``redact_record``/``redact_value`` (``--redact``), every session is redacted
        before rendering and every listed value before it is returned."""
        self._store = store
        self._host = host
        self._redactor = redact_record
        self._redact_value = redact_value or (lambda value: value)

    def listed(self) -> list[ResourceEntry]:
        """The recent-sessions resource, then each of the most recent sessions."""
        entries = [
            ResourceEntry(
                RECENT_URI,
                "Recent sessions",
                "The most recently active sessions (JSON: id, title, times, origin, preview).",
                "application/json",
            )
        ]
        for row in self._redact_value(
            recent_sessions(search_index_of(self._store), LISTED_SESSIONS)
        ):
            entries.append(
                ResourceEntry(
                    SESSION_PREFIX + row["session_id"],
                    row["title"] or row["preview"][:60] or row["session_id"],
                    f"{row['source']} session, last active {row['last_active']}, "
                    f"{row['message_count']} messages",
                    "text/markdown",
                )
            )
        return entries

    def read(self, uri: str) -> tuple[str, str]:
        """(text, MIME type) of ``uri``."""
        if uri == RECENT_URI:
            rows = self._redact_value(
                recent_sessions(search_index_of(self._store), RECENT_SESSIONS)
            )
            return json.dumps({"sessions": rows}, ensure_ascii=False, indent=1), "application/json"
        if uri.startswith(SESSION_PREFIX):
            reference = unquote(uri.removeprefix(SESSION_PREFIX)).strip()
            if reference:
                return self.session_markdown(reference), "text/markdown"
        raise ResourceFailure(
            f"unknown resource {uri[:200]!r}; use {SESSION_TEMPLATE} or {RECENT_URI}"
        )

    def session_markdown(self, reference: str) -> str:
        """One session as the Markdown exporter writes it."""
        from hermes_hookspecs import ExportOptions

        from hermes_core.exporting.records import load_record
        from hermes_core.store.errors import StoreError

        try:
            record = load_record(self._store, self._store.resolve(reference))
        except StoreError as error:
            raise ResourceFailure(" ".join(str(error).split())) from None
        if self._redactor is not None:
            record = self._redactor(record)
        exporter = self._host.exporter("md")
        sink = _MemorySink()
        exporter.export(
            iter([record]),
            sink,
            ExportOptions(output="-", single_session=True, redacted=self._redactor is not None),
        )
        return sink.text()


class _KeptBytes(io.BytesIO):
    """A BytesIO whose bytes outlive ``close()`` (the exporter closes what it writes)."""

    kept = b""

    def close(self) -> None:
        if not self.closed:
            self.kept = self.getvalue()
        super().close()


class _MemorySink:
    """An export sink in memory: one session, one file."""

    destination = None

    def __init__(self) -> None:
        self._files: list[_KeptBytes] = []

    def open_binary(self, relative_name: str) -> Any:
        handle = _KeptBytes()
        self._files.append(handle)
        return handle

    def text(self) -> str:
        return "".join(
            (f.kept if f.closed else f.getvalue()).decode("utf-8", "replace") for f in self._files
        )
