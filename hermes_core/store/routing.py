"""The raw ``gateway_routing`` row (:class:`RouteRecord`), as ``hermes sessions migrate`` and the
database importers copy it through :meth:`~hermes_core.store.protocol.RoutingTable.set_route`.

The routing table itself — raw rows and the gateway's routed sessions — is one facet,
:class:`~hermes_core.store.protocol.RoutingTable` (SQLite: :mod:`.routed_sessions`). A deleted
session leaves its routes pointing at nothing (``session_id`` None), so the next message of
that chat starts a new session.
"""

from __future__ import annotations

from dataclasses import dataclass


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
