"""Session lineages: a session and its compression continuations and branches are one family.

Discovery returns one result per family. The family is found by following the recorded parent
links (``parent_session_id`` with ``parent_kind`` ``compression`` or ``branch``) up to the
first session that is not such a continuation; that root's id names the family. Delegate
(subagent) and reset children are conversations of their own and form their own families.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

LINEAGE_KINDS = ("compression", "branch")
_MAX_DEPTH = 1000
"""A guard against a parent-link cycle in a damaged store."""


def lineage_roots(connection: sqlite3.Connection, session_ids: Iterable[str]) -> dict[str, str]:
    """Each session id → the id of its lineage's root (itself when it has no such parent)."""
    ids = list(dict.fromkeys(session_ids))
    roots: dict[str, str] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" for _ in chunk)
        rows = connection.execute(
            "WITH RECURSIVE up(start, id, parent, kind, depth) AS ("
            "  SELECT id, id, parent_session_id, parent_kind, 0 FROM sessions "
            f"  WHERE id IN ({marks})"
            "  UNION ALL"
            "  SELECT up.start, s.id, s.parent_session_id, s.parent_kind, up.depth + 1 "
            "  FROM up JOIN sessions s ON s.id = up.parent "
            "  WHERE up.kind IN ('compression', 'branch') AND up.depth < ?"
            ") SELECT start, id FROM up ORDER BY start, depth",
            [*chunk, _MAX_DEPTH],
        )
        for session_id, ancestor in rows:
            roots[session_id] = ancestor  # the deepest ancestor comes last
    for session_id in ids:
        roots.setdefault(session_id, session_id)
    return roots
