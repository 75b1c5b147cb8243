"""The routing identity: created with the session, recovery by real activity, /new boundaries,
repair by the next turn, the sessions.json mirror (SPEC G4, G5)."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path

import pytest
from disks import fill, small_tmpfs
from hermes_hookspecs import Message

from hermes_core.gateway.mirror import SessionsMirror, mirror_path
from hermes_core.gateway.routing import Router
from hermes_core.store import SessionStore
from hermes_core.store.ids import looks_like_session_id
from hermes_core.store.routed_sessions import RouteOrigin

KEY = "agent:main:webhook:dm:chat-1"
ORIGIN = RouteOrigin(platform="webhook", chat_id="chat-1", chat_type="dm", user_id="u1")


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    opened = SessionStore.open(tmp_path)
    yield opened  # type: ignore[misc]
    opened.close()


def say(store: SessionStore, session_id: str, text: str, at: float) -> None:
    store.append_message(session_id, Message(role="user", content=text, timestamp=at))


def test_the_first_message_creates_an_8_hex_session_with_its_routing_row(
    store: SessionStore,
) -> None:
    router = Router(store, clock=lambda: 1_000.0)
    resolution = router.resolve(KEY, ORIGIN)
    session = resolution.session
    assert resolution.created
    assert looks_like_session_id(session.id) and len(session.id.rsplit("_", 1)[1]) == 8
    assert (session.source, session.session_key, session.chat_id) == ("webhook", KEY, "chat-1")
    assert (session.chat_type, session.user_id) == ("dm", "u1")
    route = router.table.route(KEY)
    assert route is not None and route.session_id == session.id
    assert route.origin["chat_id"] == "chat-1"
    # The next message goes to the same session.
    again = router.resolve(KEY, ORIGIN)
    assert again.session.id == session.id and not again.created and not again.repaired


def test_the_session_row_and_its_routing_row_commit_together(store: SessionStore) -> None:
    # A routing write that fails rolls the session row back with it.
    store.connection.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON gateway_routing "
        "BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
    )
    with pytest.raises(sqlite3.DatabaseError):
        Router(store).resolve(KEY, ORIGIN)
    assert store.count_sessions() == 0


def test_a_missing_routing_row_is_repaired_by_the_next_turn(store: SessionStore) -> None:
    router = Router(store, clock=lambda: 1_000.0)
    session = router.resolve(KEY, ORIGIN).session
    say(store, session.id, "hello", 1_001.0)
    router.table.clear(KEY)
    assert router.table.route(KEY) is None
    resolution = router.resolve(KEY, ORIGIN)
    assert resolution.session.id == session.id and resolution.repaired
    route = router.table.route(KEY)
    assert route is not None and route.session_id == session.id


def test_a_stale_routing_row_never_wins_over_real_activity(store: SessionStore) -> None:
    router = Router(store)
    old = store.create_session(
        "webhook", gateway=True, started_at=100.0, session_key=KEY, chat_id="chat-1"
    )
    say(store, old.id, "days ago", 110.0)
    live = store.create_session(
        "webhook", gateway=True, started_at=200.0, session_key=KEY, chat_id="chat-1"
    )
    say(store, live.id, "what we were really talking about", 5_000.0)
    # The routing row still points at the old conversation (a lost write, an old version).
    router.table.point(KEY, old.id, ORIGIN, now=300.0)
    resolution = router.resolve(KEY, ORIGIN)
    assert resolution.session.id == live.id and resolution.repaired
    route = router.table.route(KEY)
    assert route is not None and route.session_id == live.id


def test_recovery_respects_a_new_boundary(store: SessionStore) -> None:
    clock = [1_000.0]
    router = Router(store, clock=lambda: clock[0])
    first = router.resolve(KEY, ORIGIN).session
    say(store, first.id, "before /new", 1_001.0)
    # A stray open row of the same key (a process that died long ago) older than the reset.
    stray = store.create_session(
        "webhook", gateway=True, started_at=900.0, session_key=KEY, chat_id="chat-1"
    )
    say(store, stray.id, "ancient", 950.0)
    clock[0] = 2_000.0
    fresh = router.start_new(KEY, ORIGIN, previous=first.id, reason="new_session", title="fresh")
    assert store.get_session(first.id).end_reason == "new_session"
    assert fresh.parent_session_id == first.id and fresh.parent_kind == "reset"
    assert fresh.title == "fresh"
    # After a restart (a new router over the same file) the chat resolves to the fresh one,
    # empty as it is, never reaching back behind the boundary.
    store.connection.execute("DELETE FROM gateway_routing")
    assert Router(store).resolve(KEY, ORIGIN).session.id == fresh.id


def test_an_intentional_reset_without_a_successor_starts_fresh(store: SessionStore) -> None:
    router = Router(store, clock=lambda: 3_000.0)
    stray = store.create_session(
        "webhook", gateway=True, started_at=900.0, session_key=KEY, chat_id="chat-1"
    )
    say(store, stray.id, "ancient", 950.0)
    ended = store.create_session(
        "webhook", gateway=True, started_at=1_000.0, session_key=KEY, chat_id="chat-1"
    )
    store.end_session(ended.id, "reset", ended_at=2_000.0)
    resolution = router.resolve(KEY, ORIGIN)
    assert resolution.created and resolution.session.id not in {stray.id, ended.id}


def test_a_session_reaped_at_start_up_is_resumed(store: SessionStore) -> None:
    router = Router(store, clock=lambda: 1_000.0)
    session = router.resolve(KEY, ORIGIN).session
    say(store, session.id, "hi", 1_001.0)
    store.end_session(session.id, "startup_orphan_reap")
    resumed = router.resolve(KEY, ORIGIN).session
    assert resumed.id == session.id and resumed.is_active


def test_a_compression_continuation_takes_over_the_route(store: SessionStore) -> None:
    router = Router(store, clock=lambda: 1_000.0)
    session = router.resolve(KEY, ORIGIN).session
    say(store, session.id, "long chat", 1_001.0)
    child = store.continue_after_compression(session.id)
    route = router.table.route(KEY)
    assert route is not None and route.session_id == child.id
    assert child.session_key == KEY
    assert router.resolve(KEY, ORIGIN).session.id == child.id


def test_keys_do_not_leak_into_each_other(store: SessionStore) -> None:
    router = Router(store)
    other = RouteOrigin(platform="webhook", chat_id="chat-2", chat_type="dm")
    a = router.resolve(KEY, ORIGIN).session
    b = router.resolve("agent:main:webhook:dm:chat-2", other).session
    assert a.id != b.id
    assert router.resolve(KEY, ORIGIN).session.id == a.id


def test_the_mirror_holds_gateway_entries_only_and_is_replaced_atomically(
    store: SessionStore, tmp_path: Path
) -> None:
    path = mirror_path(tmp_path)
    router = Router(store, mirror=SessionsMirror(path))
    store.create_session("cli")  # not a gateway entry: never in the mirror
    session = router.resolve(KEY, ORIGIN).session
    document = json.loads(path.read_text(encoding="utf-8"))
    assert set(document) == {"_README", KEY}
    assert document[KEY]["session_id"] == session.id
    assert document[KEY]["chat_id"] == "chat-1"
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temporary
    router.start_new(KEY, ORIGIN, previous=session.id, reason="new_session")
    replaced = json.loads(path.read_text(encoding="utf-8"))
    assert replaced[KEY]["session_id"] != session.id


def test_a_full_disk_leaves_the_old_mirror_and_the_turn_goes_on(
    store: SessionStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = mirror_path(tmp_path)
    router = Router(store, mirror=SessionsMirror(path))
    with small_tmpfs(path.parent):
        session = router.resolve(KEY, ORIGIN).session
        old = path.read_bytes()
        fill(path.parent)
        with caplog.at_level(logging.WARNING, logger="hermes.gateway"):
            router.start_new(KEY, ORIGIN, previous=session.id, reason="new_session")
        assert [r.getMessage() for r in caplog.records] == [
            f"{path} was not updated: the disk is full"
        ]
        assert router.resolve(KEY, ORIGIN).session.id != session.id  # the route did change
        assert path.read_bytes() == old
        assert sorted(p.name for p in path.parent.iterdir()) == ["filler", "sessions.json"]


def test_the_mirror_is_never_read_as_the_index(store: SessionStore, tmp_path: Path) -> None:
    path = mirror_path(tmp_path)
    router = Router(store, mirror=SessionsMirror(path))
    session = router.resolve(KEY, ORIGIN).session
    path.write_text(json.dumps({KEY: {"session_id": "20200101_000000_deadbeef"}}))
    assert router.resolve(KEY, ORIGIN).session.id == session.id


def test_home_channels_are_remembered(store: SessionStore) -> None:
    router = Router(store)
    assert router.table.home("webhook") is None
    router.table.set_home("webhook", "chat-1", None)
    assert router.table.home("webhook") == ("chat-1", None)
