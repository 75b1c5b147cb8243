"""Store writes for importing another tool's whole database (a Hermes Agent ``state.db``).

Such a file holds many sessions and changes in place, so its import is keyed per session, not
per file: every session keeps ``metadata.imported_from`` (tool, path, foreign id, the time of
the run that created it, and ``seen``, a fingerprint of the foreign row's totals), which maps
a foreign session to the session it became even when its id was taken here and it got a new
one. The engine in :mod:`hermes_core.importing.databases` reaches the store through its
``imports`` facet (:class:`~hermes_core.store.import_rows.ImportRows`, written once for every
backend), which holds these writes with those of log imports; routing rows go through
:mod:`.routing`.
"""

from __future__ import annotations

from dataclasses import dataclass

REFRESHABLE_FIELDS = frozenset({
    "ended_at", "end_reason", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "cost_actual_usd", "cost_estimated_usd", "billing_provider",
})  # fmt: skip
"""Columns a later read of the foreign database may bring up to date (its session ended,
used more tokens); titles, pins and the archive flag stay as the person left them here."""


@dataclass(frozen=True, slots=True)
class ImportedEntry:
    """A session this store holds from a foreign database."""

    session_id: str
    seen: str | None
    """The fingerprint of the foreign row when it was last read."""


def append_mark_key(path_key: str, session_id: str) -> str:
    """The key under which an append to one session of a database import is marked (see
    :meth:`.import_rows.ImportRows.mark_append`)."""
    return f"{path_key}#{session_id}"
