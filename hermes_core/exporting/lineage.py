"""Compression lineages and delegate children, as the export engine needs them.

A compression lineage is a chain of sessions, each a ``compression`` continuation of the one
before (SPEC S6); ``--lineage logical`` exports it as one conversation. Branches (``/branch``)
are conversations of their own and are not part of it. Delegate (subagent) sessions work for
a parent and are listed as its ``children``.
"""

from __future__ import annotations

import sqlite3

_MAX_DEPTH = 10_000
"""A guard against a parent-link cycle in a damaged store."""


def compression_root(connection: sqlite3.Connection, session_id: str) -> str:
    """The first session of ``session_id``'s compression lineage (itself when it has none)."""
    rows = connection.execute(
        "WITH RECURSIVE up(id, parent, kind, depth) AS ("
        "  SELECT id, parent_session_id, parent_kind, 0 FROM sessions WHERE id = ?"
        "  UNION ALL"
        "  SELECT s.id, s.parent_session_id, s.parent_kind, up.depth + 1"
        "  FROM up JOIN sessions s ON s.id = up.parent"
        "  WHERE up.kind = 'compression' AND up.depth < ?"
        ") SELECT id FROM up ORDER BY depth DESC LIMIT 1",
        (session_id, _MAX_DEPTH),
    ).fetchone()
    return str(rows[0]) if rows else session_id


def compression_lineage(connection: sqlite3.Connection, session_id: str) -> list[str]:
    """Every session of ``session_id``'s compression lineage, oldest first."""
    root = compression_root(connection, session_id)
    rows = connection.execute(
        "WITH RECURSIVE down(id, started, depth) AS ("
        "  SELECT id, started_at, 0 FROM sessions WHERE id = ?"
        "  UNION"
        "  SELECT s.id, s.started_at, down.depth + 1 FROM down"
        "  JOIN sessions s ON s.parent_session_id = down.id AND s.parent_kind = 'compression'"
        "  WHERE down.depth < ?"
        ") SELECT id FROM down GROUP BY id ORDER BY min(depth), min(started), id",
        (root, _MAX_DEPTH),
    )
    return [str(row[0]) for row in rows]


def delegate_children(connection: sqlite3.Connection, session_id: str) -> tuple[str, ...]:
    """The delegate/subagent sessions working directly for ``session_id``, oldest first."""
    rows = connection.execute(
        "SELECT id FROM sessions WHERE parent_session_id = ? AND parent_kind = 'delegate' "
        "ORDER BY started_at, id",
        (session_id,),
    )
    return tuple(str(row[0]) for row in rows)


def delegate_tree(connection: sqlite3.Connection, session_id: str) -> list[str]:
    """``session_id`` and every delegate working for it, recursively (what deleting it removes)."""
    found = [session_id]
    frontier = [session_id]
    while frontier:
        next_frontier: list[str] = []
        for parent in frontier:
            for child in delegate_children(connection, parent):
                if child not in found:
                    found.append(child)
                    next_frontier.append(child)
        frontier = next_frontier
    return found
