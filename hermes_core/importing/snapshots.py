"""Restoring sessions from a backup: the snapshot mode of ``ImportedSession``.

A backup importer (the ``jsonl`` importer) sets ``snapshot`` to the session as it was stored.
The session keeps its id, title, timestamps, lineage, pin and archive flags, model, tokens and
metadata, and its messages keep their own timestamps. Restoring never fails over a clash:

* a session whose id already exists is skipped ("already in this store");
* an id that is not a session id (``../../x``: the store's grammar refuses it) is replaced by
  a new one, reported (:mod:`.kept_ids`);
* a title used by a different session gets a visible `` (2)``-style suffix, reported;
* a parent that is not in this store is left out of the lineage, reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hermes_hookspecs import ImportedSession, Session

from hermes_core.store.ids import looks_like_session_id, shown_id
from hermes_core.store.imports import ImportedTotals

from .batches import message_batches
from .kept_ids import choose_id, renamed_note
from .outcomes import StoredSession

if TYPE_CHECKING:
    from hermes_core.store.protocol import ImportBookkeeping

_KEPT_FIELDS = (
    "user_id", "model", "cwd", "git_branch", "git_repo_root", "chat_id", "chat_type",
    "thread_id", "session_key", "billing_provider", "cost_actual_usd", "cost_estimated_usd",
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "ended_at",
    "end_reason", "last_active_at",
)  # fmt: skip


@dataclass(slots=True)
class RestoredSnapshot:
    """What restoring one snapshot did."""

    stored: StoredSession | None
    """None when the session was already in the store."""
    notes: list[str] = field(default_factory=list)


def restore_snapshot(
    store: ImportBookkeeping,
    imported: ImportedSession,
    *,
    before_restoring: Callable[[str], None] | None = None,
) -> RestoredSnapshot:
    """Store the snapshot session of ``imported`` with its own id and messages.

    The session row, its message batches and its title are several transactions: a process
    killed in between leaves a session that a later restore would take for one already here.
    ``before_restoring(session_id)`` is called first, once the session is known to be new,
    so the caller can mark it as the one in progress (the import run records it in the
    file's ``importing`` row, and the next run discards it and restores it again)."""
    snapshot = imported.snapshot
    assert snapshot is not None, "restore_snapshot needs ImportedSession.snapshot"
    if looks_like_session_id(snapshot.id) and store.session_exists(snapshot.id):
        return RestoredSnapshot(None, [f"session {snapshot.id} is already in this store; skipped"])
    chosen = choose_id(store, snapshot.id, started_at=snapshot.started_at)
    if before_restoring is not None:
        before_restoring(chosen.session_id)
    notes: list[str] = []
    if chosen.replaced_because is not None:
        notes.append(
            renamed_note(snapshot.id, chosen.replaced_because, chosen.session_id, verb="restored")
        )
    parent_id, parent_kind = snapshot.parent_session_id, snapshot.parent_kind
    if parent_id is not None and not store.session_exists(parent_id):
        notes.append(
            f"session {shown_id(snapshot.id)}: its parent {shown_id(parent_id)} is not in "
            "this store; restored without that link"
        )
        parent_id, parent_kind = None, None
    if parent_id is None:
        parent_kind = None
    elif parent_kind is None:
        parent_kind = "branch"
    session_id = store.create_session(
        source=snapshot.source,
        started_at=snapshot.started_at,
        session_id=chosen.session_id,
        parent_session_id=parent_id,
        parent_kind=parent_kind,
        metadata=snapshot.metadata or None,
        model_config=snapshot.model_config,
        system_prompt=snapshot.system_prompt,
        fields=_kept_fields(snapshot),
    )
    written = 0
    for batch in message_batches(iter(imported.messages), first_timestamp=snapshot.started_at):
        written += store.append_messages(
            session_id, batch, default_timestamp=snapshot.started_at
        )
    title = store.finish_session(
        session_id,
        ImportedTotals(title_proposal=snapshot.title, ended_at=None, end_reason=None),
        title_source=snapshot.title_source or "import",
    )
    if snapshot.title is not None and title != snapshot.title:
        notes.append(
            f"session {shown_id(snapshot.id)}: the title '{snapshot.title}' is used by another "
            f"session; restored as '{title}'"
        )
    return RestoredSnapshot(
        StoredSession(
            session_id=session_id,
            title=title,
            messages=written,
            delegate=parent_kind == "delegate",
            restored=True,
        ),
        notes,
    )


def _kept_fields(snapshot: Session) -> dict[str, object]:
    fields: dict[str, object] = {name: getattr(snapshot, name) for name in _KEPT_FIELDS}
    fields["pinned"] = int(snapshot.pinned)
    fields["archived"] = int(snapshot.archived)
    if fields["last_active_at"] is None:
        fields["last_active_at"] = snapshot.ended_at or snapshot.started_at
    return fields
