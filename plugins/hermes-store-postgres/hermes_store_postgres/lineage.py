"""Compression lineages, delegate children and the export order, as PostgreSQL over
``sessions`` (the meaning of ``hermes_core/store/lineage_queries.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from hermes_core.store.lineage_queries import SessionsChanged

from . import writes
from .selection_sql import build_where

if TYPE_CHECKING:
    import psycopg

    from hermes_core.selection.filters import SessionFilter

    Db = psycopg.Connection[tuple[Any, ...]]

MAX_DEPTH = 10_000
"""A guard against a parent-link cycle in a damaged store."""


def compression_root(db: Db, session_id: str) -> str:
    row = db.execute(
        "WITH RECURSIVE up(id, parent, kind, depth) AS ("
        "  SELECT id, parent_session_id, parent_kind, 0 FROM sessions WHERE id = %s"
        "  UNION ALL"
        "  SELECT s.id, s.parent_session_id, s.parent_kind, up.depth + 1"
        "  FROM up JOIN sessions s ON s.id = up.parent"
        "  WHERE up.kind = 'compression' AND up.depth < %s"
        ") SELECT id FROM up ORDER BY depth DESC LIMIT 1",
        (session_id, MAX_DEPTH),
    ).fetchone()
    return str(row[0]) if row else session_id


def compression_lineage(db: Db, session_id: str) -> list[str]:
    root = compression_root(db, session_id)
    rows = db.execute(
        "WITH RECURSIVE down(id, started, depth) AS ("
        "  SELECT id, started_at, 0 FROM sessions WHERE id = %s"
        "  UNION"
        "  SELECT s.id, s.started_at, down.depth + 1 FROM down"
        "  JOIN sessions s ON s.parent_session_id = down.id AND s.parent_kind = 'compression'"
        "  WHERE down.depth < %s"
        ") SELECT id FROM down GROUP BY id ORDER BY min(depth), min(started), id",
        (root, MAX_DEPTH),
    ).fetchall()
    return [str(row[0]) for row in rows]


def delegate_children(db: Db, session_id: str) -> tuple[str, ...]:
    rows = db.execute(
        "SELECT id FROM sessions WHERE parent_session_id = %s AND parent_kind = 'delegate' "
        "ORDER BY started_at, id",
        (session_id,),
    ).fetchall()
    return tuple(str(row[0]) for row in rows)


def delegate_tree(db: Db, session_id: str) -> list[str]:
    found = [session_id]
    frontier = [session_id]
    while frontier:
        following: list[str] = []
        for parent in frontier:
            for child in delegate_children(db, parent):
                if child not in found:
                    found.append(child)
                    following.append(child)
        frontier = following
    return found


def iter_parents_first(db: Db, selection: SessionFilter) -> Iterator[str]:
    """The ids of ``selection``, parents first (depth in the parent links, then start)."""
    where, params = build_where(selection)
    rows = db.execute(
        "WITH RECURSIVE depth(id, level) AS ("
        "  SELECT id, 0 FROM sessions WHERE parent_session_id IS NULL"
        "    OR parent_session_id NOT IN (SELECT id FROM sessions)"
        "  UNION ALL"
        "  SELECT s.id, depth.level + 1 FROM sessions s JOIN depth ON s.parent_session_id = depth.id"
        "  WHERE depth.level < %s"
        f") SELECT s.id FROM sessions s LEFT JOIN depth d ON d.id = s.id WHERE {where} "
        "ORDER BY coalesce(d.level, 0), s.started_at, s.id",
        [MAX_DEPTH, *params],
    ).fetchall()
    for row in rows:
        yield str(row[0])


def delete_exactly(db: Db, session_id: str, expected_messages: Mapping[str, int]) -> list[str]:
    """Inside the caller's transaction: delete ``session_id`` and its delegates if they are
    exactly ``expected_messages`` with those message counts, else raise SessionsChanged."""
    current = delegate_tree(db, session_id)
    if set(current) != set(expected_messages):
        added = sorted(set(current) - set(expected_messages))
        gone = sorted(set(expected_messages) - set(current))
        change = ", ".join(
            part
            for part in (
                f"new: {' '.join(added)}" if added else "",
                f"gone: {' '.join(gone)}" if gone else "",
            )
            if part
        )
        raise SessionsChanged(
            f"the delegate sessions of {session_id} changed during the export ({change}); "
            "nothing was deleted"
        )
    for target, expected in expected_messages.items():
        row = db.execute(
            "SELECT count(*) FROM messages WHERE session_id = %s", (target,)
        ).fetchone()
        found = int(row[0]) if row else 0
        if found != expected:
            raise SessionsChanged(
                f"session {target} changed during the export ({found} messages now, "
                f"{expected} exported); nothing was deleted"
            )
    writes.delete_sessions(db, current)
    return current
