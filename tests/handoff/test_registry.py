"""The handoff registry's compare-and-set rules, on a real SQLite store file."""

from __future__ import annotations

import threading
from pathlib import Path

from hermes_core.store import SessionStore
from hermes_core.store.handoffs import REASON_LIMIT, HandoffRegistry


def _open(path: Path) -> tuple[SessionStore, HandoffRegistry]:
    store = SessionStore(path)
    return store, HandoffRegistry(store.connection)


def test_request_refused_while_pending_or_running(tmp_path: Path) -> None:
    store, registry = _open(tmp_path / "state.db")
    assert registry.request("s1", "matrix", now=10.0)
    assert not registry.request("s1", "telegram")
    claimed = registry.claim(["matrix"])
    assert claimed is not None and claimed.state == "running"
    assert not registry.request("s1", "matrix")
    handoff = registry.get("s1")
    assert handoff is not None and handoff.platform == "matrix" and handoff.requested_at == 10.0
    store.close()


def test_claim_only_for_running_platforms_and_only_once(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store, registry = _open(path)
    registry.request("s1", "matrix", now=1.0)
    assert registry.claim(["telegram"]) is None
    other_store, other = _open(path)
    results: list[object] = []
    barrier = threading.Barrier(2)

    def claim(target: HandoffRegistry) -> None:
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


def test_fail_keeps_reason_and_allows_retry(tmp_path: Path) -> None:
    store, registry = _open(tmp_path / "state.db")
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


def test_complete_only_from_running(tmp_path: Path) -> None:
    store, registry = _open(tmp_path / "state.db")
    registry.request("s1", "matrix")
    assert not registry.complete("s1")
    registry.claim(["matrix"])
    assert registry.complete("s1")
    assert registry.get("s1").state == "completed"  # type: ignore[union-attr]
    store.close()


def test_cancel_only_while_pending(tmp_path: Path) -> None:
    store, registry = _open(tmp_path / "state.db")
    registry.request("s1", "matrix")
    registry.request("s2", "matrix")
    assert registry.cancel("s1")
    assert registry.get("s1") is None
    registry.claim(["matrix"])
    assert not registry.cancel("s2")
    assert registry.get("s2").state == "running"  # type: ignore[union-attr]
    store.close()


def test_reclaim_stale_running_rows(tmp_path: Path) -> None:
    store, registry = _open(tmp_path / "state.db")
    registry.request("s1", "matrix")
    registry.request("s2", "telegram")
    registry.claim(["matrix"])
    registry.claim(["telegram"])
    assert registry.reclaim_stale(["matrix"]) == ["s1"]
    assert registry.get("s1").state == "pending"  # type: ignore[union-attr]
    assert registry.get("s2").state == "running"  # type: ignore[union-attr]
    store.close()
