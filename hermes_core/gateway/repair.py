"""``hermes sessions repair-routing`` (SPEC G6): re-attach orphaned gateway conversations.

An *orphan* is a session with messages but no routing identity (no session key), of a
platform that has keyed sessions; ``/branch`` and delegate children and imported logs are not
orphans. Each is re-attached to the conversation it continues only on unambiguous evidence:

- **lineage** — its parent is a keyed session of the same platform (a recorded fact; no time
  window applies);
- **contiguity** — exactly one keyed session of the same platform (and, when both say, the same
  user) went quiet within ``max_gap_seconds`` before the orphan started.

Two candidate predecessors, or two orphans claiming one predecessor, are reported as ambiguous
and left alone: a wrong adoption would splice one chat's conversation into another. Adopting
stamps the predecessor's key and chat identity on the orphan, points the key at it, and retires
the predecessor with ``superseded_by_repair`` so restart recovery can never bring it back.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from hermes_core.store.protocol import RoutingTable
from hermes_core.store.routed_sessions import RepairRow

DEFAULT_MAX_GAP_SECONDS = 900.0

Evidence = Literal["lineage", "contiguity"]


@dataclass(frozen=True, slots=True)
class Adoption:
    """What the repair proposes (or did) for one orphan."""

    orphan: RepairRow
    donor: RepairRow | None
    evidence: Evidence | None
    reason: str | None = None
    """Why it is not repairable (None when it is)."""

    @property
    def repairable(self) -> bool:
        return self.donor is not None and self.reason is None

    def describe(self) -> str:
        """The report line(s) for this orphan."""
        head = (
            f"{self.orphan.session_id} ({self.orphan.source}, {self.orphan.message_count} messages)"
        )
        if self.repairable and self.donor is not None:
            return (
                f"{head}\n  → adopt into {self.donor.session_key} (from {self.donor.session_id}, "
                f"evidence: {self.evidence}{self._evidence_detail()})"
            )
        return f"{head}\n  ✗ not repairable — {self.reason}"

    def _evidence_detail(self) -> str:
        if self.donor is None:
            return ""
        if self.evidence == "lineage":
            return ": its parent session"
        gap = self.orphan.started_at - self.donor.real_activity
        return f": went quiet {gap:.0f}s before this session started"


def plan_repairs(
    table: RoutingTable, *, max_gap_seconds: float = DEFAULT_MAX_GAP_SECONDS
) -> list[Adoption]:
    """What repair-routing would do for each orphan (nothing is written)."""
    orphans = table.orphan_candidates()
    keyed = table.keyed_rows(o.source for o in orphans)
    by_id = {row.session_id: row for row in keyed}
    proposals: list[Adoption] = []
    for orphan in orphans:
        parent = by_id.get(orphan.parent_session_id or "")
        if parent is not None and parent.source == orphan.source:
            proposals.append(Adoption(orphan, parent, "lineage"))
            continue
        window = [
            row
            for row in keyed
            if row.source == orphan.source
            and _same_user(row, orphan)
            and orphan.started_at - max_gap_seconds <= row.real_activity <= orphan.started_at
        ]
        if not window:
            proposals.append(
                Adoption(
                    orphan,
                    None,
                    None,
                    f"no keyed predecessor fell quiet within {max_gap_seconds:.0f}s of this "
                    "session's start",
                )
            )
        elif len(window) > 1:
            names = ", ".join(row.session_id for row in window)
            proposals.append(
                Adoption(
                    orphan,
                    None,
                    None,
                    f"ambiguous: more than one keyed predecessor matches this window ({names})",
                )
            )
        else:
            proposals.append(Adoption(orphan, window[0], "contiguity"))
    claims = Counter(p.donor.session_id for p in proposals if p.repairable and p.donor)
    resolved: list[Adoption] = []
    for proposal in proposals:
        donor = proposal.donor
        if proposal.repairable and donor is not None and claims[donor.session_id] > 1:
            resolved.append(
                Adoption(
                    proposal.orphan,
                    None,
                    None,
                    f"ambiguous: {claims[donor.session_id]} orphans claim the predecessor "
                    f"{donor.session_id}",
                )
            )
        else:
            resolved.append(proposal)
    return resolved


def apply_repairs(table: RoutingTable, adoptions: list[Adoption]) -> list[Adoption]:
    """Carry out the repairable adoptions; returns those done."""
    done = []
    for adoption in adoptions:
        if adoption.repairable and adoption.donor is not None and adoption.evidence:
            table.adopt(adoption.orphan.session_id, adoption.donor.session_id, adoption.evidence)
            done.append(adoption)
    return done


def _same_user(row: RepairRow, orphan: RepairRow) -> bool:
    return row.user_id is None or orphan.user_id is None or row.user_id == orphan.user_id
