"""``--delete-after-verified`` (SPEC X3): delete a session once its export is proven on disk.

The session and each of its delegate/subagent sessions are exported to files of their own;
every file is re-read and re-hashed; then one write transaction re-reads the delegate set and
the message counts and deletes them all, or refuses and deletes nothing when anything
changed since the export.
"""

from __future__ import annotations

from collections.abc import Mapping

from hermes_core.store import SessionStore
from hermes_core.store.connection import write_transaction
from hermes_core.store.rowwrites import delete_sessions

from .errors import ExportError
from .lineage import delegate_tree


def delete_targets(store: SessionStore, session_id: str) -> list[str]:
    """What deleting ``session_id`` removes: itself and its delegates, recursively."""
    return delegate_tree(store.connection, session_id)


def delete_exported(
    store: SessionStore, session_id: str, exported_messages: Mapping[str, int]
) -> list[str]:
    """Delete ``session_id`` and its delegates in one transaction, provided they are exactly
    the sessions in ``exported_messages`` with exactly those message counts. Returns the
    deleted ids; raises :class:`ExportError` (deleting nothing) otherwise."""
    with write_transaction(store.connection) as db:
        current = delegate_tree(db, session_id)
        if set(current) != set(exported_messages):
            added = sorted(set(current) - set(exported_messages))
            gone = sorted(set(exported_messages) - set(current))
            change = ", ".join(
                part
                for part in (
                    f"new: {' '.join(added)}" if added else "",
                    f"gone: {' '.join(gone)}" if gone else "",
                )
                if part
            )
            raise ExportError(
                f"the delegate sessions of {session_id} changed during the export ({change}); "
                "nothing was deleted"
            )
        for target, expected in exported_messages.items():
            row = db.execute(
                "SELECT count(*) FROM messages WHERE session_id = ?", (target,)
            ).fetchone()
            if int(row[0]) != expected:
                raise ExportError(
                    f"session {target} changed during the export ({row[0]} messages now, "
                    f"{expected} exported); nothing was deleted"
                )
        delete_sessions(db, current)
    return current
