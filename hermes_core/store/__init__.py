"""The session store: SQLite at ``$HERMES_HOME/state.db`` (DESIGN §3)."""

from __future__ import annotations

from .errors import (
    AmbiguousSessionId,
    InvalidTitle,
    SessionNotFound,
    StoreError,
    StoreTooNew,
    StoreUnavailable,
    TitleInUse,
)
from .store import STATE_DB_NAME, SessionEvents, SessionStore

__all__ = [
    "STATE_DB_NAME",
    "AmbiguousSessionId",
    "InvalidTitle",
    "SessionEvents",
    "SessionNotFound",
    "SessionStore",
    "StoreError",
    "StoreTooNew",
    "StoreUnavailable",
    "TitleInUse",
]
