"""The ``gateway_routing`` rows in PostgreSQL (see ``hermes_core/store/routing.py``).

:meth:`PostgresRouting.set_route` is one ``INSERT … ON CONFLICT DO UPDATE``: two gateways
setting the same key at once leave one row, never two, whichever wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_core.store.routing import RouteRecord

if TYPE_CHECKING:
    import psycopg

_COLUMNS = "session_key, session_id, platform, origin, updated_at, expires_at"


class PostgresRouting:
    """Routing rows of one PostgreSQL store."""

    def __init__(self, db: psycopg.Connection[tuple[Any, ...]]) -> None:
        self._db = db

    def route(self, session_key: str) -> RouteRecord | None:
        """The row of ``session_key``, if any."""
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM gateway_routing WHERE session_key = %s", (session_key,)
        ).fetchone()
        return None if row is None else RouteRecord(*row)

    def routes(self, platform: str | None = None) -> list[RouteRecord]:
        """Every row (of ``platform``), by key."""
        where, params = ("WHERE platform = %s ", [platform]) if platform is not None else ("", [])
        rows = self._db.execute(
            f'SELECT {_COLUMNS} FROM gateway_routing {where}ORDER BY session_key COLLATE "C"',
            params,
        ).fetchall()
        return [RouteRecord(*row) for row in rows]

    def set_route(self, record: RouteRecord) -> None:
        """Insert or replace the row of ``record.session_key``."""
        self._db.execute(
            f"INSERT INTO gateway_routing ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, "
            "platform = excluded.platform, origin = excluded.origin, "
            "updated_at = excluded.updated_at, expires_at = excluded.expires_at",
            (
                record.session_key,
                record.session_id,
                record.platform,
                record.origin,
                record.updated_at,
                record.expires_at,
            ),
        )

    def delete_route(self, session_key: str) -> bool:
        """Forget ``session_key``; whether there was such a row."""
        deleted = self._db.execute(
            "DELETE FROM gateway_routing WHERE session_key = %s", (session_key,)
        ).rowcount
        return bool(deleted)
