"""A store that may only be read here (each backend its own way: SQLite's file made immutable,
PostgreSQL's database read-only by default): it opens, says so (``read_only``,
``require_writable``), every read answers as before, every write raises ``StoreReadOnly`` —
never the driver's error — and nothing changes (DESIGN §9)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from conformance_types import StoreFactory
from hermes_hookspecs import Message

from hermes_core.store.errors import StoreReadOnly
from hermes_core.store.protocol import Store


def test_a_store_that_can_be_written_says_so(store: Store) -> None:
    assert store.read_only is False
    store.require_writable()  # raises nothing
    store.create_session("cli")


def _contents(store: Store) -> tuple[object, ...]:
    """What the store holds, as the protocol reads it."""
    sessions = store.select_sessions(newest_first=False)
    return (
        sessions,
        {
            session.id: [(m.role, m.content) for m in store.messages(session.id)]
            for session in sessions
        },
        store.list_state(),
    )


def test_a_read_only_store_reads_and_refuses_every_write(
    store_factory: StoreFactory, read_only: Callable[[], AbstractContextManager[None]]
) -> None:
    writer = store_factory()
    notes = writer.create_session("cli", title="deploy notes", started_at=1_700_000_000.0)
    writer.append_messages(
        notes.id,
        [Message("user", "how do I roll the deploy back?"), Message("assistant", "undo it")],
    )
    lunch = writer.create_session("cli", title="lunch", started_at=1_700_000_100.0)
    writer.write_state({"plugin.key": "kept"})
    before = _contents(writer)
    writer.close()

    with read_only():
        store = store_factory()
        try:
            assert store.read_only is True
            with pytest.raises(StoreReadOnly, match="read-only"):
                store.require_writable()
            assert _contents(store) == before
            assert store.resolve("lunch") == lunch.id
            assert store.count_messages(notes.id) == 2
            assert store.read_state(["plugin.key"]) == {"plugin.key": "kept"}
            writes: dict[str, Callable[[], object]] = {
                "create_session": lambda: store.create_session("cli"),
                "append_message": lambda: store.append_message(notes.id, Message("user", "no")),
                "set_title": lambda: store.set_title(notes.id, "renamed"),
                "end_session": lambda: store.end_session(lunch.id, "user_exit"),
                "set_pinned": lambda: store.set_pinned([notes.id], True),
                "write_state": lambda: store.write_state({"plugin.key": "changed"}),
                "delete_session": lambda: store.delete_session(lunch.id),
            }
            for name, write in writes.items():
                with pytest.raises(StoreReadOnly, match="read-only") as refused:
                    write()
                assert "\n" not in str(refused.value), name
            assert _contents(store) == before
        finally:
            store.close()

    reopened = store_factory()
    assert reopened.read_only is False
    assert _contents(reopened) == before
