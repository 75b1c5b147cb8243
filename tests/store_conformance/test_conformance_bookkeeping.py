"""Import bookkeeping, imported sessions (with their events), state_meta, and the lifecycle
facet prune and archive run on."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from conformance_types import EventLog, StoreFactory
from hermes_hookspecs import Message

from hermes_core.lifecycle import state
from hermes_core.lifecycle.archive import archive, archive_selection, plan_archive, unarchive
from hermes_core.lifecycle.lock import LockHeld, acquire
from hermes_core.lifecycle.prune import plan_prune, run_prune
from hermes_core.selection.filters import SessionFilter
from hermes_core.store.imports import ImportedTotals, ImportFileRecord
from hermes_core.store.protocol import Store

RECORD = ImportFileRecord(
    path="/logs/a.jsonl",
    importer="claude",
    size=10,
    mtime_ns=5,
    cursor=None,
    foreign_id=None,
    session_id=None,
    state="importing",
    imported_at=100.0,
)


def test_an_imported_session_is_bookkept_started_and_ended(
    store: Store, events: EventLog
) -> None:
    imports = store.imports
    session_id = imports.create_session(
        source="claude-code",
        started_at=50.0,
        metadata={"imported_from": {"foreign_id": "f-1"}},
        bookkeeping=RECORD,
    )
    assert events.started == [session_id]
    assert imports.load_files()[RECORD.path].session_id == session_id
    assert imports.load_files()[RECORD.path].state == "importing"
    written = imports.append_messages(
        session_id,
        [Message("user", "hi", timestamp=60.0), Message("assistant", "hello")],
        default_timestamp=50.0,
    )
    assert written == 2 and imports.last_message_id(session_id) > 0
    title = imports.finish_session(
        session_id,
        ImportedTotals(title_proposal="Imported: hi", ended_at=70.0, end_reason="imported"),
    )
    assert title == "Imported: hi"
    assert events.ended == [(session_id, "imported")]
    session = store.get_session(session_id)
    assert (session.ended_at, session.end_reason, session.message_count) == (70.0, "imported", 2)
    done = dataclasses.replace(RECORD, session_id=session_id, state="done", foreign_id="f-1")
    imports.update_file(done)
    assert imports.load_files() == {RECORD.path: done}
    assert imports.session_of_foreign_id("claude", "f-1") == session_id
    assert imports.import_of_foreign_id("claude", "f-1") == (session_id, RECORD.path)
    assert imports.session_of_foreign_id("codex", "f-1") is None
    assert imports.session_exists(session_id)


def test_a_delegate_is_found_by_its_foreign_id(store: Store) -> None:
    parent = store.imports.create_session(source="claude-code", started_at=1.0)
    child = store.imports.create_session(
        source="claude-code",
        started_at=2.0,
        parent_session_id=parent,
        parent_kind="delegate",
        metadata={"imported_from": {"foreign_id": "agent-7"}},
    )
    assert store.imports.delegate_of_foreign_id(parent, "agent-7") == child
    assert store.imports.delegate_of_foreign_id(parent, "agent-8") is None


def test_the_id_of_a_message_some_places_before_the_newest(store: Store) -> None:
    imports = store.imports
    session_id = imports.create_session(source="claude-code", started_at=1.0)
    assert imports.last_message_id(session_id) == 0
    assert imports.last_message_id(session_id, 1) == 0
    imports.append_messages(
        session_id, [Message("user", "a"), Message("assistant", "b"), Message("user", "c")],
        default_timestamp=1.0,
    )  # fmt: skip
    newest = imports.last_message_id(session_id)
    before = imports.last_message_id(session_id, 1)
    first = imports.last_message_id(session_id, 2)
    assert first < before < newest
    assert imports.last_message_id(session_id, 3) == 0
    imports.discard_messages_after(session_id, before)
    assert [m.content for m in store.messages(session_id)] == ["a", "b"]
    assert imports.last_message_id(session_id) == before


def test_the_texts_of_a_session_in_order(store: Store) -> None:
    imports = store.imports
    session_id = imports.create_session(source="hermes-agent", started_at=1.0)
    assert imports.message_texts(session_id) == []
    imports.append_messages(
        session_id, [Message("user", "first"), Message("assistant", "")], default_timestamp=1.0
    )
    imports.append_messages(session_id, [Message("user", "third")], default_timestamp=2.0)
    assert imports.message_texts(session_id) == [
        ("user", "first"), ("assistant", ""), ("user", "third")
    ]  # fmt: skip


def test_an_unfinished_append_is_undone(store: Store) -> None:
    imports = store.imports
    session_id = imports.create_session(source="claude-code", started_at=1.0)
    imports.append_messages(session_id, [Message("user", "kept")], default_timestamp=1.0)
    kept = imports.last_message_id(session_id)
    imports.mark_append("/logs/b.jsonl", session_id, kept)
    imports.append_messages(session_id, [Message("user", "half")] * 3, default_timestamp=2.0)
    assert imports.pending_appends() == {"/logs/b.jsonl": (session_id, kept)}
    assert imports.undo_pending_append("/logs/b.jsonl", session_id, kept) == 3
    assert imports.pending_appends() == {}
    assert [m.content for m in store.messages(session_id)] == ["kept"]
    assert store.get_session(session_id).message_count == 1


def test_a_partial_import_is_discarded_with_its_bookkeeping(store: Store) -> None:
    session_id = store.imports.create_session(
        source="claude-code", started_at=1.0, bookkeeping=RECORD
    )
    assert store.imports.discard_partial(dataclasses.replace(RECORD, session_id=session_id)) == 1
    assert store.imports.load_files() == {}
    assert not store.imports.session_exists(session_id)


def test_state_meta_keeps_text_by_key(store: Store) -> None:
    assert store.read_state(["a", "b"]) == {}
    store.write_state({"a": "1", "b": "two"})
    store.write_state({"a": "3"})
    assert store.read_state(["a", "b", "c"]) == {"a": "3", "b": "two"}
    assert store.lifecycle.read_state(["b"]) == {"b": "two"}
    with store.lifecycle.transaction() as db:
        state.write(db, {"c": 1.5, "d": {"x": 1}})
        state.delete(db, "a")
    assert store.read_state(["a", "c", "d"]) == {"c": "1.5", "d": '{"x": 1}'}


def test_state_meta_lists_every_key_or_those_of_a_prefix_in_key_order(store: Store) -> None:
    assert store.list_state() == {}
    store.write_state({"gateway.home:slack": "C1", "b": "2", "a": "1", "gateway.home:email": "x"})
    store.queue_title("20990101_000000_abcdef", "Later title")  # a session still to come
    listed = store.list_state()
    assert list(listed) == sorted(listed)
    assert {"a": "1", "b": "2", "gateway.home:email": "x", "gateway.home:slack": "C1"}.items() <= (
        listed.items()
    )
    assert "Later title" in listed.values()
    assert store.list_state("gateway.home:") == {"gateway.home:email": "x", "gateway.home:slack": "C1"}
    assert store.list_state("gateway.home:slack") == {"gateway.home:slack": "C1"}
    assert store.list_state("nothing") == {}
    with store.lifecycle.transaction() as db:
        state.delete(db, "a")
    assert "a" not in store.list_state()


def test_the_lifecycle_lock_is_held_once(store: Store) -> None:
    lock = acquire(store.lifecycle, "test")
    with pytest.raises(LockHeld):
        acquire(store.lifecycle, "another")
    lock.release()
    acquire(store.lifecycle, "again").release()
    assert state.LOCK not in store.read_state([state.LOCK])


def test_prune_and_archive_spare_pinned_lineages_and_running_sessions(store: Store) -> None:
    old_ended = store.create_session("cli", started_at=10.0)
    store.end_session(old_ended.id, "user_exit", ended_at=20.0)
    delegate = store.create_session(
        "cli", started_at=11.0, parent_session_id=old_ended.id, parent_kind="delegate"
    )
    store.end_session(delegate.id, "done", ended_at=12.0)
    pinned_root = store.create_session("cli", started_at=10.0, title="keep")
    pinned_child = store.continue_after_compression(pinned_root.id)
    store.end_session(pinned_child.id, "user_exit")
    store.set_pinned([pinned_child.id], True)
    running = store.create_session("cli", started_at=10.0)

    plan = plan_archive(store.lifecycle, archive_selection(SessionFilter()))
    assert {m.id for m in plan.matches} == {old_ended.id, delegate.id}
    assert plan.pinned_count == 2  # the pinned session and its compression ancestor
    assert archive(store.lifecycle, [old_ended.id, pinned_root.id, running.id]) == 1
    assert store.get_session(old_ended.id).archived
    assert unarchive(store.lifecycle, [old_ended.id]) == 1

    prune = plan_prune(store.lifecycle, SessionFilter(ended_only=True))
    assert [c.id for c in prune.candidates if c.id != delegate.id] == [old_ended.id]
    assert prune.protected_count == 2 and prune.active_count == 1
    lock = acquire(store.lifecycle, "prune")
    try:
        assert run_prune(store.lifecycle, plan_prune(store.lifecycle, SessionFilter(
            ended_only=True, session_ids=(old_ended.id,)
        )), lock) == 2
    finally:
        lock.release()
    assert store.count_sessions() == 3
    free, pages, size = store.lifecycle.free_space()
    assert pages > 0 and size > 0 and 0 <= free <= pages
    assert store.lifecycle.size_bytes() > 0


def test_routing_rows_point_session_keys_at_sessions(store: Store) -> None:
    from hermes_core.store.routing import RouteRecord

    first = store.create_session("telegram", gateway=True)
    second = store.create_session("telegram", gateway=True)
    key = "agent:main:telegram:group:-100:u7"
    assert store.routing.record(key) is None
    store.routing.set_route(RouteRecord(key, first.id, "telegram", '{"chat": "-100"}', 10.0))
    store.routing.set_route(RouteRecord("agent:main:discord:dm:9", second.id, "discord", None, 11.0))
    assert store.routing.record(key) == RouteRecord(key, first.id, "telegram", '{"chat": "-100"}', 10.0)
    store.routing.set_route(RouteRecord(key, second.id, "telegram", None, 12.0, expires_at=99.0))
    assert store.routing.record(key) == RouteRecord(key, second.id, "telegram", None, 12.0, 99.0)
    assert [r.session_key for r in store.routing.records()] == ["agent:main:discord:dm:9", key]
    assert [r.session_key for r in store.routing.records("telegram")] == [key]
    store.delete_session(second.id)
    assert store.routing.record(key).session_id is None  # type: ignore[union-attr]
    assert store.routing.delete_route(key) is True
    assert store.routing.delete_route(key) is False
    assert store.routing.record(key) is None


def test_a_whole_foreign_database_is_mapped_refreshed_and_undone(store: Store) -> None:
    """What the database import (a Hermes Agent ``state.db``) needs of a backend."""
    imports = store.imports
    run = 500.0

    def imported(foreign_id: str, session_id: str | None) -> str:
        provenance = {"tool": "hermes-agent", "path": "/agent/state.db",
                      "foreign_id": foreign_id, "imported_at": run, "seen": "[1]"}  # fmt: skip
        created = imports.create_session(
            source="cli", started_at=10.0, session_id=session_id,
            metadata={"imported_from": provenance}, fields={"ended_at": 20.0, "end_reason": "done"},
        )  # fmt: skip
        imports.append_messages(
            created, [Message(role="user", content="hi")], default_timestamp=11.0
        )
        return created

    parent = imported("p", "20260101_000000_feed01")
    child = imported("c", None)
    entries = imports.imported_sessions("hermes-agent")
    assert sorted(entries) == ["c", "p"]
    assert (entries["p"].session_id, entries["p"].seen) == (parent, "[1]")
    assert entries["c"].session_id == child
    assert imports.imported_sessions("claude") == {}

    imports.link_parent(child, parent, "compression")
    linked = store.get_session(child)
    assert (linked.parent_session_id, linked.parent_kind) == (parent, "compression")

    imports.refresh_session(
        parent, {"ended_at": 30.0, "end_reason": "user_exit", "input_tokens": 7}, seen="[2]",
        last_active_at=30.0,
    )  # fmt: skip
    refreshed = store.get_session(parent)
    assert (refreshed.ended_at, refreshed.end_reason, refreshed.input_tokens) == (
        30.0, "user_exit", 7,
    )  # fmt: skip
    assert imports.imported_sessions("hermes-agent")["p"].seen == "[2]"

    imports.mark_append("/agent/state.db#" + parent, parent, 0)
    imports.clear_append_marks("/agent/state.db")
    assert imports.pending_appends() == {}

    imports.update_file(
        dataclasses.replace(RECORD, path="/agent/state.db", importer="hermes-agent")
    )
    imports.forget_file("/agent/state.db")
    assert "/agent/state.db" not in imports.load_files()

    assert imports.discard_run("/agent/state.db", "hermes-agent", run) == 2
    assert imports.imported_sessions("hermes-agent") == {}
    assert not imports.session_exists(parent)


def _idle_session(store: Store, *, days: float, ended: bool = True, **fields: object) -> str:
    """A session started and last active ``days`` ago, with one exchange."""
    moment = time.time() - days * 86_400
    session = store.create_session("cli", started_at=moment, **fields)  # type: ignore[arg-type]
    store.append_messages(
        session.id,
        [Message("user", "hello", timestamp=moment), Message("assistant", "hi", timestamp=moment)],
    )
    if ended:
        store.end_session(session.id, "user_exit", ended_at=moment)
    return session.id


def test_the_automatic_clean_up_prunes_once_per_interval_and_archives_alone(
    store: Store,
) -> None:
    from hermes_core.config import Config
    from hermes_core.lifecycle.autoclean import run_auto_clean

    prune_on = Config({"sessions.auto_prune": True, "sessions.vacuum_after_prune": False})
    _idle_session(store, days=120)
    _idle_session(store, days=120, archived=1)
    old_pinned = _idle_session(store, days=120, pinned=1)
    recent = _idle_session(store, days=10)
    running = _idle_session(store, days=300, ended=False)
    assert run_auto_clean(store, Config(), now=time.time()).skipped == "disabled"
    now = time.time()
    first = run_auto_clean(store, prune_on, now=now)
    assert first.ran and first.pruned == 2 and first.error is None
    assert {s.id for s in store.select_sessions(SessionFilter(include_archived=True))} == {
        old_pinned, recent, running,
    }  # fmt: skip
    stamps = state.read(store.lifecycle, [state.LAST_AUTO_PRUNE, state.LOCK])
    assert state.as_time(stamps[state.LAST_AUTO_PRUNE]) == pytest.approx(now)
    assert state.LOCK not in stamps
    late = _idle_session(store, days=200)
    assert run_auto_clean(store, prune_on, now=now + 23 * 3600).skipped == "not due"
    later = run_auto_clean(store, prune_on, now=now + 25 * 3600)
    assert later.ran and later.pruned == 1
    assert late not in {s.id for s in store.select_sessions()}
    assert state.load_record(store.lifecycle).last_auto_prune_removed == 1

    archive_on = Config({"sessions.auto_archive": True, "sessions.auto_archive_idle_days": 14})
    stale = _idle_session(store, days=20)
    stale_pinned = _idle_session(store, days=20, pinned=1)
    swept = run_auto_clean(store, archive_on)
    assert swept.ran and swept.archived == 1 and swept.pruned == 0
    assert store.get_session(stale).archived and not store.get_session(stale_pinned).archived
    assert not store.get_session(recent).archived
    assert state.load_record(store.lifecycle).last_auto_archive is not None


def test_a_vacuum_reports_sizes_and_is_recorded(store: Store) -> None:
    from hermes_core.lifecycle.vacuum import vacuum

    doomed = _idle_session(store, days=5)
    store.delete_session(doomed)
    before, after = vacuum(store.lifecycle)
    assert before > 0 and after > 0
    assert state.load_record(store.lifecycle).last_vacuum is not None


def test_a_hermes_agent_store_is_imported_with_its_lineage_routes_and_once(
    store: Store, tmp_path: Path
) -> None:
    """The whole database import end to end (``hermes sessions import --from hermes-agent``)."""
    import json

    from hermes_import_hermes_agent.importer import HermesAgentImporter
    from importing.hermes_agent.agent_stores import (
        BRANCH,
        CONTINUATION,
        DELEGATE,
        ROOT,
        SYSTEM_PROMPT,
        T0,
        TELEGRAM,
        TIP,
        sample_store,
    )  # fmt: skip

    from hermes_core.importing import FileStatus, ImportRun
    from hermes_core.search import session_search
    from hermes_core.store.routing import RouteRecord

    sample, _ = sample_store(tmp_path / "agent.db", 30)
    outcome = ImportRun(store).import_file(sample.path, HermesAgentImporter())
    assert outcome.status is FileStatus.IMPORTED, outcome.detail
    assert sorted(s.session_id for s in outcome.sessions) == sorted(sample.session_ids)
    assert outcome.routes_added == 1
    root = store.get_session(ROOT)
    assert (root.title, root.system_prompt, root.end_reason) == (
        "my project", SYSTEM_PROMPT, "compression",
    )  # fmt: skip
    assert (store.get_session(CONTINUATION).title, store.get_session(TIP).title) == (
        "my project #2", "my project #3",
    )  # fmt: skip
    assert store.resolve("my project") == TIP
    assert store.get_session(DELEGATE).parent_kind == "delegate"
    assert store.get_session(BRANCH).parent_kind == "branch"
    assert store.get_session(TELEGRAM).pinned
    assert store.messages(TELEGRAM)[0].platform_message_id == "9001"
    assert store.routing.records() == [
        RouteRecord(
            "agent:main:telegram:dm:42", TELEGRAM, "telegram",
            json.dumps({"platform": "telegram", "chat_id": "42", "user_id": "555"}), T0 + 86000,
        )
    ]  # fmt: skip
    for query, expected in (("数据库迁移", ROOT), ("rollback", CONTINUATION), ("東京", TELEGRAM)):
        found = session_search(store, query=query)
        assert [r["session_id"] for r in found["results"]][:1] == [expected], query

    def everything() -> tuple[object, ...]:
        every = store.select_sessions(SessionFilter(include_archived=True))
        return every, [store.messages(s.id) for s in every], store.routing.records()

    before = everything()
    again = ImportRun(store).import_file(sample.path, HermesAgentImporter())
    assert again.status is FileStatus.UNCHANGED
    assert (again.sessions, again.appended, again.routes_added) == ([], [], 0)
    assert everything() == before


def test_a_hermes_agent_import_keeps_the_route_this_store_has_for_a_chat(
    store: Store, tmp_path: Path
) -> None:
    from hermes_import_hermes_agent.importer import HermesAgentImporter
    from importing.hermes_agent.agent_stores import sample_store

    from hermes_core.importing import ImportRun
    from hermes_core.store.routing import RouteRecord

    mine = store.create_session("telegram", title="live chat")
    store.routing.set_route(
        RouteRecord("agent:main:telegram:dm:42", mine.id, "telegram", None, 1.0)
    )
    sample, _ = sample_store(tmp_path / "agent.db", 30)
    outcome = ImportRun(store).import_file(sample.path, HermesAgentImporter())
    assert outcome.routes_added == 0
    assert any("agent:main:telegram:dm:42: this store already routes it" in n for n in outcome.notes)
    assert [r.session_id for r in store.routing.records()] == [mine.id]


def test_a_lifecycle_transaction_that_waits_too_long_says_the_store_stayed_busy(
    store_factory: StoreFactory,
) -> None:
    from hermes_core.store.errors import StoreUnavailable

    holder, waiter = store_factory(), store_factory()
    with holder.lifecycle.transaction() as held:
        held.write_state({"conformance.held": "1"})
        with (
            pytest.raises(StoreUnavailable, match="stayed busy"),
            waiter.lifecycle.transaction(retry_seconds=0.2),
        ):
            pass
    with waiter.lifecycle.transaction(retry_seconds=0.2) as free:
        assert free.read_state(["conformance.held"]) == {"conformance.held": "1"}
