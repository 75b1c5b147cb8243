"""Real processes: two start-ups racing for the automatic clean-up, and ``kill -9`` in the
middle of a large prune."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lifecycle_helpers import REPO_ROOT, assert_store_whole, ids, make

from hermes_core.lifecycle import state
from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

STARTER = """
import json, pathlib, sys, time
from hermes_core.config import load_config
from hermes_core.lifecycle.autoclean import run_auto_clean
from hermes_core.store import SessionStore

home, go = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
store = SessionStore.open(home)
config = load_config(home)
print("READY", flush=True)
while not go.exists():
    time.sleep(0.001)
result = run_auto_clean(store, config)
print(json.dumps({"pruned": result.pruned, "skipped": result.skipped, "error": result.error}))
store.close()
"""


def _python(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _read_line(process: subprocess.Popen[str], timeout: float = 30.0) -> str:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    if not ready:
        process.kill()
        raise TimeoutError("the child process said nothing in time")
    return process.stdout.readline().strip()


def _start_together(home: Path, go: Path, count: int) -> list[dict[str, object]]:
    children = [_python(STARTER, str(home), str(go)) for _ in range(count)]
    try:
        for child in children:
            assert _read_line(child) == "READY"
        go.touch()
        outcomes = []
        for child in children:
            out, err = child.communicate(timeout=60)
            assert child.returncode == 0, err
            outcomes.append(json.loads(out.strip().splitlines()[-1]))
        return outcomes
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


@pytest.mark.parametrize("round_", range(2))
def test_of_two_processes_starting_together_exactly_one_prunes(tmp_path: Path, round_) -> None:
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        for _ in range(30):
            make(store, days_ago=200, messages=20)
        recent = make(store, days_ago=1)
    (home / "config.yaml").write_text("sessions:\n  auto_prune: true\n")
    outcomes = _start_together(home, tmp_path / f"go-{round_}", 2)
    assert all(o["error"] is None for o in outcomes), outcomes
    ran = [o for o in outcomes if o["skipped"] is None]
    assert len(ran) == 1, outcomes
    assert ran[0]["pruned"] == 30
    skipped = next(o for o in outcomes if o is not ran[0])
    assert skipped["pruned"] == 0
    assert skipped["skipped"] == "not due" or str(skipped["skipped"]).startswith(
        "another Hermes process"
    )
    # A third process, later: the shared stamp in state.db says "not due".
    (third,) = _start_together(home, tmp_path / f"go-again-{round_}", 1)
    assert third == {"pruned": 0, "skipped": "not due", "error": None}
    with SessionStore.open(home) as store:
        assert ids(store) == {recent}
        assert state.LOCK not in state.read(store.lifecycle, [state.LOCK])
        assert_store_whole(store.connection)


PRUNER = """
import sys
from hermes_core.lifecycle import prune
from hermes_core.lifecycle.lock import acquire
from hermes_core.selection.filters import SessionFilter
from hermes_core.store import SessionStore

prune.BATCH_SESSIONS = 10  # many small transactions, so the kill lands between and inside them
store = SessionStore(sys.argv[1])
plan = prune.plan_prune(store.lifecycle, SessionFilter(source="cron", ended_only=True))
print("PLANNED", len(plan.candidates), flush=True)
lock = acquire(store.lifecycle, "prune")
prune.run_prune(
    store.lifecycle, plan, lock, on_batch=lambda p: print("BATCH", p.batch, p.deleted, flush=True)
)
print("DONE", flush=True)
"""


def test_kill_9_in_the_middle_of_a_large_prune_leaves_whole_sessions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        store.connection.execute("PRAGMA wal_autocheckpoint = 0")
        doomed = {
            make(store, "cron", messages=60, text="prunable 剪枝测试 words") for _ in range(300)
        }
        kept = {make(store, "cli", messages=4, text="keeper words") for _ in range(5)}
    path = home / "state.db"
    child = _python(PRUNER, str(path))
    try:
        assert _read_line(child) == "PLANNED 300"
        batches_seen = 0
        while batches_seen < 3:
            line = _read_line(child)
            assert line.startswith("BATCH"), line
            batches_seen += 1
        time.sleep(0.003)  # not synchronisation: lets the kill land inside the next batch
        assert child.poll() is None, "the prune finished before the kill"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == -signal.SIGKILL
    assert child.stdout is not None and "DONE" not in child.stdout.read()
    with SessionStore(path) as store:
        remaining = ids(store)
        gone = doomed - remaining
        # The kill landed mid-prune: some batches committed, and sessions are left to prune.
        assert len(gone) >= 30 and len(gone) % 10 == 0, len(gone)
        assert doomed & remaining, "the prune had finished: the kill came too late"
        assert kept <= remaining
        assert_store_whole(store.connection)
        hits = store.connection.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'prunable'"
        ).fetchone()[0]
        assert hits == 60 * len(doomed & remaining)
        cjk = store.connection.execute(
            "SELECT count(*) FROM messages_cjk WHERE messages_cjk MATCH '\"剪枝测试\"'"
        ).fetchone()[0]
        assert cjk == 60 * len(doomed & remaining)
        # The dead holder's lock row does not block the next prune.
        from hermes_core.lifecycle.lock import acquire
        from hermes_core.lifecycle.prune import plan_prune, run_prune
        from hermes_core.selection.filters import SessionFilter

        plan = plan_prune(store.lifecycle, SessionFilter(source="cron", ended_only=True))
        lock = acquire(store.lifecycle, "prune")
        try:
            run_prune(store.lifecycle, plan, lock)
        finally:
            lock.release()
        assert ids(store) == kept
        assert_store_whole(store.connection)
