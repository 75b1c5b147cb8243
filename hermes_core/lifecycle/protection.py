"""Which sessions prune and archive leave alone, as SQL over ``sessions``.

* every pinned session, and the whole compression lineage a pinned session belongs to (its
  compression ancestors and continuations), with their delegate/subagent sessions;
* every session with a pinned or still running session, or a protected one, among its
  delegate/subagent sessions at any depth — deleting a session takes its delegates with it,
  so such a family is kept whole.

:data:`PROTECTED_CTE` defines a ``protected(id)`` table for use as ``WITH RECURSIVE …``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

PROTECTED_CTE = """
WITH RECURSIVE
  pinned_up(id) AS (
    SELECT id FROM sessions WHERE pinned = 1
    UNION
    SELECT p.parent_session_id FROM sessions p JOIN pinned_up u ON p.id = u.id
    WHERE p.parent_kind = 'compression' AND p.parent_session_id IS NOT NULL
  ),
  pinned_family(id) AS (
    SELECT id FROM pinned_up
    UNION
    SELECT c.id FROM sessions c JOIN pinned_family f ON c.parent_session_id = f.id
    WHERE c.parent_kind IN ('compression', 'delegate')
  ),
  busy_up(id) AS (
    SELECT d.id FROM sessions d
    WHERE d.parent_kind = 'delegate'
      AND (d.pinned = 1 OR d.ended_at IS NULL OR d.id IN (SELECT id FROM pinned_family))
    UNION
    SELECT d.parent_session_id FROM sessions d JOIN busy_up b ON d.id = b.id
    WHERE d.parent_kind = 'delegate' AND d.parent_session_id IS NOT NULL
  ),
  protected(id) AS (SELECT id FROM pinned_family UNION SELECT id FROM busy_up)
"""


def still_eligible(db: sqlite3.Connection, session_ids: Sequence[str]) -> list[str]:
    """Those of ``session_ids`` that may still be pruned right now: they exist, are ended,
    unpinned and unprotected (a session may have been pinned or resumed since the plan)."""
    rows = db.execute(
        PROTECTED_CTE
        + "SELECT s.id FROM sessions s WHERE s.id IN (SELECT value FROM json_each(?)) "
        "AND s.ended_at IS NOT NULL AND s.pinned = 0 "
        "AND s.id NOT IN (SELECT id FROM protected)",
        (json.dumps(list(session_ids)),),
    )
    return [str(row[0]) for row in rows]


def with_delegates(db: sqlite3.Connection, session_ids: Sequence[str]) -> list[str]:
    """``session_ids`` followed by their delegate/subagent sessions at any depth."""
    rows = db.execute(
        "WITH RECURSIVE family(id) AS ("
        "  SELECT value FROM json_each(?)"
        "  UNION"
        "  SELECT c.id FROM sessions c JOIN family f ON c.parent_session_id = f.id"
        "  WHERE c.parent_kind = 'delegate'"
        ") SELECT id FROM family",
        (json.dumps(list(session_ids)),),
    )
    found = list(dict.fromkeys([*session_ids, *(str(row[0]) for row in rows)]))
    return found
