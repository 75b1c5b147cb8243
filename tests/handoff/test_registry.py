"""The handoff facet's compare-and-set rules (``Store.handoffs``), on every store backend: a
real SQLite file and a fresh database of the throwaway PostgreSQL cluster (``backend_url``)."""

from __future__ import annotations

import threading

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url
from hermes_core.store.handoffs import REASON_LIMIT
from hermes_core.store.protocol import HandoffTable, Store


def _open(url: str) -> tuple[Store, HandoffTable]:
    store = open_url(url, host=PluginHost())
    return store, store.handoffs


def test_request_refused_while_pending_or_running(backend_url: str) -> None:
    store, registry = _open(backend_url)
    assert registry.request("s1", "matrix", now=10.0)
    assert not registry.request("s1", "telegram")
    claimed = registry.claim(["matrix"])
    assert claimed is not None and claimed.state == "running"
    assert not registry.request("s1", "matrix")
    handoff = registry.get("s1")
    assert handoff is not None and handoff.platform == "matrix" and handoff.requested_at == 10.0
    store.close()


def test_claim_only_for_running_platforms_and_only_once(backend_url: str) -> None:
    store, registry = _open(backend_url)
    registry.request("s1", "matrix", now=1.0)
    assert registry.claim(["telegram"]) is None
    other_store, other = _open(backend_url)
    results: list[object] = []
    barrier = threading.Barrier(2)

    def claim(target: HandoffTable) -> None:
        barrier.wait()
        results.append(target.claim(["matrix"]))

    threads = [threading.Thread(target=claim, args=(r,)) for r in (registry, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(result is not None for result in results) == 1
    store.close()
    other_store.close()


def test_fail_keeps_reason_and_allows_retry(backend_url: str) -> None:
    store, registry = _open(backend_url)
    registry.request("s1", "telegram")
    assert not registry.fail("s1", "not running yet")
    registry.claim(["telegram"])
    assert registry.fail("s1", "x" * 900 + "\nmore")
    failed = registry.get("s1")
    assert failed is not None and failed.state == "failed"
    assert failed.error is not None and len(failed.error) == REASON_LIMIT
    assert registry.request("s1", "telegram")
    assert registry.get("s1") is not None and registry.get("s1").state == "pending"  # type: ignore[union-attr]
    store.close()


def test_complete_only_from_running(backend_url: str) -> None:
    store, registry = _open(backend_url)
    registry.request("s1", "matrix")
    assert not registry.complete("s1")
    registry.claim(["matrix"])
    assert registry.complete("s1")
    assert registry.get("s1").state == "completed"  # type: ignore[union-attr]
    store.close()


def test_cancel_only_while_pending(backend_url: str) -> None:
    store, registry = _open(backend_url)
    registry.request("s1", "matrix")
    registry.request("s2", "matrix")
    assert registry.cancel("s1")
    assert registry.get("s1") is None
    registry.claim(["matrix"])
    assert not registry.cancel("s2")
    assert registry.get("s2").state == "running"  # type: ignore[union-attr]
    store.close()


def test_reclaim_stale_running_rows(backend_url: str) -> None:
    store, registry = _open(backend_url)
    registry.request("s1", "matrix")
    registry.request("s2", "telegram")
    registry.claim(["matrix"])
    registry.claim(["telegram"])
    assert registry.reclaim_stale(["matrix"]) == ["s1"]
    assert registry.get("s1").state == "pending"  # type: ignore[union-attr]
    assert registry.get("s2").state == "running"  # type: ignore[union-attr]
    store.close()


def _race_claim_and_cancel(
    gateway: HandoffTable, waiter: HandoffTable, session_id: str
) -> tuple[object, bool]:
    """A gateway claiming and the waiter cancelling ``session_id`` at the same moment."""
    outcome: dict[str, object] = {}
    barrier = threading.Barrier(2)

    def claim() -> None:
        barrier.wait()
        outcome["claimed"] = gateway.claim(["telegram"])

    def cancel() -> None:
        barrier.wait()
        outcome["cancelled"] = waiter.cancel(session_id)

    threads = [threading.Thread(target=claim), threading.Thread(target=cancel)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcome["claimed"], bool(outcome["cancelled"])


def test_a_cancel_racing_a_claim_never_withdraws_a_claimed_handoff(backend_url: str) -> None:
    store, registry = _open(backend_url)
    other_store, other = _open(backend_url)
    for round_number in range(20):
        session_id = f"s{round_number}"
        assert registry.request(session_id, "telegram")
        claimed, cancelled = _race_claim_and_cancel(other, registry, session_id)
        after = registry.get(session_id)
        if cancelled:
            assert claimed is None and after is None
        else:
            assert claimed is not None
            assert after is not None and after.state == "running"
            assert other.complete(session_id)
    store.close()
    other_store.close()


def test_home_participant_is_remembered_and_defaults_to_a_group(backend_url: str) -> None:
    store, registry = _open(backend_url)
    assert registry.home_participant("telegram") == ("group", None)
    registry.remember_home_participant("telegram", "dm", "u7")
    registry.remember_home_participant("telegram", "group", "u8")
    store.close()
    reopened, again = _open(backend_url)
    assert again.home_participant("telegram") == ("group", "u8")
    assert again.home_participant("matrix") == ("group", None)
    reopened.close()


def test_claim_takes_the_oldest_pending_request_first(backend_url: str) -> None:
    store, registry = _open(backend_url)
    registry.request("late", "matrix", now=20.0)
    registry.request("early", "matrix", now=10.0)
    first = registry.claim(["matrix"])
    assert first is not None and first.session_id == "early"
    second = registry.claim(["matrix", "telegram"])
    assert second is not None and second.session_id == "late"
    assert registry.claim(["matrix"]) is None
    store.close()
