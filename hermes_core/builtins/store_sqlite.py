"""The built-in store backend, registered through the same hook a PostgreSQL plugin uses.

``store.url: sqlite:///path/to/state.db`` (the default is ``$HERMES_HOME/state.db``).
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import StoreBackend, hookimpl


@hookimpl
def hermes_register_store_backends(register: Callable[[StoreBackend], None]) -> None:
    from hermes_core.store.backends import SQLITE_BACKEND

    register(SQLITE_BACKEND)
