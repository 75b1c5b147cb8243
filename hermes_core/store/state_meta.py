"""The ``state_meta`` key/value rows of the SQLite store: reads and writes by key or prefix.

Home channels, queued titles, the clean-up lock and plugin keys live there; the store's
``read_state``/``write_state``/``list_state`` and the lifecycle facet use these statements.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping


def read_state(db: sqlite3.Connection, keys: Iterable[str]) -> dict[str, str]:
    """The values of ``keys`` that are set (one query)."""
    wanted = list(keys)
    marks = ",".join("?" for _ in wanted)
    rows = db.execute(f"SELECT key, value FROM state_meta WHERE key IN ({marks})", wanted)
    return {str(key): str(value) for key, value in rows if value is not None}


def list_state(db: sqlite3.Connection, prefix: str = "") -> dict[str, str]:
    """Every set key starting with ``prefix`` (all when empty) and its value, by key."""
    rows = db.execute(
        "SELECT key, value FROM state_meta WHERE substr(key, 1, ?) = ? AND value IS NOT NULL "
        "ORDER BY key",
        (len(prefix), prefix),
    )
    return {str(key): str(value) for key, value in rows}


def write_state(db: sqlite3.Connection, values: Mapping[str, str]) -> None:
    """Set keys inside the caller's write transaction."""
    db.executemany(
        "INSERT INTO state_meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        list(values.items()),
    )
