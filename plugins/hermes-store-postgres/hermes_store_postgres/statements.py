"""The PostgreSQL :class:`~hermes_core.store.statements.Sql`: what the core writes once for
every store (the session facade, reference lookup, lineages, ``state_meta``) run on one of the
plugin's connections, ``?`` placeholders as psycopg's ``%s``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

    from hermes_core.store.statements import ResultRows


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
