"""The one selection of sessions (SPEC F1), shared by list, export, prune and archive.

A :class:`SessionFilter` holds already-parsed values; :func:`build_where` turns it into one
parameterised SQL condition over ``sessions`` aliased ``s``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SessionFilter:
    """Which sessions to select. Every set field narrows the selection (AND)."""

    older_than: float | None = None
    """Last activity strictly before this POSIX time (empty sessions: their start)."""
    newer_than: float | None = None
    """Last activity at or after this POSIX time."""
    before: float | None = None
    """Started strictly before this POSIX time."""
    after: float | None = None
    """Started at or after this POSIX time."""
    source: str | None = None
    end_reason: str | None = None
    user: str | None = None
    chat_id: str | None = None
    chat_type: str | None = None
    provider: str | None = None
    title: str | None = None
    """Case-insensitive substring of the title."""
    model: str | None = None
    """Case-insensitive substring of the model name."""
    branch: str | None = None
    """Case-insensitive substring of the git branch."""
    cwd: str | None = None
    """Path prefix of the working directory (whole path components)."""
    workspace: str | None = None
    """``list --workspace``: part of the workspace path (repo root, else cwd) or its folder name."""
    min_messages: int | None = None
    max_messages: int | None = None
    min_tokens: int | None = None
    max_tokens: int | None = None
    min_cost: float | None = None
    max_cost: float | None = None
    min_tool_calls: int | None = None
    max_tool_calls: int | None = None
    ended_only: bool = False
    """Bulk operations (export with filters, prune, archive) match ended sessions only."""
    include_archived: bool = True
    include_delegates: bool = True
    """False hides delegate/subagent sessions (listings without ``--all``)."""
    session_ids: tuple[str, ...] | None = None
