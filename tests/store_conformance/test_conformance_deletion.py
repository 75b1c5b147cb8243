"""Deleting sessions: messages and index rows go, delegates go along, other children stay."""

from __future__ import annotations

import pytest
from conformance_types import EventLog
from hermes_hookspecs import Message

from hermes_core.search import session_search
from hermes_core.store.errors import SessionNotFound, StoreError
from hermes_core.store.protocol import Store


def test_deleting_takes_messages_and_delegates_and_unlinks_other_children(
    store: Store, events: EventLog
) -> None:
    parent = store.create_session("cli")
    store.append_message(parent.id, Message("user", "the platypus question"))
    delegate = store.create_session("cli", parent_session_id=parent.id, parent_kind="delegate")
    store.append_message(delegate.id, Message("user", "platypus subtask"))
    branch = store.create_session("cli", parent_session_id=parent.id, parent_kind="branch")
    store.append_message(branch.id, Message("user", "platypus on a branch"))
    store.end_session(delegate.id, "done")
    deleted = store.delete_session(parent.id)
    assert sorted(deleted) == sorted([parent.id, delegate.id])
    for gone in deleted:
        with pytest.raises(SessionNotFound):
            store.get_session(gone)
        assert store.message_count(gone) == 0
    kept = store.get_session(branch.id)
    assert kept.parent_session_id is None and kept.parent_kind is None
    assert [r["session_id"] for r in session_search(store, query="platypus")["results"]] == [
        branch.id
    ]
    # The parent was still open: deleting it ended it; the delegate had ended already.
    assert events.ended == [(delegate.id, "done"), (parent.id, "deleted")]
    with pytest.raises(SessionNotFound):
        store.delete_session(parent.id)


def test_deleting_many_counts_the_delegates_too(store: Store) -> None:
    ids = []
    for _ in range(5):
        session = store.create_session("cli")
        store.create_session("cli", parent_session_id=session.id, parent_kind="delegate")
        ids.append(session.id)
    assert store.delete_sessions(ids[:3], batch_size=2) == 6
    assert store.count_sessions() == 4


def test_delete_exactly_refuses_when_anything_changed(store: Store) -> None:
    parent = store.create_session("cli")
    store.append_message(parent.id, Message("user", "one"))
    expected = {parent.id: 1}
    store.append_message(parent.id, Message("user", "two"))
    with pytest.raises(StoreError, match="changed during the export"):
        store.delete_exactly(parent.id, expected)
    late = store.create_session("cli", parent_session_id=parent.id, parent_kind="delegate")
    with pytest.raises(StoreError, match=f"new: {late.id}"):
        store.delete_exactly(parent.id, {parent.id: 2})
    assert store.count_sessions() == 2
    assert sorted(store.delete_exactly(parent.id, {parent.id: 2, late.id: 0})) == sorted(
        [parent.id, late.id]
    )
    assert store.count_sessions() == 0


def test_deleting_many_tolerates_duplicates_and_unknown_ids(store: Store) -> None:
    a = store.create_session("cli")
    kept = store.create_session("cli")
    assert store.delete_sessions([a.id, a.id, "20990101_000000_ffffff"]) == 1
    assert [s.id for s in store.select_sessions()] == [kept.id]
    with pytest.raises(SessionNotFound):
        store.delete_session("20990101_000000_ffffff")
