"""The Hermes session store in PostgreSQL: ``store.url: postgresql://user@host/database``.

The plugin registers the ``postgresql`` (and ``postgres``) scheme through
``hermes_register_store_backends``; :class:`~.store.PostgresStore` implements the core's
store protocol and passes ``tests/store_conformance``. psycopg is imported only when a store
is opened.
"""

from __future__ import annotations

__all__ = ["PostgresBackend"]

from .plugin import PostgresBackend
