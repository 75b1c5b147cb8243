"""The ``state_meta`` key/value rows of a store: reads and writes by key or prefix, in the
SQL both stores take (see :mod:`.statements`).

Home channels, queued titles, the clean-up lock and plugin keys live there; the session
facade's ``read_state``/``write_state``/``list_state`` and the lifecycle facets use these
statements.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .statements import Sql, marks

_CHUNK = 500
"""Keys per statement (SQLite takes at most 32,766 parameters in one)."""


def read_state(sql: Sql, keys: Iterable[str]) -> dict[str, str]:
    """The values of ``keys`` that are set."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, str] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        rows = sql.execute(
            f"SELECT key, value FROM state_meta WHERE key IN ({marks(chunk)})", chunk
        ).fetchall()
        found.update((str(key), str(value)) for key, value in rows if value is not None)
    return found


def list_state(sql: Sql, prefix: str = "") -> dict[str, str]:
    """Every set key starting with ``prefix`` (all when empty) and its value, by key (in
    byte order)."""
    rows = sql.execute(
        "SELECT key, value FROM state_meta WHERE substr(key, 1, ?) = ? AND value IS NOT NULL "
        f"ORDER BY key{sql.binary_order}",
        (len(prefix), prefix),
    ).fetchall()
    return {str(key): str(value) for key, value in rows}


def write_state(sql: Sql, values: Mapping[str, str]) -> None:
    """Set keys inside the caller's write transaction."""
    for key, value in values.items():
        sql.execute(
            "INSERT INTO state_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def delete_state(sql: Sql, keys: Iterable[str]) -> None:
    """Unset keys inside the caller's write transaction."""
    rows = [(key,) for key in keys]
    if rows:
        sql.executemany("DELETE FROM state_meta WHERE key = ?", rows)
