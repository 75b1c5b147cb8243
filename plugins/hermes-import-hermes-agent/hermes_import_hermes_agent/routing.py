"""Hermes Agent's ``gateway_routing`` rows as :class:`ImportedRoute` values.

Its rows are keyed by ``(scope, session_key)`` — ``scope`` is the gateway's sessions folder —
and hold a ``SessionEntry`` as JSON (``session_id``, ``platform``, ``origin``…). Here a chat's
session key routes to one session, so for a key found under several scopes the most recently
updated entry is taken.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import MutableMapping

from hermes_hookspecs import ImportedRoute

from .schema import StoreShape

_NEEDED = frozenset({"session_key", "entry_json", "updated_at"})


def routes_by_session(
    connection: sqlite3.Connection,
    shape: StoreShape,
    sources: dict[str, str],
    skipped: MutableMapping[str, int],
) -> dict[str, list[ImportedRoute]]:
    """Foreign session id → the routes pointing at it. ``sources`` maps session ids to their
    origin (the platform when an entry does not name one); entries that cannot be read, or
    that point at no session of the store, are counted in ``skipped``."""
    if not shape.has_routing:
        return {}
    columns = {str(row[1]) for row in connection.execute("PRAGMA table_info(gateway_routing)")}
    if not columns >= _NEEDED:
        skipped["gateway_routing table of an unknown shape (not imported)"] = 1
        return {}
    newest: dict[str, tuple[float, str, ImportedRoute]] = {}
    for key, entry_json, updated_at in connection.execute(
        "SELECT session_key, entry_json, updated_at FROM gateway_routing"
    ):
        try:
            entry = json.loads(entry_json)
        except (TypeError, ValueError):
            entry = None
        session_id = entry.get("session_id") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(session_id, str) or not key:
            skipped["unreadable gateway routing row"] = (
                skipped.get("unreadable gateway routing row", 0) + 1
            )
            continue
        if session_id not in sources:
            reason = "gateway routing row for a session not in the store"
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        origin = entry.get("origin")
        route = ImportedRoute(
            session_key=str(key),
            platform=str(entry.get("platform") or sources[session_id]),
            updated_at=float(updated_at),
            origin=origin if isinstance(origin, dict) else None,
        )
        held = newest.get(route.session_key)
        if held is None or route.updated_at > held[0]:
            newest[route.session_key] = (route.updated_at, session_id, route)
    found: dict[str, list[ImportedRoute]] = {}
    for _updated, session_id, route in newest.values():
        found.setdefault(session_id, []).append(route)
    return found
