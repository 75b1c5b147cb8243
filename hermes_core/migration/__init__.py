"""Copying every session of one store into another (``hermes sessions migrate``)."""

from __future__ import annotations

from .copy_store import (
    MigrationError,
    MigrationProgress,
    MigrationReport,
    migrate_store,
    session_digest,
)

__all__ = [
    "MigrationError",
    "MigrationProgress",
    "MigrationReport",
    "migrate_store",
    "session_digest",
]
