"""Statements both stores take, and what runs them on one connection.

The SQL written once for every backend — the session facade (:mod:`.facade`), reference
lookup (:mod:`.lookup`), lineages (:mod:`.lineage_queries`), the routing rows — keeps to what
SQLite and PostgreSQL both understand: ``?`` placeholders, ``IN (?, …)`` lists, ``CAST``,
``substr``, ``WITH RECURSIVE``, ``INSERT … ON CONFLICT``, and no literal ``?`` or ``%`` in
the text. A backend runs it through a :class:`Sql`: the connection's ``execute`` with the
driver's own placeholder, and how to make an ``ORDER BY`` or comparison of text go by bytes,
as SQLite's does. :class:`SqliteSql` is the built-in store's; the PostgreSQL plugin has its
own.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol

Conflict = Literal["id", "title", "parent"]
"""What an insert or update of a session row ran into: its id is taken, its title is another
session's (the unique index), or its parent does not exist."""


class ResultRows(Protocol):
    """What a statement gives back, on either backend (a DB-API cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int = ...) -> list[Any]: ...


class Sql(Protocol):
    """One connection, running statements written in the SQL both stores take."""

    @property
    def binary_order(self) -> str:
        """Put after a text column in ``ORDER BY`` or a comparison so it goes by the bytes
        (SQLite's default: empty there)."""
        ...

    def execute(self, sql: str, params: Sequence[object] = ()) -> ResultRows:
        """Run one statement (``?`` placeholders) and return its rows."""
        ...

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        """Run one statement (``?`` placeholders) once for each of ``rows``."""
        ...

    def changed(self, sql: str, params: Sequence[object] = ()) -> int:
        """Run one writing statement (``?`` placeholders); how many rows it changed, also
        for a statement starting with ``WITH``."""
        ...

    def in_ids(self, column: str, ids: Sequence[str]) -> tuple[str, object]:
        """``column`` is one of ``ids``, as one condition and its one parameter (a list of
        any length, past the limit on a statement's parameters)."""
        ...

    def attempt(self) -> AbstractContextManager[object]:
        """A block whose failing statement leaves the caller's transaction usable (a
        savepoint, where a failed statement would spoil the whole transaction)."""
        ...

    def conflict(self, error: BaseException) -> Conflict | None:
        """What ``error``, raised by a write of a session row, ran into; None for any other
        error."""
        ...


class SqliteSql:
    """The built-in store's :class:`Sql`: the SQLite connection as it is."""

    binary_order = ""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, params: Sequence[object] = ()) -> ResultRows:
        """Run one statement on the connection."""
        return self.connection.execute(sql, tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        """Run one statement for each row."""
        self.connection.executemany(sql, rows)

    def changed(self, sql: str, params: Sequence[object] = ()) -> int:
        """The sqlite3 module gives no ``rowcount`` for a statement starting with ``WITH``:
        SQLite's ``changes()`` says it."""
        self.connection.execute(sql, tuple(params))
        return int(self.connection.execute("SELECT changes()").fetchone()[0])

    def in_ids(self, column: str, ids: Sequence[str]) -> tuple[str, object]:
        """The ids as one JSON array, read by ``json_each``."""
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(ids))

    def attempt(self) -> AbstractContextManager[object]:
        """Nothing: SQLite undoes a failed statement alone, the transaction goes on."""
        return contextlib.nullcontext()

    def conflict(self, error: BaseException) -> Conflict | None:
        """Read from the text of SQLite's ``IntegrityError``."""
        if not isinstance(error, sqlite3.IntegrityError):
            return None
        text = str(error)
        if "sessions.id" in text:
            return "id"
        if "FOREIGN KEY" in text:
            return "parent"
        if "sessions.title" in text:
            return "title"
        return None


def marks(values: Sequence[object]) -> str:
    """``?, ?, …``: one placeholder for each of ``values`` (for ``IN (…)``)."""
    return ", ".join("?" for _ in values)
