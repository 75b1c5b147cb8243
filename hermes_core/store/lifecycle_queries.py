"""Every SQL statement of prune, archive, the lifecycle lock and the automatic clean-up.

:mod:`hermes_core.lifecycle` decides what to prune or archive, when, and under which lock;
this module is the only place it reads or writes the store. The plans (:func:`plan_rows`),
the running count and the archived ids are the statements both stores take; the PostgreSQL
plugin runs them too. :class:`SqliteLifecycle`
implements :class:`~hermes_core.store.protocol.LifecycleQueries`; its
:meth:`~SqliteLifecycle.transaction` is one ``BEGIN IMMEDIATE`` transaction, within which the
lock row is checked and taken atomically across processes.

What prune and archive leave alone is :data:`PROTECTED_CTE`: every pinned session and the
whole compression lineage a pinned session belongs to, with their delegates; and every
session with a pinned, still running or protected session among its delegates at any depth
(deleting a session takes its delegates with it, so such a family is kept whole).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from . import rowwrites
from .connection import write_transaction
from .maintenance import SizeSplit, file_bytes, optimize, size_split
from .protocol import PlanRow
from .state_meta import delete_state, read_state, write_state
from .statements import Sql, SqliteSql

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter

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
"""Defines a ``protected(id)`` table (and ``pinned_family(id)``) for ``WITH RECURSIVE …``."""

_NOT_PINNED = "s.pinned = 0 AND s.id NOT IN (SELECT id FROM pinned_family)"


PRUNE_FLAG = "s.pinned = 1 OR s.id IN (SELECT id FROM protected)"
"""The last column of :func:`plan_rows` for prune: the session is pinned or protected."""
ARCHIVE_FLAG = _NOT_PINNED
"""The last column of :func:`plan_rows` for archive: the session may be archived."""


def plan_rows(sql: Sql, where: str, params: Sequence[object], flag: str) -> list[PlanRow]:
    """(id, title, last active, messages, ``flag``) of the sessions matching ``where``, oldest
    activity first (ties by id in byte order): what prune and archive plan over."""
    rows = sql.execute(
        PROTECTED_CTE + f"SELECT s.id, s.title, s.last_active_at, s.message_count, {flag} "
        f"FROM sessions s WHERE {where} ORDER BY s.last_active_at, s.id{sql.binary_order}",
        params,
    ).fetchall()
    return [(r[0], r[1], r[2], r[3], bool(r[4])) for r in rows]


def count_active(sql: Sql, where: str, params: Sequence[object]) -> int:
    """How many sessions matching ``where`` are still running."""
    row = sql.execute(
        f"SELECT count(*) FROM sessions s WHERE {where} AND s.ended_at IS NULL", params
    ).fetchone()
    return int(row[0])


def archived_ids(sql: Sql, where: str, params: Sequence[object]) -> list[str]:
    """Ids of the archived sessions matching ``where``, oldest activity first."""
    rows = sql.execute(
        f"SELECT s.id FROM sessions s WHERE {where} AND s.archived = 1 "
        f"ORDER BY s.last_active_at, s.id{sql.binary_order}",
        params,
    ).fetchall()
    return [str(row[0]) for row in rows]


def still_eligible(sql: Sql, session_ids: Sequence[str]) -> list[str]:
    """Those of ``session_ids`` that may still be pruned right now: they exist, are ended,
    unpinned and unprotected (a session may have been pinned or resumed since the plan)."""
    wanted, ids = sql.in_ids("s.id", session_ids)
    rows = sql.execute(
        PROTECTED_CTE + f"SELECT s.id FROM sessions s WHERE {wanted} "
        "AND s.ended_at IS NOT NULL AND s.pinned = 0 "
        "AND s.id NOT IN (SELECT id FROM protected)",
        (ids,),
    ).fetchall()
    return [str(row[0]) for row in rows]


def unarchive(sql: Sql, session_ids: Sequence[str]) -> int:
    """Inside a transaction: unarchive those of ``session_ids`` that are archived; how many."""
    wanted, ids = sql.in_ids("id", session_ids)
    return sql.execute(
        f"UPDATE sessions SET archived = 0 WHERE {wanted} AND archived = 1", (ids,)
    ).rowcount


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
    return list(dict.fromkeys([*session_ids, *(str(row[0]) for row in rows)]))


class SqliteLifecycleTransaction:
    """One open write transaction (see :class:`~.protocol.LifecycleTransaction`)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def read_state(self, keys: Iterable[str]) -> dict[str, str]:
        return read_state(SqliteSql(self._db), keys)

    def write_state(self, values: Mapping[str, str]) -> None:
        write_state(SqliteSql(self._db), values)

    def delete_state(self, *keys: str) -> None:
        delete_state(SqliteSql(self._db), keys)

    def still_eligible(self, session_ids: Sequence[str]) -> list[str]:
        return still_eligible(SqliteSql(self._db), session_ids)

    def with_delegates(self, session_ids: Sequence[str]) -> list[str]:
        return with_delegates(self._db, session_ids)

    def delete_sessions(self, session_ids: Sequence[str]) -> int:
        """Delete sessions with their messages and index rows (the store's delete path)."""
        return rowwrites.delete_sessions(self._db, session_ids)


