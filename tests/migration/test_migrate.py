"""``hermes sessions migrate``: a lossless, verified, resumable copy between stores, from a
SQLite ``state.db`` into each backend (SQLite and PostgreSQL)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest
from hermes_hookspecs import Message, ToolCall
from hostile_ids import legacy_session_with_id
from installed_hermes import hermes_command, run_hermes_in

from hermes_core.lifecycle import state
from hermes_core.migration import MigrationError, migrate_store, session_digest
from hermes_core.plugins import PluginHost
from hermes_core.selection.filters import SessionFilter
from hermes_core.store import SessionStore
from hermes_core.store.backends import open_url
from hermes_core.store.imports import ImportFileRecord
from hermes_core.store.inbox import CLAIM_PREFIX, InboxClaim
from hermes_core.store.protocol import Store
from hermes_core.store.routing import RouteRecord


def _fill(store: Store) -> dict[str, str]:
    """A store with one of everything a migration must carry."""
    made: dict[str, str] = {}
    root = store.create_session(
        "cli", title="my project", started_at=1_000.0, system_prompt="You are Hermes.",
        model_config={"temperature": 0.3}, metadata={"note": "kept"}, model="m1", cwd="/w",
        git_branch="main", git_repo_root="/w", user_id="ana", input_tokens=7,
        cost_estimated_usd=0.25, billing_provider="openrouter",
    )  # fmt: skip
    store.append_messages(
        root.id,
        [
            Message("user", "run the tests 量子纠缠", timestamp=1_001.0),
            Message(
                "assistant", "", timestamp=1_002.0, reasoning="they want tests",
                tool_calls=(ToolCall("terminal", '{"cmd": "pytest"}', "call_1"),),
            ),
            Message("tool", "3 passed", timestamp=1_003.0, tool_name="terminal",
                    tool_call_id="call_1", token_count=3, platform_message_id="p-9"),
        ],
    )  # fmt: skip
    child = store.continue_after_compression(root.id)
    store.append_message(child.id, Message("user", "continued", timestamp=2_000.0))
    delegate = store.create_session(
        "cli", parent_session_id=child.id, parent_kind="delegate", started_at=2_001.0
    )
    store.append_message(delegate.id, Message("user", "subtask", timestamp=2_002.0))
    store.end_session(delegate.id, "done", ended_at=2_003.0)
    gateway = store.create_session("telegram", gateway=True, chat_id="-100", chat_type="group")
    store.set_pinned([gateway.id], True)
    old = store.create_session("cli", started_at=500.0, title="old notes")
    store.end_session(old.id, "user_exit", ended_at=600.0)
    store.set_archived([old.id], True)
    store.apply_automatic_title(gateway.id, "Telegram chat")
    store.routing.set_route(RouteRecord("agent:main:telegram:group:-100", gateway.id, "telegram",
                                        '{"chat": "-100"}', 10.0, 99.0))  # fmt: skip
    store.imports.update_file(ImportFileRecord("/logs/a.jsonl", "claude", 10, 5, "c-1", "f-1",
                                               old.id, "done", 100.0))  # fmt: skip
    store.write_state({state.LAST_AUTO_PRUNE: "123.5", state.LOCK: '{"held": "by a process"}'})
    made.update(root=root.id, child=child.id, delegate=delegate.id, gateway=gateway.id, old=old.id)
    return made


@pytest.fixture
def source(tmp_path: Path) -> SessionStore:
    store = SessionStore(tmp_path / "source" / "state.db")
    _fill(store)
    yield store  # type: ignore[misc]
    store.close()


@pytest.fixture
def target(backend_url: str) -> Store:
    store = open_url(backend_url, host=PluginHost())
    yield store  # type: ignore[misc]
    store.close()


def test_everything_is_copied_and_verified(source: SessionStore, target: Store) -> None:
    report = migrate_store(source, target, batch=2)
    assert (report.sessions, report.messages, report.copied, report.skipped) == (5, 5, 5, 0)
    assert (report.routes, report.import_files) == (1, 1)
    for session in source.select_sessions():
        assert target.get_session(session.id) == source.get_session(session.id)
        assert [dataclasses.replace(m, id=None) for m in target.messages(session.id)] == [
            dataclasses.replace(m, id=None) for m in source.messages(session.id)
        ]
        assert session_digest(target, session.id) == session_digest(source, session.id)
    assert target.routing.records() == source.routing.records()
    assert target.imports.load_files() == source.imports.load_files()
    assert target.read_state([state.LAST_AUTO_PRUNE, state.LOCK]) == {
        state.LAST_AUTO_PRUNE: "123.5"
    }
    assert target.resolve("my project") == source.resolve("my project")
    assert target.delegate_children(source.resolve("my project #2")) == source.delegate_children(
        source.resolve("my project #2")
    )
    [found] = target.select_sessions(SessionFilter(session_ids=(source.resolve("old notes"),)))
    assert found.archived and not found.pinned


def test_every_state_meta_key_travels_but_the_source_store_s_own(
    source: SessionStore, target: Store
) -> None:
    made = source.resolve("my project")
    source.write_state({
        "gateway.home:telegram": '{"chat_id": "-100"}', "a.plugin.key": "kept as is",
        state.LAST_VACUUM: "99.0", state.LAST_FAILURE: '{"at": 5, "error": "disk full"}',
    })  # fmt: skip
    source.queue_title("20990101_000000_abcdef", "Queued title")  # for a session to come
    # An import append that never finished: the mark names the last message kept (the first
    # of the session), by the source's own message number.
    first_id = source.messages(made)[0].id
    assert first_id is not None
    source.imports.mark_append("/logs/b.jsonl", made, first_id)
    source.imports.mark_append("/logs/c.jsonl", made, 0)
    migrate_store(source, target)
    copied = target.list_state()
    expected = {
        key: value
        for key, value in source.list_state().items()
        if key not in (state.LOCK, state.LAST_VACUUM) and not key.startswith("import_append:")
    }
    assert {key: copied[key] for key in expected if key in copied} == expected
    assert state.LOCK not in copied and state.LAST_VACUUM not in copied
    assert "Queued title" in copied.values() and copied["a.plugin.key"] == "kept as is"
    target_first = target.messages(made)[0].id
    assert target.imports.pending_appends() == {
        "/logs/b.jsonl": (made, target_first),
        "/logs/c.jsonl": (made, 0),
    }
    # Undone in the target, the unfinished append leaves exactly the first message.
    target.imports.undo_pending_append("/logs/b.jsonl", made, target_first)
    assert [m.content for m in target.messages(made)] == [source.messages(made)[0].content]


def test_an_interrupted_migration_resumes_where_it_stopped(
    source: SessionStore, target: Store
) -> None:
    class Stop(Exception):
        pass

    def stop_after_two(progress: object) -> None:
        if progress.done == 2:
            raise Stop

    with pytest.raises(Stop):
        migrate_store(source, target, on_progress=stop_after_two)
    assert target.count_sessions() == 2
    # Half of a third session, as a crash between two message batches leaves it.
    order = list(source.iter_parents_first(SessionFilter()))
    half = source.get_session(order[2])
    target.create_session(half.source, session_id=half.id, started_at=half.started_at)
    report = migrate_store(source, target)
    assert (report.skipped, report.redone, report.copied) == (2, 1, 3)
    assert target.count_sessions() == 5
    assert migrate_store(source, target).skipped == 5  # a third run has nothing left to do


def test_a_target_with_other_sessions_is_refused_and_left_alone(
    source: SessionStore, target: Store
) -> None:
    stranger = target.create_session("cli", title="not from the source")
    with pytest.raises(MigrationError, match="already holds 1 session"):
        migrate_store(source, target)
    assert [s.id for s in target.select_sessions()] == [stranger.id]


def _hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "HERMES_STORE_URL"}
    env["HERMES_HOME"] = str(home)
    return subprocess.run(
        [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


def test_the_command_moves_a_home_state_db_into_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        made = _fill(store)
    done = _hermes(home, "sessions", "migrate", "--to", postgres_url)
    assert done.returncode == 0, done.stderr
    assert "Migrated 5 sessions (5 messages, 1 routing rows, 1 import records)" in done.stdout
    assert "Verified: counts and every session's hash match." in done.stdout
    assert postgres_url.split(":")[2].split("@")[0] not in done.stdout  # the password
    (home / "config.yaml").write_text(f"store:\n  url: '{postgres_url}'\n", encoding="utf-8")
    listed = _hermes(home, "sessions", "show", "my project")
    assert listed.returncode == 0, listed.stderr
    assert made["child"] in listed.stdout
    again = _hermes(home, "sessions", "migrate", "--from", f"sqlite:///{home / 'state.db'}",
                    "--to", postgres_url)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "Resumed: 5 already copied, 0 copied again." in again.stdout


def test_migrating_a_store_into_itself_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        store.create_session("cli")
    done = _hermes(home, "sessions", "migrate", "--to", f"sqlite:///{home / 'state.db'}")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"hermes: --to and --from name the same store (sqlite:///{home / 'state.db'})"
    ]


def test_a_store_holding_a_hostile_legacy_id_is_refused_in_one_line_before_any_write(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    legacy_session_with_id(home, "../../escaped")
    target = tmp_path / "target" / "state.db"
    done = run_hermes_in(home, "sessions", "migrate", "--to", f"sqlite:///{target}")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "'../../escaped'" in done.stderr and "nothing was written" in done.stderr
    if target.exists():
        with SessionStore.open(target.parent) as written:
            assert written.count_sessions() == 0


def test_messages_waiting_in_the_gateway_inbox_are_migrated_without_their_claims(
    tmp_path: Path, backend_url: str
) -> None:
    """Acknowledged, not yet turned: the target's gateway answers them. Claims name gateways
    of the source store and stay behind; a second run copies nothing twice."""
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        session = store.create_session("telegram", gateway=True, chat_id="7", chat_type="dm")
        store.routing.set_route(RouteRecord("agent:main:telegram:dm:7", session.id, "telegram",
                                            '{"chat_id": "7"}', 10.0, None))  # fmt: skip
        claim = InboxClaim("gone.example/1/0ff", 99.0)
        first = store.routing.inbox_add("agent:main:telegram:dm:7", "telegram", "41",
                                        '{"text": "hello"}', now=50.0, claim=claim)  # fmt: skip
        store.routing.inbox_add("agent:main:telegram:dm:7", "telegram", None,
                                '{"text": "no id"}', now=51.0)  # fmt: skip
        rows = store.routing.inbox_pending()
    assert first.entry is not None and len(rows) == 2
    for _ in range(2):
        done = _hermes(home, "sessions", "migrate", "--to", backend_url)
        assert done.returncode == 0, done.stderr
    target = open_url(backend_url, host=PluginHost())
    try:
        copied = target.routing.inbox_pending()
        assert [(e.session_key, e.platform, e.message_id, e.event, e.received_at)
                for e in copied] == [
            (e.session_key, e.platform, e.message_id, e.event, e.received_at) for e in rows
        ]  # fmt: skip
        assert target.list_state(CLAIM_PREFIX) == {}
    finally:
        target.close()
