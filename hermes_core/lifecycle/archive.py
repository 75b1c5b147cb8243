"""Archiving (SPEC L2, L2b): hiding sessions from listings without deleting anything.

An archived session keeps its messages and stays searchable; ``list`` (and the pickers built
on it) leave it out until it is unarchived. Archiving takes ended sessions only and never a
pinned one, nor any member of a compression lineage holding a pinned session.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from dataclasses import dataclass

from hermes_core.selection.filters import SessionFilter, build_where
from hermes_core.store.connection import write_transaction

from .protection import PROTECTED_CTE

_NOT_PINNED = "s.pinned = 0 AND s.id NOT IN (SELECT id FROM pinned_family)"


@dataclass(frozen=True, slots=True)
class ArchiveMatch:
    id: str
    title: str | None
    last_active_at: float
    message_count: int


@dataclass(frozen=True, slots=True)
class ArchivePlan:
    matches: list[ArchiveMatch]
    """Oldest activity first."""
    pinned_count: int
    """Matching sessions left alone because they are pinned (or in a pinned lineage)."""


def archive_selection(selection: SessionFilter) -> SessionFilter:
    """Ended sessions not archived yet."""
    return dataclasses.replace(selection, ended_only=True, include_archived=False)


def plan_archive(connection: sqlite3.Connection, selection: SessionFilter) -> ArchivePlan:
    """The sessions ``selection`` (scoped with :func:`archive_selection`) would archive."""
    where, params = build_where(selection)
    rows = connection.execute(
        PROTECTED_CTE + f"SELECT s.id, s.title, s.last_active_at, s.message_count, {_NOT_PINNED} "
        f"FROM sessions s WHERE {where} ORDER BY s.last_active_at, s.id",
        params,
    ).fetchall()
    matches = [ArchiveMatch(r[0], r[1], r[2], r[3]) for r in rows if r[4]]
    return ArchivePlan(matches, sum(1 for r in rows if not r[4]))


def archive(connection: sqlite3.Connection, session_ids: list[str]) -> int:
    """Archive these sessions in one transaction, re-checking each (ended, not pinned, not
    archived yet); returns how many were archived."""
    if not session_ids:
        return 0
    with write_transaction(connection) as db:
        db.execute(
            PROTECTED_CTE + "UPDATE sessions AS s SET archived = 1 "
            "WHERE s.id IN (SELECT value FROM json_each(?)) AND s.archived = 0 "
            f"AND s.ended_at IS NOT NULL AND {_NOT_PINNED}",
            (json.dumps(session_ids),),
        )
        # The sqlite3 module reports no rowcount for a statement starting with WITH.
        changed: int = db.execute("SELECT changes()").fetchone()[0]
    return changed


def archived_matching(connection: sqlite3.Connection, selection: SessionFilter) -> list[str]:
    """Ids of archived sessions matching ``selection`` (for ``unarchive`` with filters)."""
    where, params = build_where(dataclasses.replace(selection, include_archived=True))
    rows = connection.execute(
        f"SELECT s.id FROM sessions s WHERE {where} AND s.archived = 1 "
        "ORDER BY s.last_active_at, s.id",
        params,
    )
    return [str(row[0]) for row in rows]


def unarchive(connection: sqlite3.Connection, session_ids: list[str]) -> int:
    """Bring sessions back into listings; returns how many changed."""
    if not session_ids:
        return 0
    with write_transaction(connection) as db:
        changed: int = db.execute(
            "UPDATE sessions SET archived = 0 "
            "WHERE id IN (SELECT value FROM json_each(?)) AND archived = 1",
            (json.dumps(session_ids),),
        ).rowcount
    return changed


def archive_stale(
    connection: sqlite3.Connection, idle_days: int, *, now: float | None = None
) -> int:
    """The auto-archive sweep: archive ended sessions idle for ``idle_days`` days or more;
    pinned sessions are exempt. Returns how many were archived."""
    moment = time.time() if now is None else now
    selection = archive_selection(SessionFilter(older_than=moment - idle_days * 86_400))
    plan = plan_archive(connection, selection)
    return archive(connection, [m.id for m in plan.matches])
