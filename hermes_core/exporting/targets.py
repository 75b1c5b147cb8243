"""Which sessions an export covers, streamed in groups that each become one record.

Selection goes through the core's filter module alone (SPEC F1): ``--session-id`` names one
session; filters select ended sessions in bulk; neither means every session (active ones
included) — or, for formats that say so, the most recently active session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from hermes_core.selection.filters import SessionFilter, build_where
from hermes_core.store import SessionStore

from .lineage import compression_lineage, compression_root
from .request import LineageMode

TargetKind = Literal["single", "latest", "bulk", "everything"]

_MAX_DEPTH = 10_000
"""A guard against a parent-link cycle in a damaged store (its sessions sort as roots)."""
_PARENTS_FIRST = (
    "WITH RECURSIVE depth(id, level) AS ("
    "  SELECT id, 0 FROM sessions WHERE parent_session_id IS NULL"
    "    OR parent_session_id NOT IN (SELECT id FROM sessions)"
    "  UNION ALL"
    "  SELECT s.id, depth.level + 1 FROM sessions s JOIN depth ON s.parent_session_id = depth.id"
    "  WHERE depth.level < ?"
    ")"
)
"""Every session's distance from the first session of its parent chain."""


@dataclass(frozen=True, slots=True)
class ExportTargets:
    """The resolved selection of an export."""

    kind: TargetKind
    selection: SessionFilter
    session_id: str | None = None

    @property
    def single_session(self) -> bool:
        """Exactly one session (or one lineage) is exported."""
        return self.kind in ("single", "latest")

    def session_ids(self, store: SessionStore) -> Iterator[str]:
        """The selected session ids, streamed from the store.

        Bulk selections come parents first (by depth in the parent links, then start time),
        so a parent is exported before its delegates, branches and continuations whatever
        their clocks say: a backup then restores every link in one pass.
        """
        if self.kind == "single":
            assert self.session_id is not None
            yield self.session_id
            return
        if self.kind == "latest":
            for session in store.iter_selected(self.selection, newest_first=True, limit=1):
                yield session.id
            return
        where, params = build_where(self.selection)
        cursor = store.connection.execute(
            f"{_PARENTS_FIRST} SELECT s.id FROM sessions s LEFT JOIN depth d ON d.id = s.id "
            f"WHERE {where} ORDER BY coalesce(d.level, 0), s.started_at, s.id",
            [_MAX_DEPTH, *params],
        )
        while rows := cursor.fetchmany(500):
            for row in rows:
                yield str(row[0])

    def groups(self, store: SessionStore, lineage: LineageMode) -> Iterator[tuple[str, ...]]:
        """The session ids of each record to export, in order.

        ``single``: one id per record. ``logical``: a selected session's whole compression
        lineage, oldest first, once per lineage however many of its sessions matched.
        """
        seen_roots: set[str] = set()
        for session_id in self.session_ids(store):
            if lineage == "single":
                yield (session_id,)
                continue
            root = compression_root(store.connection, session_id)
            if root in seen_roots:
                continue
            seen_roots.add(root)
            yield tuple(compression_lineage(store.connection, session_id))


def resolve_targets(
    store: SessionStore,
    *,
    session_reference: str | None,
    bulk_selection: SessionFilter,
    latest_by_default: bool,
) -> ExportTargets:
    """The targets for a ``--session-id`` reference or the bulk filters (never both: the
    caller checks). ``bulk_selection`` has ``ended_only`` set; it is used only when it narrows."""
    if session_reference is not None:
        session_id = store.resolve(session_reference)
        return ExportTargets("single", SessionFilter(session_ids=(session_id,)), session_id)
    if bulk_selection.has_attribute_filters:
        return ExportTargets("bulk", bulk_selection)
    if latest_by_default:
        return ExportTargets("latest", SessionFilter())
    return ExportTargets("everything", SessionFilter())
