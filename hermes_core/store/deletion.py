"""Deleting sessions, written once for every backend in the SQL both stores take (see
:mod:`.statements`): finding a deletion's delegates and deleting session rows with their
messages.

A session's delegate/subagent sessions work for it and go with it (:func:`with_delegates`);
its other children (compression continuations, branches) stay and lose their parent link.
Whatever a backend keeps apart from the rows to index messages (SQLite's full-text tables)
it drops itself, when :func:`delete_sessions` asks (``unindex``) before the messages go; the
PostgreSQL search columns go with the row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .statements import Sql


def with_delegates(sql: Sql, session_ids: Sequence[str]) -> list[str]:
    """``session_ids`` followed by their delegate/subagent sessions at any depth (each id
    once)."""
    if not session_ids:
        return []
    parents, ids = sql.in_ids("c.parent_session_id", session_ids)
    rows = sql.execute(
        "WITH RECURSIVE family(id) AS ("
        f"  SELECT c.id FROM sessions c WHERE c.parent_kind = 'delegate' AND {parents}"
        "  UNION"
        "  SELECT c.id FROM sessions c JOIN family f ON c.parent_session_id = f.id"
        "  WHERE c.parent_kind = 'delegate'"
        ") SELECT id FROM family",
        (ids,),
    ).fetchall()
    return list(dict.fromkeys([*session_ids, *(str(row[0]) for row in rows)]))


Unindex = Callable[[str, Sequence[object]], None]
"""A backend's drop of the search entries it keeps apart from the rows, of the messages
matching a condition (on table ``messages``) and its parameters."""


def delete_sessions(sql: Sql, session_ids: Sequence[str], unindex: Unindex | None = None) -> int:
    """Inside a transaction: delete sessions with their messages (``unindex`` first drops
    their search entries, when the backend keeps them apart); children that are not deleted
    lose their parent link (and its kind); system prompts no session uses any more go too.
    Returns how many sessions were deleted."""
    if not session_ids:
        return 0
    parents, ids = sql.in_ids("parent_session_id", session_ids)
    deleted, _ = sql.in_ids("id", session_ids)
    owned, _ = sql.in_ids("session_id", session_ids)
    if unindex is not None:
        unindex(owned, [ids])
    sql.execute(
        "UPDATE sessions SET parent_session_id = NULL, parent_kind = NULL "
        f"WHERE {parents} AND NOT ({deleted})",
        (ids, ids),
    )
    sql.execute(f"DELETE FROM messages WHERE {owned}", (ids,))
    total = sql.execute(f"DELETE FROM sessions WHERE {deleted}", (ids,)).rowcount
    sql.execute(
        "DELETE FROM system_prompts WHERE hash IN (SELECT hash FROM system_prompts "
        "EXCEPT SELECT system_prompt_hash FROM sessions WHERE system_prompt_hash IS NOT NULL)"
    )
    return total
