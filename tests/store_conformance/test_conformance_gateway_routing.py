"""``Store.routing`` (``GatewayRouting``): routed sessions, insert-if-absent claims,
recovery reads, home channels, re-sent message ids and repair-routing, on every backend."""

from __future__ import annotations

import threading

from conformance_types import EventLog, StoreFactory
from hermes_hookspecs import Message

from hermes_core.store.protocol import Store
from hermes_core.store.routed_sessions import RouteOrigin

KEY = "agent:main:webhook:dm:chat-1"
ORIGIN = RouteOrigin(platform="webhook", chat_id="chat-1", chat_type="dm", user_id="u1")


def test_a_routed_session_is_created_with_its_route(store: Store, events: EventLog) -> None:
    table = store.routing
    session = table.create_routed_session(KEY, ORIGIN, model="m", now=100.0)
    assert (
        len(session.id.rsplit("_", 1)[1]) == 8
        and session.session_key == KEY
        and session.chat_id == "chat-1"
    )
    route = table.route(KEY)
    assert route is not None and route.session_id == session.id
    assert route.origin == {"chat_id": "chat-1", "chat_type": "dm", "user_id": "u1"}
    assert [r.session_key for r in table.routes()] == [KEY]
    assert events.started == [session.id]


def test_claim_route_adopts_the_winner(store: Store, events: EventLog) -> None:
    table = store.routing
    first, created = table.claim_route(KEY, ORIGIN, expected=None, now=100.0)
    assert created
    # Another gateway saw no route either (expected None) but lost the race: it adopts.
    second, created_again = table.claim_route(KEY, ORIGIN, expected=None, now=101.0)
    assert not created_again and second.id == first.id
    assert events.started == [first.id]
    # A caller that saw the current route and wants the next session gets a new one.
    third, created_third = table.claim_route(KEY, ORIGIN, expected=first.id, now=102.0)
    assert created_third and third.id != first.id
    route = table.route(KEY)
    assert route is not None and route.session_id == third.id


