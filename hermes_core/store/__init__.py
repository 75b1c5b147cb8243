"""The session store (DESIGN §3, §8): SQLite at ``$HERMES_HOME/state.db`` by default, or the
backend ``store.url`` names (:func:`open_store`); every backend implements :class:`Store`."""

from __future__ import annotations

from .backends import open_store
from .errors import (
    AmbiguousSessionId,
    InvalidTitle,
    NotASessionStore,
    SessionNotFound,
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreTooNew,
    StoreUnavailable,
    TitleInUse,
)
from .protocol import Store
from .store import STATE_DB_NAME, SessionEvents, SessionStore

__all__ = [
    "STATE_DB_NAME",
    "AmbiguousSessionId",
    "InvalidTitle",
    "NotASessionStore",
    "SessionEvents",
    "SessionNotFound",
    "SessionStore",
    "Store",
    "StoreDamaged",
    "StoreError",
    "StoreFull",
    "StoreReadOnly",
    "StoreTooNew",
    "StoreUnavailable",
    "TitleInUse",
    "open_store",
]
