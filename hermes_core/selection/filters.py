"""The one selection of sessions (SPEC F1), shared by list, export, prune and archive.

A :class:`SessionFilter` holds already-parsed values; :func:`build_where` turns it into one
parameterised SQL condition over ``sessions`` aliased ``s``.
"""

from __future__ import annotations

import json
import os
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


_EXACT_COLUMNS = {
    "source": "s.source",
    "end_reason": "s.end_reason",
    "user": "s.user_id",
    "chat_id": "s.chat_id",
    "chat_type": "s.chat_type",
    "provider": "s.billing_provider",
}
_SUBSTRING_COLUMNS = {"title": "s.title", "model": "s.model", "branch": "s.git_branch"}
_TIME_CONDITIONS = {
    "older_than": "s.last_active_at < ?",
    "newer_than": "s.last_active_at >= ?",
    "before": "s.started_at < ?",
    "after": "s.started_at >= ?",
}
_MEASURES = {
    "messages": "s.message_count",
    "tokens": "(s.input_tokens + s.output_tokens)",
    "cost": "coalesce(s.cost_actual_usd, s.cost_estimated_usd)",
    "tool_calls": "s.tool_call_count",
}
"""Numeric bounds: ``min_<name>``/``max_<name>`` (inclusive) compare against these
expressions. A session without any cost never matches a cost bound (NULL compares false)."""


def build_where(selection: SessionFilter) -> tuple[str, list[object]]:
    """One parameterised SQL condition over ``sessions`` aliased ``s`` (AND of every set field).

    An empty filter gives ``"1"`` and no parameters.
    """
    conditions: list[str] = []
    params: list[object] = []

    def add(condition: str, *values: object) -> None:
        conditions.append(condition)
        params.extend(values)

    for name, condition in _TIME_CONDITIONS.items():
        point = getattr(selection, name)
        if point is not None:
            add(condition, point)
    for name, column in _EXACT_COLUMNS.items():
        value = getattr(selection, name)
        if value is not None:
            add(f"{column} = ?", value)
    for name, column in _SUBSTRING_COLUMNS.items():
        value = getattr(selection, name)
        if value is not None:
            # instr() takes the text literally: % and _ in a title are no wildcards.
            add(f"instr(lower({column}), lower(?)) > 0", value)
    if selection.cwd is not None:
        directory = _without_trailing_slash(selection.cwd)
        prefix = directory + "/" if directory != "/" else "/"
        add("(s.cwd = ? OR substr(s.cwd, 1, ?) = ?)", directory, len(prefix), prefix)
    if selection.workspace is not None:
        # The folder-name rule needs no clause of its own: a path contains its last folder name.
        fragment = _without_trailing_slash(os.path.expanduser(selection.workspace))
        add("instr(coalesce(s.git_repo_root, s.cwd), ?) > 0", fragment)
    for measure, expression in _MEASURES.items():
        low = getattr(selection, f"min_{measure}")
        high = getattr(selection, f"max_{measure}")
        if low is not None:
            add(f"{expression} >= ?", low)
        if high is not None:
            add(f"{expression} <= ?", high)
    if selection.ended_only:
        add("s.ended_at IS NOT NULL")
    if not selection.include_archived:
        add("s.archived = 0")
    if not selection.include_delegates:
        add("(s.parent_kind IS NULL OR s.parent_kind != 'delegate')")
    if selection.session_ids is not None:
        # One JSON parameter instead of one per id: no limit on how many ids are selected.
        add("s.id IN (SELECT value FROM json_each(?))", json.dumps(list(selection.session_ids)))
    if not conditions:
        return "1", []
    return " AND ".join(conditions), params


def _without_trailing_slash(path: str) -> str:
    """``/a/b/`` → ``/a/b``; the root stays ``/``."""
    stripped = path.rstrip("/")
    return stripped if stripped or not path else "/"
