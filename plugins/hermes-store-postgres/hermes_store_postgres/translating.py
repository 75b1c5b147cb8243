"""The psycopg connection and cursor classes the store's pool hands out: what the server, its
disk or the connection fails with leaves them as the store's error classes (DESIGN §9, see
:mod:`.failures`), never as a raw psycopg error.

Every statement of the plugin runs on a :class:`StoreCursor` (``Connection.execute`` goes
through ``cursor()``, which makes one of ``cursor_factory``, or says that the connection is
closed), which translates what running it or reading its rows raises. psycopg begins and
commits a ``connection.transaction()`` block without a cursor, so :class:`StoreConnection`
also wraps ``transaction()``: a ``BEGIN`` or ``COMMIT`` the server cannot carry out (the
connection is gone, the disk is full) is translated there. Errors the callers handle on
purpose (a unique or foreign-key violation in a savepoint, a lock timeout…) pass through
both unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Literal, Self

import psycopg
from psycopg import Transaction
from psycopg.abc import Params, Query
from psycopg.rows import Row

from hermes_core.store.unicode_repair import storable_parameters, storable_rows

from .failures import store_error


class FailureTranslation:
    """A ``with`` block that turns a psycopg error of the server, its disk or the connection
    into the store's error (chained to it); any other error leaves it unchanged."""

    __slots__ = ("password", "where")

    def __init__(self, where: str, password: str | None) -> None:
        self.where = where
        """How messages name the store: ``store.url '…'``, password hidden."""
        self.password = password
        """The URL's password, hidden wherever a server message would repeat it."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> Literal[False]:
        if isinstance(error, psycopg.Error):
            translated = store_error(error, self.where, self.password)
            if translated is not None:
                raise translated from error
        return False


UNNAMED = FailureTranslation("store.url '?'", None)


class StoreConnection(psycopg.Connection[Row]):
    """A connection to the store's database whose cursors are :class:`StoreCursor` and whose
    transaction blocks translate a failing ``BEGIN``/``COMMIT`` the same way."""

    failures: FailureTranslation = UNNAMED
    """The translation of this connection's failures (set by the pool's ``configure`` with
    the store's URL)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cursor_factory = StoreCursor

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        """``Connection.cursor`` (which ``execute`` calls too): a :class:`StoreCursor`; a
        connection found closed or lost already says so as the store's error."""
        with self.failures:
            return super().cursor(*args, **kwargs)

    @contextmanager
    def transaction(
        self, savepoint_name: str | None = None, force_rollback: bool = False
    ) -> Iterator[Transaction]:
        """psycopg's transaction block (a savepoint when nested); its ``BEGIN``, ``COMMIT``
        or ``RELEASE`` failing for the server's, disk's or connection's sake raises the
        store's error (the body's statements are translated by their cursor)."""
        with self.failures, super().transaction(savepoint_name, force_rollback) as transaction:
            yield transaction


class StoreCursor(psycopg.Cursor[Row]):
    """A cursor whose failures of the server, its disk or the connection come out as the
    store's errors, wherever they happen: running a statement or reading its rows."""

    def __init__(self, connection: psycopg.Connection[Any], *args: Any, **kwargs: Any) -> None:
        super().__init__(connection, *args, **kwargs)
        self._failures = connection.failures if isinstance(connection, StoreConnection) else UNNAMED

    def execute(self, query: Any, params: Params | None = None, **kwargs: Any) -> Self:
        """``Cursor.execute`` (a query, its parameters, ``prepare``, ``binary``). Text with a
        lone surrogate fails to encode before anything is sent: it is repaired (U+FFFD, see
        :mod:`hermes_core.store.unicode_repair`) and the statement run once more."""
        with self._failures:
            try:
                return super().execute(query, params, **kwargs)
            except UnicodeEncodeError:
                return super().execute(query, storable_parameters(params), **kwargs)

    def executemany(
        self, query: Query, params_seq: Iterable[Params], *, returning: bool = False
    ) -> None:
        with self._failures:
            super().executemany(query, storable_rows(params_seq), returning=returning)

    def fetchone(self) -> Row | None:
        with self._failures:
            return super().fetchone()

    def fetchmany(self, size: int = 0) -> list[Row]:
        with self._failures:
            return super().fetchmany(size)

    def fetchall(self) -> list[Row]:
        with self._failures:
            return super().fetchall()

    def __next__(self) -> Row:
        with self._failures:
            return super().__next__()
