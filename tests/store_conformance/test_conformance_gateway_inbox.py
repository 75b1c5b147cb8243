"""``Store.routing``'s gateway inbox: events recorded before their chat's turn, a platform
message id once per session key, rows in the order received, on every backend."""

from __future__ import annotations

import json
from collections.abc import Callable

from conformance_types import StoreFactory
from hermes_hookspecs import Message

from hermes_core.store.inbox import CLAIM_PREFIX, INBOX_MESSAGE_PREFIX, InboxClaim, claim_key
from hermes_core.store.protocol import Store
from hermes_core.store.routed_sessions import RouteOrigin

KEY = "agent:main:telegram:dm:1"
OTHER = "agent:main:telegram:dm:2"
ORIGIN = RouteOrigin(platform="telegram", chat_id="1", chat_type="dm", user_id="1")


def event(text: str) -> str:
    return json.dumps({"platform": "telegram", "chat_id": "1", "text": text})


def test_rows_come_back_in_the_order_received_until_removed(store: Store) -> None:
    table = store.routing
    first = table.inbox_add(KEY, "telegram", "m-1", event("one"), now=100.0).entry
    second = table.inbox_add(OTHER, "telegram", None, event("two"), now=101.0).entry
    third = table.inbox_add(KEY, "webhook", None, event("three"), now=102.0).entry
    assert first is not None and second is not None and third is not None
    assert first.id < second.id < third.id
    pending = table.inbox_pending()
    assert pending == [first, second, third]
    assert (pending[0].session_key, pending[0].platform, pending[0].message_id) == (
        KEY, "telegram", "m-1",
    )  # fmt: skip
    assert json.loads(pending[0].event)["text"] == "one" and pending[0].received_at == 100.0
    assert table.inbox_pending(["webhook"]) == [third]
    assert table.inbox_pending([]) == []
    assert table.inbox_remove(second.id) and not table.inbox_remove(second.id)
    assert table.inbox_pending() == [first, third]


def test_a_message_id_is_recorded_once_per_session_key(store: Store) -> None:
    table = store.routing
    admitted = table.inbox_add(KEY, "telegram", "m-1", event("hello"))
    assert not admitted.duplicate and admitted.entry is not None
    again = table.inbox_add(KEY, "telegram", "m-1", event("hello"))
    assert again.duplicate and again.stored_in is None
    elsewhere = table.inbox_add(OTHER, "telegram", "m-1", event("hello"))
    assert not elsewhere.duplicate
    # Events without a platform id are each their own row, with an id of their own.
    assert not table.inbox_add(KEY, "telegram", None, event("a")).duplicate
    assert not table.inbox_add(KEY, "telegram", None, event("a")).duplicate
    pending = table.inbox_pending()
    assert len(pending) == 4 and len({(e.session_key, e.message_id) for e in pending}) == 4
    assert [e.platform_message_id for e in pending] == ["m-1", "m-1", None, None]


def test_a_message_already_stored_as_a_user_turn_is_a_duplicate(store: Store) -> None:
    table = store.routing
    session = table.create_routed_session(KEY, ORIGIN)
    store.append_messages(session.id, [Message("user", "hi", platform_message_id="m-7")])
    admitted = table.inbox_add(KEY, "telegram", "m-7", event("hi"))
    assert admitted.duplicate and admitted.stored_in == session.id
    assert table.inbox_pending() == []


def test_a_turn_carrying_the_rows_id_is_found_as_delivered(store: Store) -> None:
    """An event without a platform id gets one of the inbox's own, which its turn carries, so
    a restart that finds the row after the turn was stored does not store it again."""
    table = store.routing
    entry = table.inbox_add(KEY, "telegram", None, event("hi")).entry
    assert entry is not None and entry.message_id.startswith(INBOX_MESSAGE_PREFIX)
    assert entry.platform_message_id is None
    session = table.create_routed_session(KEY, ORIGIN)
    assert table.delivered(KEY, entry.message_id) is None
    store.append_messages(session.id, [Message("user", "hi", platform_message_id=entry.message_id)])
    assert table.delivered(KEY, entry.message_id) == session.id
    assert table.inbox_pending() == [entry]  # the row goes only when the gateway removes it


def test_rows_persist_across_reopening(store: Store, store_factory: StoreFactory) -> None:
    entry = store.routing.inbox_add(KEY, "telegram", "m-1", event("kept")).entry
    assert entry is not None
    store.close()
    assert store_factory().routing.inbox_pending() == [entry]


def test_a_row_is_taken_by_one_claimant_until_its_claim_runs_out_or_its_holder_dies(
    store: Store,
) -> None:
    table = store.routing
    mine, theirs = InboxClaim("here/1/a", 200.0), InboxClaim("there/2/b", 200.0)
    held = table.inbox_add(KEY, "telegram", "m-1", event("one"), now=100.0, claim=theirs).entry
    free = table.inbox_add(OTHER, "telegram", "m-2", event("two"), now=101.0).entry
    assert held is not None and free is not None
    both_alive: Callable[[str], bool] = lambda owner: True  # noqa: E731
    taken = table.inbox_take(["telegram"], mine, both_alive, now=150.0)
    assert taken.entries == [free] and taken.held_until == 200.0
    # Taken already: nobody else gets it, and it is not taken twice by its holder.
    assert table.inbox_take(["telegram"], theirs, both_alive, now=150.0).entries == []
    assert table.inbox_take(["telegram"], mine, both_alive, now=150.0).entries == []
    # A holder that is gone, or a claim that ran out: taken.
    assert table.inbox_take(["telegram"], mine, lambda o: o != theirs.owner, now=150.0).entries == [
        held
    ]
    assert store.list_state(CLAIM_PREFIX) == {
        claim_key(held.id): mine.text, claim_key(free.id): mine.text
    }  # fmt: skip
    assert table.inbox_renew(InboxClaim(mine.owner, 300.0)) == 2
    table.inbox_release([held.id], mine.owner)
    assert table.inbox_take(["telegram"], theirs, both_alive, now=250.0).entries == [held]
    assert table.inbox_remove(free.id) and table.inbox_remove(held.id)
    assert store.list_state(CLAIM_PREFIX) == {}
