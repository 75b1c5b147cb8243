"""What a person asked ``hermes sessions export`` to do, before anything is checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

LineageMode = Literal["single", "logical"]
OnlyMode = Literal["user-prompts"]
DEFAULT_FORMAT = "jsonl"
EXPORTS_FOLDER = "session-exports"
"""Where one-file-per-session formats write without OUTPUT, inside the Hermes home."""


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """The raw request; :func:`hermes_core.exporting.plan_export` checks and resolves it."""

    format: str = DEFAULT_FORMAT
    output: str | None = None
    """OUTPUT: a file, a directory, ``-`` for stdout, or None for the format's default."""
    session_reference: str | None = None
    """``--session-id``: an id, a unique id prefix, or a title."""
    filter_options: Mapping[str, Any] = field(default_factory=dict)
    """The raw F1 filter values (``None`` when not given), as ``bulk_filter_options`` collects."""
    lineage: LineageMode = "single"
    only: OnlyMode | None = None
    redact: bool | None = None
    """True for ``--redact``, False for ``--no-redact``, None for the format's default."""
    dry_run: bool = False
    delete_after_verified: bool = False
    upload: bool = False
    public: bool = False
