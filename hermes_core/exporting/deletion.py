"""``--delete-after-verified`` (SPEC X3): delete a session once its export is proven on disk.

The session and each of its delegate/subagent sessions are exported to files of their own;
every file is re-read and re-hashed; then one write transaction re-reads the delegate set and
the message counts and deletes them all, or refuses and deletes nothing when anything
changed since the export (:meth:`~hermes_core.store.SessionStore.delete_exactly`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from hermes_core.store.lineage_queries import SessionsChanged

from .errors import ExportError

if TYPE_CHECKING:
    from hermes_core.store.protocol import Store


def delete_targets(store: Store, session_id: str) -> list[str]:
    """What deleting ``session_id`` removes: itself and its delegates, recursively."""
    return store.delegate_tree(session_id)


def delete_exported(
    store: Store, session_id: str, exported_messages: Mapping[str, int]
) -> list[str]:
    """Delete ``session_id`` and its delegates in one transaction, provided they are exactly
    the sessions in ``exported_messages`` with exactly those message counts. Returns the
    deleted ids; raises :class:`ExportError` (deleting nothing) otherwise."""
    try:
        return store.delete_exactly(session_id, exported_messages)
    except SessionsChanged as changed:
        raise ExportError(str(changed)) from changed
