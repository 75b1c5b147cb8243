"""How one ``hermes mcp`` server was asked to behave."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_IMPORT_EVERY = 5.0
"""Seconds between two looks for new Claude Code / Codex lines (``--import``)."""


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """The command's options, checked."""

    allow_writes: bool = False
    """Offer the tools that change the store (titles, pins)."""
    redact: bool = False
    """Apply the redaction rules to every string the server returns."""
    importers: tuple[str, ...] = ()
    """Importers whose new log lines are brought in before answering (``--import``)."""
    import_every: float = DEFAULT_IMPORT_EVERY
    """At most one such look per this many seconds."""
