"""Compression lineages, delegate children and the export order, as SQL over ``sessions``
that both stores take (see :mod:`.statements`).

The export engine and deletion reach these through the session facade
(:class:`~.facade.StoreFacade`: ``compression_root``, ``compression_lineage``,
``delegate_children``, ``delegate_tree``, ``iter_parents_first``, ``delete_exactly``).

A compression lineage is a chain of sessions, each a ``compression`` continuation of the one
before (SPEC S6); ``--lineage logical`` exports it as one conversation. Branches (``/branch``)
are conversations of their own and are not part of it. Delegate (subagent) sessions work for
a parent and are listed as its ``children``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from .errors import StoreError
from .statements import Sql

_MAX_DEPTH = 10_000
"""A guard against a parent-link cycle in a damaged store."""


def compression_root(sql: Sql, session_id: str) -> str:
    """The first session of ``session_id``'s compression lineage (itself when it has none)."""
    row = sql.execute(
        "WITH RECURSIVE up(id, parent, kind, depth) AS ("
        "  SELECT id, parent_session_id, parent_kind, 0 FROM sessions WHERE id = ?"
        "  UNION ALL"
        "  SELECT s.id, s.parent_session_id, s.parent_kind, up.depth + 1"
        "  FROM up JOIN sessions s ON s.id = up.parent"
        "  WHERE up.kind = 'compression' AND up.depth < ?"
        ") SELECT id FROM up ORDER BY depth DESC LIMIT 1",
        (session_id, _MAX_DEPTH),
    ).fetchone()
    return str(row[0]) if row else session_id


def compression_lineage(sql: Sql, session_id: str) -> list[str]:
    """Every session of ``session_id``'s compression lineage, oldest first."""
    root = compression_root(sql, session_id)
    rows = sql.execute(
        "WITH RECURSIVE down(id, started, depth) AS ("
        "  SELECT id, started_at, 0 FROM sessions WHERE id = ?"
        "  UNION"
        "  SELECT s.id, s.started_at, down.depth + 1 FROM down"
        "  JOIN sessions s ON s.parent_session_id = down.id AND s.parent_kind = 'compression'"
        "  WHERE down.depth < ?"
        ") SELECT id FROM down GROUP BY id ORDER BY min(depth), min(started), id",
        (root, _MAX_DEPTH),
    ).fetchall()
    return [str(row[0]) for row in rows]


def delegate_children(sql: Sql, session_id: str) -> tuple[str, ...]:
    """The delegate/subagent sessions working directly for ``session_id``, oldest first."""
    rows = sql.execute(
        "SELECT id FROM sessions WHERE parent_session_id = ? AND parent_kind = 'delegate' "
        "ORDER BY started_at, id",
        (session_id,),
    ).fetchall()
    return tuple(str(row[0]) for row in rows)


def child_sessions(sql: Sql, session_id: str) -> list[tuple[str, str]]:
    """(id, parent kind) of every session whose parent is ``session_id``, oldest first."""
    rows = sql.execute(
        "SELECT id, coalesce(parent_kind, '') FROM sessions WHERE parent_session_id = ? "
        "ORDER BY started_at, id",
        (session_id,),
    ).fetchall()
    return [(str(row[0]), str(row[1])) for row in rows]


def delegate_tree(sql: Sql, session_id: str) -> list[str]:
    """``session_id`` and every delegate working for it, recursively (what deleting it removes)."""
    found = [session_id]
    frontier = [session_id]
    while frontier:
        next_frontier: list[str] = []
        for parent in frontier:
            for child in delegate_children(sql, parent):
                if child not in found:
                    found.append(child)
                    next_frontier.append(child)
        frontier = next_frontier
    return found


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


def iter_parents_first(sql: Sql, where: str, params: Sequence[object]) -> Iterator[str]:
    """The ids of the sessions matching ``where`` (a selection's condition over ``sessions s``),
    parents first (by depth in the parent links, then start time); sessions of a parent-link
    cycle in a damaged store sort as roots."""
    cursor = sql.execute(
        f"{_PARENTS_FIRST} SELECT s.id FROM sessions s LEFT JOIN depth d ON d.id = s.id "
        f"WHERE {where} ORDER BY coalesce(d.level, 0), s.started_at, s.id",
        [_MAX_DEPTH, *params],
    )
    while rows := cursor.fetchmany(500):
        for row in rows:
            yield str(row[0])


class SessionsChanged(StoreError):
    """The sessions to delete are not the ones expected; nothing was deleted."""


def unchanged_tree(sql: Sql, session_id: str, expected_messages: Mapping[str, int]) -> list[str]:
    """Inside the caller's write transaction: ``session_id`` and its delegates, provided they
    are exactly the sessions of ``expected_messages`` with exactly those message counts (what
    ``delete_exactly`` then deletes); raises :class:`SessionsChanged` otherwise."""
    current = delegate_tree(sql, session_id)
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
        row = sql.execute(
            "SELECT count(*) FROM messages WHERE session_id = ?", (target,)
        ).fetchone()
        found = int(row[0]) if row else 0
        if found != expected:
            raise SessionsChanged(
                f"session {target} changed during the export ({found} messages now, "
                f"{expected} exported); nothing was deleted"
            )
    return current
