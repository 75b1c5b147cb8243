"""The plugin: the ``postgresql`` store backend, registered through the store-backend hook."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hermes_hookspecs import StoreBackend, StoreEvents, hookimpl

if TYPE_CHECKING:
    from .store import PostgresStore


class PostgresBackend:
    """Opens a :class:`~.store.PostgresStore` for a ``postgresql://`` (or ``postgres://``,
    ``postgresql+psycopg://``) URL; the database must exist, its tables are created (and
    migrated) on first use."""

    description = "PostgreSQL database (hermes-store-postgres: psycopg 3, tsvector + pg_trgm)"

    def __init__(self, scheme: str = "postgresql") -> None:
        self.scheme = scheme

    def open(self, url: str, events: StoreEvents | None) -> PostgresStore:
        """Connect (one clear line on any failure, never the password) and migrate."""
        from hermes_core.store.backends import redacted

        from .connection import checked_url
        from .store import PostgresStore

        return PostgresStore(checked_url(url), redacted(url), events=events)


@hookimpl
def hermes_register_store_backends(register: Callable[[StoreBackend], None]) -> None:
    """``postgresql://…`` and its alias ``postgres://…``."""
    register(PostgresBackend("postgresql"))
    register(PostgresBackend("postgres"))
