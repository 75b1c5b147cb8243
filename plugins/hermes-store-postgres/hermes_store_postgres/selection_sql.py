"""A session selection (SPEC F1) as one parameterised PostgreSQL condition over ``sessions``
aliased ``s``: ``hermes_core.store.selection_sql`` writes it, in PostgreSQL's words for the
few parts SQLite says differently."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.store.selection_sql import SelectionDialect
from hermes_core.store.selection_sql import build_where as build_selection_where

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter

POSTGRES = SelectionDialect(
    mark="%s",
    contains="strpos({text}, {part}) > 0",
    ids=lambda ids: ("s.id = ANY(?::text[])", list(ids)),
    always="TRUE",
)


def build_where(selection: SessionFilter) -> tuple[str, list[object]]:
    """One condition (AND of every set field) and its parameters; ``TRUE`` when empty."""
    return build_selection_where(selection, POSTGRES)
