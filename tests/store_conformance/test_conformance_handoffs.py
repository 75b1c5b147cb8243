"""``Store.handoffs`` (``HandoffTable``): the ``/handoff`` registry's transitions and the
``/sethome`` participant, on every backend; two stores on one database claim a handoff once."""

from __future__ import annotations

import threading

from conformance_types import StoreFactory

from hermes_core.store.handoffs import Handoff
from hermes_core.store.protocol import HandoffTable, Store


def test_a_handoff_goes_pending_running_completed_and_can_be_asked_again(store: Store) -> None:
    table = store.handoffs
    assert table.get("s1") is None
    assert table.request("s1", "telegram", now=5.0)
    assert not table.request("s1", "matrix")
    assert not table.complete("s1")  # nobody claimed it yet
    assert table.claim(["matrix"]) is None
    assert table.claim(["telegram"]) == Handoff("s1", "telegram", "running", 5.0)
    assert not table.cancel("s1")
    assert table.complete("s1")
    assert table.get("s1") == Handoff("s1", "telegram", "completed", 5.0)
    assert table.request("s1", "matrix", now=6.0)
    assert table.cancel("s1") and table.get("s1") is None


def test_a_failure_keeps_one_line_of_reason_and_a_dead_gateway_claim_is_reclaimed(
    store: Store,
) -> None:
    table = store.handoffs
    table.request("s1", "telegram", now=1.0)
    table.request("s2", "telegram", now=2.0)
    table.claim(["telegram"])
    table.claim(["telegram"])
    assert table.fail("s1", "chat\nnot   found")
    assert table.get("s1") == Handoff("s1", "telegram", "failed", 1.0, "chat not found")
    assert table.reclaim_stale(["telegram"]) == ["s2"]
    assert table.get("s2") == Handoff("s2", "telegram", "pending", 2.0)


def test_the_home_participant_persists(store_factory: StoreFactory) -> None:
    store_factory().handoffs.remember_home_participant("matrix", "dm", "@alice:hs")
    reopened = store_factory().handoffs
    assert reopened.home_participant("matrix") == ("dm", "@alice:hs")
    assert reopened.home_participant("telegram") == ("group", None)


def test_two_stores_claim_one_handoff_once(store_factory: StoreFactory) -> None:
    first, second = store_factory().handoffs, store_factory().handoffs
    first.request("s1", "telegram")
    claims: list[Handoff | None] = []
    barrier = threading.Barrier(2)

    def claim(table: HandoffTable) -> None:
        barrier.wait()
        claims.append(table.claim(["telegram"]))

    threads = [threading.Thread(target=claim, args=(table,)) for table in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(claim is None for claim in claims) == [False, True]