def test_concurrent_claims_from_two_connections_make_one_session(
    store_factory: StoreFactory,
) -> None:
    stores = [store_factory() for _ in range(4)]
    barrier = threading.Barrier(len(stores))
    results: list[tuple[str, bool]] = []
    lock = threading.Lock()

    def claim(one: Store) -> None:
        barrier.wait()
        session, created = one.routing.claim_route(KEY, ORIGIN, expected=None)
        with lock:
            results.append((session.id, created))

    threads = [threading.Thread(target=claim, args=(one,)) for one in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({session_id for session_id, _ in results}) == 1
    assert sum(created for _, created in results) == 1
    assert stores[0].count_sessions() == 1


def test_keyed_sessions_rank_by_real_activity_and_respect_reset(store: Store) -> None:
    table = store.routing
    older = table.create_routed_session(KEY, ORIGIN, now=100.0)
    store.append_message(older.id, Message(role="user", content="hi", timestamp=150.0))
    assert table.real_activity(older.id) == 150.0
    newer = table.create_routed_session(KEY, ORIGIN, now=120.0)
    ranked = table.keyed_sessions(KEY)
    assert [s.session_id for s in ranked] == [older.id, newer.id]
    assert table.reset_boundary(KEY) is None
    fresh = table.create_routed_session(
        KEY, ORIGIN, replaces=(older.id, "new_session"), parent=(older.id, "reset"), now=200.0
    )
    assert table.reset_boundary(KEY) == 200.0
    assert older.id not in [s.session_id for s in table.keyed_sessions(KEY)]
    assert store.get_session(fresh.id).parent_session_id == older.id


def test_point_stamps_the_key_and_reopens_a_reaped_session(store: Store) -> None:
    table = store.routing
    plain = store.create_session("webhook")
    store.end_session(plain.id, "startup_orphan_reap")
    table.point(KEY, plain.id, ORIGIN, now=300.0)
    session = store.get_session(plain.id)
    assert session.session_key == KEY and session.ended_at is None
    route = table.route(KEY)
    assert route is not None and route.session_id == plain.id
    table.clear(KEY)
    assert table.route(KEY) is None


def test_home_channels(store: Store) -> None:
    table = store.routing
    assert table.home("webhook") is None
    table.set_home("webhook", "chat-9", None)
    table.set_home("webhook", "chat-7", "t1")
    assert table.home("webhook") == ("chat-7", "t1")


def test_a_platform_message_id_is_remembered_once(store: Store) -> None:
    table = store.routing
    session = table.create_routed_session(KEY, ORIGIN)
    assert table.delivered(KEY, "m-1") is None
    assert table.mark_delivered(KEY, "m-1", session.id)
    assert not table.mark_delivered(KEY, "m-1", "someother")
    assert table.delivered(KEY, "m-1") == session.id
    assert table.delivered("agent:main:webhook:dm:chat-2", "m-1") is None


def test_repair_adopts_an_orphan_and_retires_its_donor(store: Store) -> None:
    table = store.routing
    donor = table.create_routed_session(KEY, ORIGIN, now=100.0)
    store.append_message(donor.id, Message(role="user", content="a", timestamp=110.0))
    orphan = store.create_session("webhook", started_at=200.0)
    store.append_message(orphan.id, Message(role="user", content="b", timestamp=210.0))
    assert [r.session_id for r in table.orphan_candidates()] == [orphan.id]
    keyed = table.keyed_rows(["webhook"])
    assert [r.session_id for r in keyed] == [donor.id] and keyed[0].real_activity == 110.0
    assert table.adopt(orphan.id, donor.id, "contiguity", now=300.0) == KEY
    assert store.get_session(donor.id).end_reason == "superseded_by_repair"
    adopted = store.get_session(orphan.id)
    assert adopted.session_key == KEY and adopted.chat_id == "chat-1"
    route = table.route(KEY)
    assert route is not None and route.session_id == orphan.id
    assert table.orphan_candidates() == [] and table.keyed_rows(["webhook"])[0].session_id == (
        orphan.id
    )


def test_a_user_turn_carrying_the_platform_message_id_counts_as_delivered(store: Store) -> None:
    """The id travels in the user turn's own write: a process killed before it could remember
    the id still recognises the re-sent message."""
    table = store.routing
    session = table.create_routed_session(KEY, ORIGIN)
    store.append_messages(session.id, [Message("assistant", "hello", platform_message_id="m-2")])
    assert table.delivered(KEY, "m-2") is None  # only a user turn is a delivered message
    store.append_messages(session.id, [Message("user", "hi", platform_message_id="m-2")])
    assert table.delivered(KEY, "m-2") == session.id
    assert table.delivered("agent:main:webhook:dm:chat-2", "m-2") is None


def test_a_compression_continuation_or_branch_takes_over_the_route(store: Store) -> None:
    """SPEC G4: the chat goes on in the child, so its routing row moves there in the
    transaction that creates it, and the child carries the key and chat identity."""
    table = store.routing
    session = table.create_routed_session(KEY, ORIGIN, now=100.0)
    store.append_message(session.id, Message("user", "a long chat"))
    child = store.continue_after_compression(session.id)
    route = table.route(KEY)
    assert route is not None and route.session_id == child.id
    assert (child.session_key, child.chat_id, child.chat_type, child.user_id) == (
        KEY, "chat-1", "dm", "u1",
    )  # fmt: skip
    branch = store.create_session(
        "webhook", parent_session_id=child.id, parent_kind="branch", title="a branch"
    )
    route = table.route(KEY)
    assert route is not None and route.session_id == branch.id
    assert store.get_session(branch.id).session_key == KEY
    # A delegate (a side task) leaves the chat where it is.
    store.create_session("webhook", parent_session_id=branch.id, parent_kind="delegate")
    route = table.route(KEY)
    assert route is not None and route.session_id == branch.id


def _chat(store: Store, chat: str, *, started: float, quiet_at: float, user: str | None) -> str:
    """A routed telegram chat whose last message is at ``quiet_at``."""
    origin = RouteOrigin(platform="telegram", chat_id=chat, chat_type="dm", user_id=user)
    session = store.routing.create_routed_session(
        f"agent:main:telegram:dm:{chat}", origin, now=started
    )
    store.append_message(session.id, Message("user", f"hi from {chat}", timestamp=quiet_at))
    return session.id


def _lost(store: Store, *, started: float, user: str | None = None) -> str:
    """A telegram session with messages and no routing identity."""
    session = store.create_session("telegram", gateway=True, started_at=started, user_id=user)
    store.append_message(session.id, Message("user", "the live conversation", timestamp=started + 5))
    return session.id


def test_repair_planning_needs_one_predecessor_of_the_same_user_in_the_window(
    store: Store,
) -> None:
    """What ``hermes sessions repair-routing`` decides from the rows the backend gives it."""
    from hermes_core.gateway.repair import apply_repairs, plan_repairs

    donor = _chat(store, "c1", started=1_000.0, quiet_at=5_000.0, user="alice")
    _chat(store, "c2", started=1_000.0, quiet_at=2_000.0, user="alice")  # out of the window
    lost = _lost(store, started=5_300.0)
    cli = store.create_session("cli", started_at=5_100.0)
    store.append_message(cli.id, Message("user", "a terminal chat", timestamp=5_101.0))
    [plan] = plan_repairs(store.routing)
    assert (plan.orphan.session_id, plan.evidence, plan.repairable) == (lost, "contiguity", True)
    assert plan.donor is not None and plan.donor.session_id == donor
    [narrow] = plan_repairs(store.routing, max_gap_seconds=100)
    assert not narrow.repairable
    assert [a.orphan.session_id for a in apply_repairs(store.routing, [plan])] == [lost]
    assert store.get_session(lost).session_key == "agent:main:telegram:dm:c1"
    assert store.get_session(donor).end_reason == "superseded_by_repair"

    # Two predecessors in the window, or two orphans after one: left alone.
    first = _chat(store, "c3", started=10_000.0, quiet_at=15_000.0, user=None)
    second = _chat(store, "c4", started=10_000.0, quiet_at=15_100.0, user=None)
    torn = _lost(store, started=15_300.0)
    [ambiguous] = plan_repairs(store.routing)
    assert ambiguous.orphan.session_id == torn and not ambiguous.repairable
    assert ambiguous.reason is not None and "more than one keyed predecessor" in ambiguous.reason
    assert first in ambiguous.reason and second in ambiguous.reason
    store.delete_sessions([torn])
    sole = _chat(store, "c5", started=20_000.0, quiet_at=25_000.0, user=None)
    twins = {_lost(store, started=25_200.0), _lost(store, started=25_250.0)}
    plans = plan_repairs(store.routing)
    assert {a.orphan.session_id for a in plans} == twins
    assert all(not a.repairable and f"2 orphans claim the predecessor {sole}" in (a.reason or "")
               for a in plans)  # fmt: skip
    store.delete_sessions(list(twins))

    # Another user's chat is no predecessor.
    _chat(store, "c6", started=30_000.0, quiet_at=35_000.0, user="alice")
    stranger = _lost(store, started=35_300.0, user="bob")
    [refused] = plan_repairs(store.routing)
    assert refused.orphan.session_id == stranger and not refused.repairable
