"""The one selection of sessions (SPEC F1), shared by list, export, prune and archive.

A :class:`SessionFilter` holds already-parsed values; the store turns it into one
parameterised condition (for SQLite: :func:`hermes_core.store.selection_sql.build_where`),
so every backend selects by the same filter.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from .timespec import FilterError

__all__ = ["FilterError", "SessionFilter", "build_where"]

_NOT_NARROWING = frozenset({"ended_only", "include_archived", "include_delegates"})
"""Fields that scope every selection of a command; they are not filters a person chose."""


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
    """Only these sessions (an empty tuple matches nothing)."""

    @property
    def has_attribute_filters(self) -> bool:
        """Whether any narrowing filter is set (anything but ``ended_only``,
        ``include_archived`` and ``include_delegates``).

        ``prune`` drops its implicit 90-day cut-off when this is true (SPEC L1); ``archive``
        and bulk ``export`` refuse to run when it is false (SPEC L2, X3).
        """
        return any(
            getattr(self, field.name) is not None
            for field in fields(self)
            if field.name not in _NOT_NARROWING
        )

    @property
    def is_bulk(self) -> bool:
        """Same as :attr:`has_attribute_filters`: the selection was narrowed by filters."""
        return self.has_attribute_filters


def build_where(selection: SessionFilter) -> tuple[str, list[object]]:
    """One parameterised SQL condition over ``sessions`` aliased ``s`` (AND of every set field);
    the SQL lives with the store (:mod:`hermes_core.store.selection_sql`), which every
    selecting method calls with the filter itself."""
    from hermes_core.store.selection_sql import build_where as where

    return where(selection)
