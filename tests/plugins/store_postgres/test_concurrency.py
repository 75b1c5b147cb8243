"""Eight processes writing to one PostgreSQL store at once (issue 14 part 5): appenders to own
and shared sessions, importers, a pruner and a gateway router. Nothing is lost, no lock error
reaches a process, counters match rows, and prune removes only what it may."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from hermes_hookspecs import Message

from hermes_core.plugins import PluginHost
from hermes_core.selection.filters import SessionFilter
from hermes_core.store.backends import open_url

pytestmark = pytest.mark.slow

APPENDS = 150
IMPORTS = 20
PRUNABLE = 30

_COMMON = """
import sys, time
from hermes_hookspecs import Message
from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url
url, role, shared = sys.argv[1:4]
store = open_url(url, host=PluginHost())
print("READY", flush=True)
assert sys.stdin.readline().strip() == "go"
"""

_ROLES = {
    "appender": f"""
own = store.create_session("cli", title=f"appender {{shared[-3:]}} {{time.time_ns()}}")
for n in range({APPENDS}):
    store.append_message(own.id, Message("user" if n % 2 else "assistant", f"{{role}} {{n}} 并发"))
    if n % 10 == 0:
        store.append_messages(shared, [Message("user", f"shared {{n}}")] * 2)
print("DONE", own.id, flush=True)
""",
    "importer": f"""
from hermes_core.store.imports import ImportedTotals
made = []
for n in range({IMPORTS}):
    session_id = store.imports.create_session(source="claude-code", started_at=time.time())
    store.imports.append_messages(session_id, [Message("user", f"imported {{n}}")] * 3,
                                  default_timestamp=time.time())
    store.imports.finish_session(session_id, ImportedTotals(f"import {{n}}", time.time(), "imported"))
    made.append(session_id)
print("DONE", len(made), flush=True)
""",
    "pruner": """
from hermes_core.lifecycle.lock import acquire
from hermes_core.lifecycle.prune import plan_prune, run_prune
from hermes_core.selection.filters import SessionFilter
deleted = 0
for _ in range(5):
    lock = acquire(store.lifecycle, "prune")
    try:
        plan = plan_prune(store.lifecycle, SessionFilter(ended_only=True, source="old"))
        deleted += run_prune(store.lifecycle, plan, lock)
    finally:
        lock.release()
    time.sleep(0.05)
print("DONE", deleted, flush=True)
""",
    "router": """
from hermes_core.store.routing import RouteRecord
for n in range(100):
    key = f"agent:main:telegram:group:{n % 10}"
    session = store.create_session("telegram", gateway=True) if n < 10 else None
    current = store.routing.record(key)
    target = session.id if session else current.session_id
    store.routing.set_route(RouteRecord(key, target, "telegram", None, time.time()))
print("DONE", len(store.routing.records("telegram")), flush=True)
""",
}
PROCESSES = ["appender"] * 4 + ["importer"] * 2 + ["pruner", "router"]


def test_eight_processes_write_to_one_store_and_nothing_is_lost(postgres_url: str) -> None:
    with open_url(postgres_url, host=PluginHost()) as store:
        shared = store.create_session("cli", title="shared").id
        for _ in range(PRUNABLE):
            old = store.create_session("old", started_at=1.0)
            store.append_message(old.id, Message("user", "to prune"))
            store.end_session(old.id, "user_exit", ended_at=2.0)
    children = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(_COMMON + _ROLES[role]), postgres_url, role,
             shared],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for role in PROCESSES
    ]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "READY"
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        finished = [child.communicate(timeout=300) for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
    for child, (out, err), role in zip(children, finished, PROCESSES, strict=True):
        assert child.returncode == 0, f"{role}: {err}"
        assert err.strip() == "", f"{role}: {err}"
        assert out.strip().startswith("DONE"), f"{role}: {out}"
    results = {role: out.split() for (out, _), role in zip(finished, PROCESSES, strict=True)}
    assert results["pruner"][1] == str(PRUNABLE)
    assert results["router"][1] == "10"
    with open_url(postgres_url, host=PluginHost()) as store:
        assert store.message_count(shared) == 4 * (APPENDS // 10) * 2
        for (out, _), role in zip(finished, PROCESSES, strict=True):
            if role == "appender":
                assert store.message_count(out.split()[1]) == APPENDS
        assert store.count_sessions(SessionFilter(source="claude-code")) == 2 * IMPORTS
        assert store.count_sessions(SessionFilter(source="old")) == 0
        for session in store.select_sessions():
            assert session.message_count == store.message_count(session.id), session.id
        routes = store.routing.records("telegram")
        assert len({route.session_key for route in routes}) == len(routes) == 10
        stats = store.stats()
        assert stats.total_messages == 4 * APPENDS + 4 * (APPENDS // 10) * 2 + 2 * IMPORTS * 3