class SqliteLifecycle:
    """Lifecycle reads and writes of one SQLite store (``path`` is its file)."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self._path = path

    @contextmanager
    def transaction(
        self, *, retry_seconds: float | None = None
    ) -> Iterator[SqliteLifecycleTransaction]:
        """One ``BEGIN IMMEDIATE`` write transaction, committed when the block ends."""
        if retry_seconds is None:
            with write_transaction(self._connection) as db:
                yield SqliteLifecycleTransaction(db)
        else:
            with write_transaction(self._connection, retry_seconds=retry_seconds) as db:
                yield SqliteLifecycleTransaction(db)

    def read_state(self, keys: Iterable[str]) -> dict[str, str]:
        return read_state(SqliteSql(self._connection), keys)

    def prune_rows(self, selection: SessionFilter) -> list[PlanRow]:
        """(id, title, last active, messages, protected) of the sessions ``selection`` holds,
        oldest activity first; ``protected`` means pinned or protected."""
        from .selection_sql import build_where

        return plan_rows(SqliteSql(self._connection), *build_where(selection), PRUNE_FLAG)

    def count_active(self, selection: SessionFilter) -> int:
        """How many sessions of ``selection`` are still running."""
        from .selection_sql import build_where

        return count_active(SqliteSql(self._connection), *build_where(selection))

    def with_delegates(self, session_ids: Sequence[str]) -> list[str]:
        return with_delegates(self._connection, session_ids)

    def archive_rows(self, selection: SessionFilter) -> list[PlanRow]:
        """(id, title, last active, messages, archivable) of the sessions of ``selection``,
        oldest activity first; ``archivable`` is false for pinned lineages."""
        from .selection_sql import build_where

        return plan_rows(SqliteSql(self._connection), *build_where(selection), ARCHIVE_FLAG)

    def archive(self, session_ids: Sequence[str]) -> int:
        """Archive these sessions in one transaction, re-checking each (ended, not pinned,
        not archived yet); returns how many were archived."""
        with write_transaction(self._connection) as db:
            db.execute(
                PROTECTED_CTE + "UPDATE sessions AS s SET archived = 1 "
                "WHERE s.id IN (SELECT value FROM json_each(?)) AND s.archived = 0 "
                f"AND s.ended_at IS NOT NULL AND {_NOT_PINNED}",
                (json.dumps(list(session_ids)),),
            )
            # The sqlite3 module reports no rowcount for a statement starting with WITH.
            changed: int = db.execute("SELECT changes()").fetchone()[0]
        return changed

    def archived_ids(self, selection: SessionFilter) -> list[str]:
        """Ids of the archived sessions of ``selection`` (archived ones included)."""
        from .selection_sql import build_where

        return archived_ids(SqliteSql(self._connection), *build_where(selection))

    def unarchive(self, session_ids: Sequence[str]) -> int:
        with write_transaction(self._connection) as db:
            return unarchive(SqliteSql(db), session_ids)

    def free_space(self) -> tuple[int, int, int]:
        """(free pages, pages, page size)."""
        free = self._connection.execute("PRAGMA freelist_count").fetchone()[0]
        pages = self._connection.execute("PRAGMA page_count").fetchone()[0]
        size = self._connection.execute("PRAGMA page_size").fetchone()[0]
        return int(free), int(pages), int(size)

    def size_bytes(self) -> int:
        """The store's size on disk (write-ahead log included)."""
        return file_bytes(self._path)

    def spare_bytes(self) -> int | None:
        """Free space on the store's disk (None when it cannot be told)."""
        try:
            return shutil.disk_usage(self._path.parent).free
        except OSError:
            return None

    def optimize(self) -> tuple[int, int]:
        """Merge the full-text indexes and VACUUM; sizes on disk before and after."""
        return optimize(self._connection, self._path)

    def size_split(self) -> SizeSplit:
        return size_split(self._connection)
