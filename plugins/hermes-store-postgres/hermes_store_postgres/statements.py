"""The PostgreSQL :class:`~hermes_core.store.statements.Sql`: what the core writes once for
every store (the session facade, reference lookup, lineages, ``state_meta``) run on one of the
plugin's connections, ``?`` placeholders as psycopg's ``%s``."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

    from hermes_core.store.statements import Conflict, ResultRows


class PostgresSql:
    """One connection of the store's pool, taking the statements both stores take."""

    binary_order = ' COLLATE "C"'
    """Text in byte order, as SQLite sorts it (the database's collation may not)."""

    def __init__(self, db: psycopg.Connection[tuple[Any, ...]]) -> None:
        self.db = db

    def execute(self, sql: str, params: Sequence[object] = ()) -> ResultRows:
        """Run one statement. The portable text holds no literal ``?`` or ``%``: every ``?``
        is a placeholder (a selection's condition comes with ``%s`` already)."""
        return self.db.execute(sql.replace("?", "%s"), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        """Run one statement for each row (psycopg sends them together)."""
        self.db.cursor().executemany(sql.replace("?", "%s"), rows)

    def changed(self, sql: str, params: Sequence[object] = ()) -> int:
        """The statement's ``rowcount``."""
        return self.execute(sql, params).rowcount

    def in_ids(self, column: str, ids: Sequence[str]) -> tuple[str, object]:
        """The ids as one ``text[]`` array."""
        return f"{column} = ANY(?::text[])", list(ids)

    def attempt(self) -> AbstractContextManager[object]:
        """A savepoint: a failed statement would otherwise abort the whole transaction."""
        return self.db.transaction()

    def conflict(self, error: BaseException) -> Conflict | None:
        """Read from psycopg's error class (and, for a unique violation, its constraint)."""
        import psycopg.errors

        if isinstance(error, psycopg.errors.UniqueViolation):
            return "title" if error.diag.constraint_name == "idx_sessions_title" else "id"
        if isinstance(error, psycopg.errors.ForeignKeyViolation):
            return "parent"
        return None
