"""Which sessions an export covers, streamed in groups that each become one record.

Selection goes through the core's filter module alone (SPEC F1): ``--session-id`` names one
session; filters select ended sessions in bulk; neither means every session (active ones
included) — or, for formats that say so, the most recently active session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from hermes_core.selection.filters import SessionFilter
from hermes_core.store.protocol import Store

from .request import LineageMode

TargetKind = Literal["single", "latest", "bulk", "everything"]


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

    def session_ids(self, store: Store) -> Iterator[str]:
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
        yield from store.iter_parents_first(self.selection)

    def groups(self, store: Store, lineage: LineageMode) -> Iterator[tuple[str, ...]]:
        """The session ids of each record to export, in order.

        ``single``: one id per record. ``logical``: a selected session's whole compression
        lineage, oldest first, once per lineage however many of its sessions matched.
        """
        seen_roots: set[str] = set()
        for session_id in self.session_ids(store):
            if lineage == "single":
                yield (session_id,)
                continue
            root = store.compression_root(session_id)
            if root in seen_roots:
                continue
            seen_roots.add(root)
            yield tuple(store.compression_lineage(session_id))


def resolve_targets(
    store: Store,
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
