"""A session selection (SPEC F1) as one parameterised PostgreSQL condition over ``sessions``
aliased ``s`` — the same meaning as ``hermes_core.store.selection_sql`` gives it in SQLite."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter

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
    "older_than": "s.last_active_at < %s",
    "newer_than": "s.last_active_at >= %s",
    "before": "s.started_at < %s",
    "after": "s.started_at >= %s",
}
_MEASURES = {
    "messages": "s.message_count",
    "tokens": "(s.input_tokens + s.output_tokens)",
    "cost": "coalesce(s.cost_actual_usd, s.cost_estimated_usd)",
    "tool_calls": "s.tool_call_count",
}


def build_where(selection: SessionFilter) -> tuple[str, list[object]]:
    """One condition (AND of every set field) and its parameters; ``TRUE`` when empty."""
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
            add(f"{column} = %s", value)
    for name, column in _SUBSTRING_COLUMNS.items():
        value = getattr(selection, name)
        if value is not None:
            # strpos() takes the text literally: % and _ in a title are no wildcards.
            add(f"strpos(lower({column}), lower(%s)) > 0", value)
    if selection.cwd is not None:
        directory = _without_trailing_slash(selection.cwd)
        prefix = directory + "/" if directory != "/" else "/"
        add("(s.cwd = %s OR left(s.cwd, %s) = %s)", directory, len(prefix), prefix)
    if selection.workspace is not None:
        fragment = _without_trailing_slash(os.path.expanduser(selection.workspace))
        add("strpos(coalesce(s.git_repo_root, s.cwd), %s) > 0", fragment)
    for measure, expression in _MEASURES.items():
        low = getattr(selection, f"min_{measure}")
        high = getattr(selection, f"max_{measure}")
        if low is not None:
            add(f"{expression} >= %s", low)
        if high is not None:
            add(f"{expression} <= %s", high)
    if selection.ended_only:
        add("s.ended_at IS NOT NULL")
    if not selection.include_archived:
        add("s.archived = 0")
    if not selection.include_delegates:
        add("(s.parent_kind IS NULL OR s.parent_kind != 'delegate')")
    if selection.session_ids is not None:
        add("s.id = ANY(%s::text[])", list(selection.session_ids))
    if not conditions:
        return "TRUE", []
    return " AND ".join(conditions), params


def _without_trailing_slash(path: str) -> str:
    stripped = path.rstrip("/")
    return stripped if stripped or not path else "/"
