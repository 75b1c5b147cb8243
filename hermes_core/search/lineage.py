"""Session lineages: a session and its compression continuations and branches are one family.

Discovery returns one result per family. The family is found by following the recorded parent
links (``parent_session_id`` with ``parent_kind`` ``compression`` or ``branch``) up to the
first session that is not such a continuation; that root's id names the family. Delegate
(subagent) and reset children are conversations of their own and form their own families.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_core.store.protocol import SearchIndex

LINEAGE_KINDS = ("compression", "branch")
_MAX_DEPTH = 1000
"""A guard against a parent-link cycle in a damaged store."""


def lineage_roots(index: SearchIndex, session_ids: Iterable[str]) -> dict[str, str]:
    """Each session id → the id of its lineage's root (itself when it has no such parent)."""
    ids = list(dict.fromkeys(session_ids))
    roots = index.lineage_roots(ids, _MAX_DEPTH)
    for session_id in ids:
        roots.setdefault(session_id, session_id)
    return roots
