"""Lifecycle bookkeeping in the store's ``state_meta`` table (key → text value).

Everything lives inside ``state.db`` itself, so every Hermes process on the same home shares
it. Times are POSIX seconds written as decimal strings; structured values are JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core.store.protocol import LifecycleTransaction, StateReader

LAST_AUTO_PRUNE = "last_auto_prune"
"""When the automatic prune last started (the interval throttle reads this)."""
LAST_AUTO_PRUNE_REMOVED = "last_auto_prune_removed"
"""How many sessions that automatic prune removed."""
LAST_AUTO_ARCHIVE = "last_auto_archive"
"""When the auto-archive sweep last started."""
LAST_AUTO_ARCHIVE_ARCHIVED = "last_auto_archive_archived"
LAST_VACUUM = "last_vacuum"
"""When the store was last VACUUMed (automatically or by ``optimize``)."""
LAST_FAILURE = "last_auto_clean_failure"
"""JSON ``{"at": time, "error": text}`` of the last automatic clean-up that failed."""
LOCK = "lifecycle_lock"
"""JSON of the process holding the lifecycle lock (see :mod:`.lock`)."""


def read(reader: StateReader, keys: Iterable[str]) -> dict[str, str]:
    """The values of ``keys`` that are set (``reader``: ``store.lifecycle`` or a transaction)."""
    return reader.read_state(keys)


def write(transaction: LifecycleTransaction, values: dict[str, object]) -> None:
    """Set keys inside the caller's write transaction (dicts and lists are stored as JSON)."""
    transaction.write_state({key: _text(value) for key, value in values.items()})


def delete(transaction: LifecycleTransaction, *keys: str) -> None:
    transaction.delete_state(*keys)


def _text(value: object) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return repr(value) if isinstance(value, float) else str(value)


def as_time(value: str | None) -> float | None:
    """A stored time, or None when absent or unreadable (treated as "never")."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class LifecycleRecord:
    """What ``stats`` shows about the automatic clean-up."""

    last_auto_prune: float | None
    last_auto_prune_removed: int | None
    last_auto_archive: float | None
    last_auto_archive_archived: int | None
    last_vacuum: float | None
    last_failure_at: float | None
    last_failure: str | None


def load_record(reader: StateReader) -> LifecycleRecord:
    found = read(
        reader,
        (
            LAST_AUTO_PRUNE,
            LAST_AUTO_PRUNE_REMOVED,
            LAST_AUTO_ARCHIVE,
            LAST_AUTO_ARCHIVE_ARCHIVED,
            LAST_VACUUM,
            LAST_FAILURE,
        ),
    )
    failure: dict[str, Any] = {}
    if LAST_FAILURE in found:
        try:
            loaded = json.loads(found[LAST_FAILURE])
            failure = loaded if isinstance(loaded, dict) else {"error": str(loaded)}
        except ValueError:
            failure = {"error": found[LAST_FAILURE]}
    return LifecycleRecord(
        last_auto_prune=as_time(found.get(LAST_AUTO_PRUNE)),
        last_auto_prune_removed=_as_int(found.get(LAST_AUTO_PRUNE_REMOVED)),
        last_auto_archive=as_time(found.get(LAST_AUTO_ARCHIVE)),
        last_auto_archive_archived=_as_int(found.get(LAST_AUTO_ARCHIVE_ARCHIVED)),
        last_vacuum=as_time(found.get(LAST_VACUUM)),
        last_failure_at=as_time(str(failure["at"])) if "at" in failure else None,
        last_failure=str(failure["error"]) if "error" in failure else None,
    )


def _as_int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
