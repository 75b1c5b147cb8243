"""Every SQL statement of prune, archive, the lifecycle lock and the automatic clean-up.

:mod:`hermes_core.lifecycle` decides what to prune or archive, when, and under which lock;
this module is the only place it reads or writes the store. The facet is written once for
every backend, in the statements both stores take: :class:`LifecycleRows` implements
:class:`~hermes_core.store.protocol.LifecycleQueries` over a backend's primitives (its lock
transaction, selection dialect and store-wide services), as :class:`~.facade.StoreFacade`
does for the session facade. :class:`SqliteLifecycle` is SQLite's: its
:meth:`~SqliteLifecycle.transaction` is one ``BEGIN IMMEDIATE`` transaction, within which the
lock row is checked and taken atomically across processes; the PostgreSQL plugin's takes an
advisory lock.

What prune and archive leave alone is :data:`PROTECTED_CTE`: every pinned session and the
whole compression lineage a pinned session belongs to, with their delegates; and every
session with a pinned, still running or protected session among its delegates at any depth
(deleting a session takes its delegates with it, so such a family is kept whole).
"""

from __future__ import annotations

import functools
import shutil
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from . import deletion, fulltext
from .connection import write_transaction
from .deletion import Unindex
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


class LifecycleRowsTransaction:
    """One open lifecycle transaction (see :class:`~.protocol.LifecycleTransaction`) on a
    backend's connection; ``unindex`` drops the search entries a backend keeps apart from
    the rows (see :func:`.deletion.delete_sessions`)."""

    def __init__(self, sql: Sql, unindex: Unindex | None) -> None:
        self._sql = sql
        self._unindex = unindex

    def read_state(self, keys: Iterable[str]) -> dict[str, str]:
        return read_state(self._sql, keys)

    def write_state(self, values: Mapping[str, str]) -> None:
        write_state(self._sql, values)

    def delete_state(self, *keys: str) -> None:
        delete_state(self._sql, keys)

    def still_eligible(self, session_ids: Sequence[str]) -> list[str]:
        """Those that may still be pruned now: existing, ended, unpinned, unprotected."""
        return still_eligible(self._sql, session_ids)

    def with_delegates(self, session_ids: Sequence[str]) -> list[str]:
        return deletion.with_delegates(self._sql, session_ids)

    def delete_sessions(self, session_ids: Sequence[str]) -> int:
        """Delete sessions with their messages and search entries (the store's delete path)."""
        return deletion.delete_sessions(self._sql, session_ids, self._unindex)


class LifecycleRows(ABC):
    """The lifecycle facet (:class:`~.protocol.LifecycleQueries`) written once over a
    backend's primitives: the plans, the running count, archive and unarchive, in the SQL
    both stores take. A subclass sets ``_sql`` and gives the lock transaction, its selection
    dialect, where it keeps search entries apart from the rows, and the store-wide services
    (sizes, free space, optimize), which are each database's own."""

    _sql: Sql
    """The store's connection (statements both stores take)."""

    # ------------------------------------------------------------------ primitives

    @abstractmethod
    def transaction(
        self, *, retry_seconds: float | None = None
    ) -> AbstractContextManager[LifecycleRowsTransaction]:
        """One transaction that holds the lifecycle lock (every lifecycle transaction of every
        process runs one at a time), committed when the block ends; waiting for the lock at
        most ``retry_seconds`` (the backend's default when None)."""

    @abstractmethod
    def _where(self, selection: SessionFilter) -> tuple[str, list[object]]:
        """``selection`` as one condition over ``sessions s`` and its parameters."""

    @abstractmethod
    def _write(self) -> AbstractContextManager[object]:
        """The transaction of one archive or unarchive statement."""

    # ------------------------------------------------------------------ reads and writes

    def read_state(self, keys: Iterable[str]) -> dict[str, str]:
        return read_state(self._sql, keys)

    def prune_rows(self, selection: SessionFilter) -> list[PlanRow]:
        """(id, title, last active, messages, protected) of the sessions ``selection`` holds,
        oldest activity first; ``protected`` means pinned or protected."""
        return plan_rows(self._sql, *self._where(selection), PRUNE_FLAG)

    def archive_rows(self, selection: SessionFilter) -> list[PlanRow]:
        """(id, title, last active, messages, archivable) of the sessions of ``selection``,
        oldest activity first; ``archivable`` is false for pinned lineages."""
        return plan_rows(self._sql, *self._where(selection), ARCHIVE_FLAG)

    def count_active(self, selection: SessionFilter) -> int:
        """How many sessions of ``selection`` are still running."""
        return count_active(self._sql, *self._where(selection))

    def with_delegates(self, session_ids: Sequence[str]) -> list[str]:
        return deletion.with_delegates(self._sql, session_ids)

    def archive(self, session_ids: Sequence[str]) -> int:
        """Archive these sessions in one transaction, re-checking each (ended, not pinned,
        not archived yet); returns how many were archived."""
        wanted, ids = self._sql.in_ids("s.id", session_ids)
        with self._write():
            return self._sql.changed(
                PROTECTED_CTE + "UPDATE sessions AS s SET archived = 1 "
                f"WHERE {wanted} AND s.archived = 0 "
                f"AND s.ended_at IS NOT NULL AND {_NOT_PINNED}",
                (ids,),
            )

    def archived_ids(self, selection: SessionFilter) -> list[str]:
        """Ids of the archived sessions of ``selection``, oldest activity first."""
        return archived_ids(self._sql, *self._where(selection))

    def unarchive(self, session_ids: Sequence[str]) -> int:
        """Unarchive those of ``session_ids`` that are archived; how many."""
        with self._write():
            return unarchive(self._sql, session_ids)


class SqliteLifecycle(LifecycleRows):
    """Lifecycle reads and writes of one SQLite store (``path`` is its file): its lock
    transaction is one ``BEGIN IMMEDIATE`` transaction."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._connection = connection
        self._sql = SqliteSql(connection)
        self._path = path

    @contextmanager
    def transaction(
        self, *, retry_seconds: float | None = None
    ) -> Iterator[LifecycleRowsTransaction]:
        """One ``BEGIN IMMEDIATE`` write transaction, committed when the block ends."""
        unindex = functools.partial(fulltext.unindex_messages, self._connection)
        if retry_seconds is None:
            with write_transaction(self._connection):
                yield LifecycleRowsTransaction(self._sql, unindex)
        else:
            with write_transaction(self._connection, retry_seconds=retry_seconds):
                yield LifecycleRowsTransaction(self._sql, unindex)

    def _where(self, selection: SessionFilter) -> tuple[str, list[object]]:
        from .selection_sql import build_where

        return build_where(selection)

    def _write(self) -> AbstractContextManager[object]:
        return write_transaction(self._connection)

    # ------------------------------------------------------------------ maintenance

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
