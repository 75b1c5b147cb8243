"""The SQL of a session selection (SPEC F1): a :class:`~hermes_core.selection.filters.
SessionFilter` as one parameterised condition over ``sessions`` aliased ``s``.

Every store method that takes a filter (listing, export, prune, archive, browse) builds its
statement with :func:`build_where`. Another backend passes its own :class:`SelectionDialect`
for the few parts SQL dialects write differently (the PostgreSQL store does).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter


@dataclass(frozen=True, slots=True)
class SelectionDialect:
    """What a backend's SQL writes its own way in a selection's condition."""

    mark: str
    """The parameter placeholder."""
    contains: str
    """True when ``{part}`` occurs in ``{text}``, taken literally (no wildcards)."""
    ids: Callable[[Sequence[str]], tuple[str, object]]
    """The condition "``s.id`` is one of these ids" (any number of them; ``?`` for the one
    parameter) and that parameter."""
    always: str
    """The condition of an empty filter."""


SQLITE = SelectionDialect(
    mark="?",
    contains="instr({text}, {part}) > 0",
    # One JSON parameter instead of one per id: no limit on how many ids are selected.
    ids=lambda ids: ("s.id IN (SELECT value FROM json_each(?))", json.dumps(list(ids))),
    always="1",
)

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
SESSION_TOKENS_SQL = (
    "(s.input_tokens + s.cache_read_tokens + s.cache_write_tokens + s.output_tokens)"
)
"""Every token a session's model read or wrote: input, prompt-cache reads and writes, output
(what ``--min-tokens``, the largest sessions of ``insights`` and its activity count)."""

_MEASURES = {
    "messages": "s.message_count",
    "tokens": SESSION_TOKENS_SQL,
    "cost": "coalesce(s.cost_actual_usd, s.cost_estimated_usd)",
    "tool_calls": "s.tool_call_count",
}
"""Numeric bounds: ``min_<name>``/``max_<name>`` (inclusive) compare against these
expressions. A session without any cost never matches a cost bound (NULL compares false)."""


def build_where(
    selection: SessionFilter, dialect: SelectionDialect = SQLITE
) -> tuple[str, list[object]]:
    """One parameterised SQL condition over ``sessions`` aliased ``s`` (AND of every set field).

    An empty filter gives ``dialect.always`` and no parameters.
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
            # Taken literally: % and _ in a title are no wildcards.
            add(dialect.contains.format(text=f"lower({column})", part="lower(?)"), value)
    if selection.cwd is not None:
        directory = _without_trailing_slash(selection.cwd)
        prefix = directory + "/" if directory != "/" else "/"
        add("(s.cwd = ? OR substr(s.cwd, 1, ?) = ?)", directory, len(prefix), prefix)
    if selection.workspace is not None:
        # The folder-name rule needs no clause of its own: a path contains its last folder name.
        fragment = _without_trailing_slash(os.path.expanduser(selection.workspace))
        add(dialect.contains.format(text="coalesce(s.git_repo_root, s.cwd)", part="?"), fragment)
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
        add(*dialect.ids(selection.session_ids))
    if not conditions:
        return dialect.always, []
    where = " AND ".join(conditions)  # no condition holds a literal "?": every value is a mark
    return (where if dialect.mark == "?" else where.replace("?", dialect.mark)), params


def _without_trailing_slash(path: str) -> str:
    """``/a/b/`` → ``/a/b``; the root stays ``/``."""
    stripped = path.rstrip("/")
    return stripped if stripped or not path else "/"
