"""The ``gateway_routing`` rows: which session a gateway session key (SPEC G1/G2) points to.

:class:`SqliteRouting` implements :class:`~hermes_core.store.protocol.RoutingTable`; the
gateway's routing module decides the keys and when a key moves to a new session, and keeps
its ``sessions.json`` mirror. A deleted session leaves its routes pointing at nothing
(``session_id`` None), so the next message of that chat starts a new session.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .connection import write_transaction


@dataclass(frozen=True, slots=True)
class RouteRecord:
    """One row of ``gateway_routing``."""

    session_key: str
    session_id: str | None
    """None once that session was deleted."""
    platform: str
    origin: str | None
    """What the gateway knows of where the key came from (JSON text, adapter-defined)."""
    updated_at: float
    expires_at: float | None = None


_COLUMNS = "session_key, session_id, platform, origin, updated_at, expires_at"


class SqliteRouting:
    """Routing rows of one SQLite store."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def route(self, session_key: str) -> RouteRecord | None:
        """The row of ``session_key``, if any."""
        row = self._connection.execute(
            f"SELECT {_COLUMNS} FROM gateway_routing WHERE session_key = ?", (session_key,)
        ).fetchone()
        return None if row is None else RouteRecord(*row)

    def routes(self, platform: str | None = None) -> list[RouteRecord]:
        """Every row (of ``platform``), by key."""
        where, params = ("WHERE platform = ? ", [platform]) if platform is not None else ("", [])
        rows = self._connection.execute(
            f"SELECT {_COLUMNS} FROM gateway_routing {where}ORDER BY session_key", params
        )
        return [RouteRecord(*row) for row in rows]

    def set_route(self, record: RouteRecord) -> None:
        """Insert or replace the row of ``record.session_key``."""
        with write_transaction(self._connection) as db:
            db.execute(
                f"INSERT OR REPLACE INTO gateway_routing ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
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
        with write_transaction(self._connection) as db:
            deleted = db.execute(
                "DELETE FROM gateway_routing WHERE session_key = ?", (session_key,)
            ).rowcount
        return bool(deleted)
