"""Session and message life cycle in the store (SPEC S1–S3, S7)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_hookspecs import Message
from store_helpers import (
    RecordingEvents,
    assistant,
    count,
    fts_ids,
    message_counts,
    tool_call,
    user,
)

from hermes_core.store import SessionNotFound, SessionStore, fulltext
from hermes_core.store import session_writes as session_writes_module
from hermes_core.store.ids import new_session_id

CLI_ID = re.compile(r"^\d{8}_\d{6}_[0-9a-f]{6}$")
GATEWAY_ID = re.compile(r"^\d{8}_\d{6}_[0-9a-f]{8}$")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.open(tmp_path) as opened:
        yield opened


def assert_index_in_step(store: SessionStore) -> None:
    assert fulltext.check(store.connection) is None


# ------------------------------------------------------------------ ids (S3)


def test_cli_session_id_is_timestamp_and_six_hex_digits(store: SessionStore) -> None:
    moment = time.mktime((2025, 3, 4, 5, 6, 7, 0, 0, -1))
    session = store.create_session("cli", started_at=moment)
    assert CLI_ID.match(session.id), session.id
    assert session.id.startswith("20250304_050607_")


def test_gateway_session_id_has_eight_hex_digits(store: SessionStore) -> None:
    session = store.create_session("telegram", gateway=True)
    assert GATEWAY_ID.match(session.id), session.id
    assert new_session_id(gateway=True).count("_") == 2
    assert GATEWAY_ID.match(new_session_id(gateway=True))
    assert CLI_ID.match(new_session_id())


def test_many_sessions_started_in_the_same_second_get_distinct_ids(store: SessionStore) -> None:
    moment = time.time()
    ids = [store.create_session("cli", started_at=moment).id for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert all(CLI_ID.match(session_id) for session_id in ids)
    assert count(store.connection, "SELECT count(*) FROM sessions") == 2000


def test_generated_id_that_collides_is_replaced_not_refused(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = store.create_session("cli")
    answers = iter([first.id, first.id, "20250101_000000_abcdef"])
    monkeypatch.setattr(session_writes_module, "new_session_id", lambda **_: next(answers))
    second = store.create_session("cli")
    assert second.id == "20250101_000000_abcdef"


def test_explicit_duplicate_session_id_is_refused(store: SessionStore) -> None:
    first = store.create_session("cli")
    with pytest.raises(ValueError, match="already exists"):
        store.create_session("cli", session_id=first.id)


# ------------------------------------------------------------------ create / get


def test_create_and_get_round_trip_every_field(store: SessionStore) -> None:
    parent = store.create_session("cli")
    created = store.create_session(
        "telegram",
        session_id="20250101_120000_0a1b2c3d",
        title="Round trip",
        started_at=1_735_732_800.5,
        system_prompt="You are helpful.",
        model_config={"temperature": 0.2, "max_tokens": 4096, "nested": {"a": [1, 2]}},
        metadata={"origin": "test", "n": 3},
        parent_session_id=parent.id,
        parent_kind="branch",
        user_id="u-42",
        model="claude-x",
        cwd="/home/me/project",
        git_branch="main",
        git_repo_root="/home/me/project",
        chat_id="chat-1",
        chat_type="group",
        thread_id="thread-9",
        session_key="agent:main:telegram:group:chat-1",
        billing_provider="anthropic",
        cost_actual_usd=0.5,
        cost_estimated_usd=0.4,
        input_tokens=10,
        output_tokens=20,
    )
    got = store.get_session(created.id)
    assert got == created
    assert got.id == "20250101_120000_0a1b2c3d"
    assert got.source == "telegram"
    assert got.title == "Round trip"
    assert got.title_source == "user"
    assert got.started_at == 1_735_732_800.5
    assert got.last_active_at == 1_735_732_800.5
    assert got.system_prompt == "You are helpful."
    assert got.model_config == {"temperature": 0.2, "max_tokens": 4096, "nested": {"a": [1, 2]}}
    assert got.metadata == {"origin": "test", "n": 3}
    assert (got.parent_session_id, got.parent_kind) == (parent.id, "branch")
    assert got.user_id == "u-42"
    assert got.model == "claude-x"
    assert (got.cwd, got.git_branch, got.git_repo_root) == (
        "/home/me/project",
        "main",
        "/home/me/project",
    )
    assert got.workspace == "/home/me/project"
    assert (got.chat_id, got.chat_type, got.thread_id) == ("chat-1", "group", "thread-9")
    assert got.session_key == "agent:main:telegram:group:chat-1"
    assert got.billing_provider == "anthropic"
    assert (got.cost_actual_usd, got.cost_estimated_usd, got.cost_usd) == (0.5, 0.4, 0.5)
    assert (got.input_tokens, got.output_tokens) == (10, 20)
    assert (got.message_count, got.tool_call_count) == (0, 0)
    assert (got.pinned, got.archived) == (False, False)
    assert got.ended_at is None and got.end_reason is None and got.is_active


def test_minimal_session_has_empty_defaults(store: SessionStore) -> None:
    session = store.create_session()
    assert session.source == "cli"
    assert session.title is None and session.title_source is None
    assert session.model_config is None
    assert session.system_prompt is None
    assert session.metadata == {}
    assert session.parent_session_id is None and session.parent_kind is None


def test_unknown_session_field_is_refused(store: SessionStore) -> None:
    with pytest.raises(TypeError, match="colour"):
        store.create_session("cli", colour="blue")


def test_parent_id_without_kind_is_refused(store: SessionStore) -> None:
    parent = store.create_session()
    with pytest.raises(ValueError):
        store.create_session(parent_session_id=parent.id)


def test_unknown_parent_is_session_not_found(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.create_session(parent_session_id="20990101_000000_ffffff", parent_kind="branch")
    assert count(store.connection, "SELECT count(*) FROM sessions") == 0


def test_get_unknown_session_is_session_not_found(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.get_session("20990101_000000_ffffff")


def test_session_started_event_is_sent_on_create(tmp_path: Path) -> None:
    events = RecordingEvents()
    with SessionStore.open(tmp_path, events=events) as store:
        session = store.create_session()
        store.end_session(session.id, "user_exit")
        store.end_session(session.id, "timeout")
    assert events.started == [session.id]
    assert events.ended == [(session.id, "user_exit")]


# ------------------------------------------------------------------ system prompts


def test_same_system_prompt_is_stored_once_and_removed_with_its_last_session(
    store: SessionStore,
) -> None:
    prompt = "You are Hermes. " * 50
    first = store.create_session(system_prompt=prompt)
    second = store.create_session(system_prompt=prompt)
    other = store.create_session(system_prompt="Something else")
    assert count(store.connection, "SELECT count(*) FROM system_prompts") == 2
    assert store.get_session(second.id).system_prompt == prompt

    store.delete_session(first.id)
    assert count(store.connection, "SELECT count(*) FROM system_prompts") == 2
    assert store.get_session(second.id).system_prompt == prompt

    store.delete_session(second.id)
    assert count(store.connection, "SELECT count(*) FROM system_prompts") == 1
    assert store.get_session(other.id).system_prompt == "Something else"


# ------------------------------------------------------------------ ending


def test_end_session_records_reason_and_time(store: SessionStore) -> None:
    session = store.create_session()
    ended = store.end_session(session.id, "user_exit", ended_at=1_800_000_000.0)
    assert ended.end_reason == "user_exit"
    assert ended.ended_at == 1_800_000_000.0
    assert not ended.is_active
    assert store.get_session(session.id).end_reason == "user_exit"


def test_ending_twice_keeps_the_first_end(store: SessionStore) -> None:
    session = store.create_session()
    store.end_session(session.id, "user_exit", ended_at=1_800_000_000.0)
    again = store.end_session(session.id, "timeout", ended_at=1_900_000_000.0)
    assert (again.end_reason, again.ended_at) == ("user_exit", 1_800_000_000.0)


def test_end_without_time_uses_now(store: SessionStore) -> None:
    session = store.create_session()
    before = time.time()
    ended = store.end_session(session.id, "done")
    assert ended.ended_at is not None and before <= ended.ended_at <= time.time()


def test_ending_unknown_session_is_session_not_found(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.end_session("20990101_000000_ffffff", "done")


def test_reopened_session_can_end_again(store: SessionStore) -> None:
    session = store.create_session()
    store.end_session(session.id, "user_exit")
    store.reopen_session(session.id)
    assert store.get_session(session.id).is_active
    assert store.end_session(session.id, "timeout").end_reason == "timeout"


# ------------------------------------------------------------------ messages


def test_append_one_message_returns_its_id_and_moves_counters(store: SessionStore) -> None:
    session = store.create_session(started_at=1_000.0)
    message_id = store.append_message(session.id, user("hello there", timestamp=2_000.0))
    assert isinstance(message_id, int)
    got = store.get_session(session.id)
    assert (got.message_count, got.tool_call_count) == (1, 0)
    assert got.last_active_at == 2_000.0
    [message] = store.messages(session.id)
    assert (message.id, message.session_id, message.role, message.content) == (
        message_id,
        session.id,
        "user",
        "hello there",
    )
    assert message.timestamp == 2_000.0
    assert_index_in_step(store)


def test_append_many_messages_gives_consecutive_ids_in_order(store: SessionStore) -> None:
    session = store.create_session(started_at=1_000.0)
    store.append_message(session.id, user("first", timestamp=2_000.0))
    batch = [
        user("question", timestamp=3_000.0),
        assistant(
            "let me look",
            tool_calls=(tool_call("terminal", "c1"), tool_call("grep", "c2")),
            timestamp=3_001.0,
            reasoning="thinking",
            token_count=12,
        ),
        Message(
            role="tool",
            content="file.txt",
            tool_call_id="c1",
            tool_name="terminal",
            timestamp=3_002.0,
        ),
        Message(
            role="tool", content="match", tool_call_id="c2", tool_name="grep", timestamp=3_003.0
        ),
        assistant("done", timestamp=3_004.0, platform_message_id="tg-77"),
    ]
    ids = store.append_messages(session.id, batch)
    assert list(ids) == list(range(ids[0], ids[0] + 5))
    stored = store.messages(session.id)
    assert [m.content for m in stored] == [
        "first",
        "question",
        "let me look",
        "file.txt",
        "match",
        "done",
    ]
    assert [m.id for m in stored[1:]] == list(ids)
    call = stored[2]
    assert [c.name for c in call.tool_calls] == ["terminal", "grep"]
    assert call.tool_calls[0] == tool_call("terminal", "c1")
    assert (call.reasoning, call.token_count) == ("thinking", 12)
    assert (stored[3].tool_call_id, stored[3].tool_name) == ("c1", "terminal")
    assert stored[5].platform_message_id == "tg-77"
    got = store.get_session(session.id)
    assert (got.message_count, got.tool_call_count) == (6, 2)
    assert got.last_active_at == 3_004.0
    assert_index_in_step(store)


def test_last_active_never_moves_back_for_older_messages(store: SessionStore) -> None:
    session = store.create_session(started_at=5_000.0)
    store.append_message(session.id, user("old", timestamp=1_000.0))
    assert store.get_session(session.id).last_active_at == 5_000.0


def test_append_without_timestamp_uses_now(store: SessionStore) -> None:
    session = store.create_session(started_at=1_000.0)
    before = time.time()
    store.append_message(session.id, user("now"))
    last = store.get_session(session.id).last_active_at
    assert last is not None and before <= last <= time.time()


def test_append_nothing_changes_nothing(store: SessionStore) -> None:
    session = store.create_session()
    assert list(store.append_messages(session.id, [])) == []
    assert store.get_session(session.id).message_count == 0


def test_append_to_unknown_session_writes_nothing(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.append_messages("20990101_000000_ffffff", [user("lost")])
    assert count(store.connection, "SELECT count(*) FROM messages") == 0
    assert fts_ids(store.connection, "lost") == []


def test_messages_of_two_sessions_stay_apart(store: SessionStore) -> None:
    a, b = store.create_session(), store.create_session()
    store.append_messages(a.id, [user("a1"), user("a2")])
    store.append_messages(b.id, [user("b1")])
    store.append_messages(a.id, [user("a3")])
    assert [m.content for m in store.messages(a.id)] == ["a1", "a2", "a3"]
    assert [m.content for m in store.messages(b.id)] == ["b1"]
    assert {k: v for k, v in message_counts(store.connection).items()} == {
        a.id: (3, 3),
        b.id: (1, 1),
    }


def test_previews_hold_the_text_past_a_nul_and_whole_characters(store: SessionStore) -> None:
    """SQLite's substr() on text stops at a NUL character: every preview (listings, the
    picker, the agent's recent-sessions view) reads bytes and keeps the text whole."""
    from hermes_core.selection.filters import SessionFilter

    text = "before\x00after \x1b]0;x\x07 " + "😀" * 10 + "é" * 300
    session = store.create_session("cli", title="nul preview")
    store.append_message(session.id, user(text))
    assert store.previews([session.id]) == {session.id: " ".join(text[:200].split())}
    assert store.previews([session.id], length=25)[session.id] == text[:25]
    index = store.search_index
    assert index.listed_recent(10, 30)[0][-1] == text[:30]
    assert index.listed_title_matches(["nul"], 10, 30)[0][-1] == text[:30]
    assert index.recent_sessions(SessionFilter(), 10, 30)[0][-1] == text[:30]


def test_appended_messages_are_searchable(store: SessionStore) -> None:
    session = store.create_session()
    ids = store.append_messages(session.id, [user("the zebrafish genome"), assistant("okay")])
    assert fts_ids(store.connection, "zebrafish") == [ids[0]]


def test_every_message_is_indexed_up_to_the_cap(store: SessionStore) -> None:
    session = store.create_session()
    head = "x " * (fulltext.INDEXED_CHARS // 2)
    long_log = head + " pastcapword"
    tool_id = store.append_message(
        session.id,
        Message(role="tool", content="x " * 100_000 + " deepword " + long_log, tool_name="t"),
    )
    user_id = store.append_message(session.id, user(long_log))
    assert fts_ids(store.connection, "deepword") == [tool_id]
    assert fts_ids(store.connection, "pastcapword") == []
    assert store.messages(session.id)[1].content.endswith("pastcapword")
    assert store.stats().indexed_in_part == 2
    assert tool_id < user_id
    assert_index_in_step(store)


def test_update_message_content_keeps_the_index_in_step(store: SessionStore) -> None:
    session = store.create_session()
    ids = store.append_messages(session.id, [user("the aardvark sleeps"), assistant("noted")])
    assert fts_ids(store.connection, "aardvark") == [ids[0]]
    store.update_message_content(ids[0], "the pangolin sleeps")
    assert fts_ids(store.connection, "aardvark") == []
    assert fts_ids(store.connection, "pangolin") == [ids[0]]
    assert store.messages(session.id)[0].content == "the pangolin sleeps"
    assert_index_in_step(store)


def test_update_message_content_keeps_the_cjk_index_in_step(store: SessionStore) -> None:
    session = store.create_session()
    [message_id] = store.append_messages(session.id, [user("量子纠缠的实验")])
    assert _cjk(store, "纠缠的") == [message_id]
    store.update_message_content(message_id, "no more chinese")
    assert _cjk(store, "纠缠的") == []
    store.update_message_content(message_id, "东京的天气")
    assert _cjk(store, "京的天") == [message_id]
    assert_index_in_step(store)


def test_updating_a_missing_message_is_an_error(store: SessionStore) -> None:
    with pytest.raises(KeyError):
        store.update_message_content(424242, "nothing")


def _cjk(store: SessionStore, phrase: str) -> list[int]:
    rows = store.connection.execute(
        "SELECT rowid FROM messages_cjk WHERE messages_cjk MATCH ?", (f'"{phrase}"',)
    )
    return [row[0] for row in rows]


# ------------------------------------------------------------------ usage and flags


def test_record_usage_adds_tokens_and_cost(store: SessionStore) -> None:
    session = store.create_session()
    store.record_usage(session.id, input_tokens=100, output_tokens=20, cost_estimated_usd=0.01)
    store.record_usage(
        session.id,
        input_tokens=50,
        output_tokens=5,
        cost_estimated_usd=0.02,
        billing_provider="openrouter",
    )
    got = store.get_session(session.id)
    assert (got.input_tokens, got.output_tokens) == (150, 25)
    assert got.cost_estimated_usd == pytest.approx(0.03)
    assert got.cost_actual_usd is None
    assert got.cost_usd == pytest.approx(0.03)
    assert got.billing_provider == "openrouter"

    store.record_usage(session.id, cost_actual_usd=0.05)
    got = store.get_session(session.id)
    assert got.cost_actual_usd == pytest.approx(0.05)
    assert got.cost_usd == pytest.approx(0.05)
    assert got.billing_provider == "openrouter"
    assert (got.input_tokens, got.output_tokens) == (150, 25)


def test_an_answer_and_its_usage_are_stored_in_one_append(store: SessionStore) -> None:
    session = store.create_session("cli")
    store.append_message(session.id, Message("user", "hi"))
    store.append_message(
        session.id, Message("assistant", "hello"), input_tokens=30, output_tokens=4
    )
    store.append_messages(
        session.id, [Message("user", "more"), Message("assistant", "ok")], output_tokens=2
    )
    stored = store.get_session(session.id)
    assert (stored.input_tokens, stored.output_tokens, stored.message_count) == (30, 6, 4)


def test_record_usage_of_unknown_session_is_session_not_found(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.record_usage("20990101_000000_ffffff", input_tokens=1)


def test_pin_and_unpin(store: SessionStore) -> None:
    a, b = store.create_session(), store.create_session()
    assert store.set_pinned([a.id, b.id], True) == 2
    assert store.set_pinned([a.id], True) == 0
    assert store.get_session(a.id).pinned and store.get_session(b.id).pinned
    assert store.set_pinned([a.id], False) == 1
    assert not store.get_session(a.id).pinned and store.get_session(b.id).pinned
    assert not store.get_session(a.id).archived


def test_archive_and_unarchive(store: SessionStore) -> None:
    a = store.create_session()
    assert store.set_archived([a.id], True) == 1
    assert store.get_session(a.id).archived
    assert not store.get_session(a.id).pinned
    assert store.set_archived([a.id], False) == 1
    assert not store.get_session(a.id).archived


# ------------------------------------------------------------------ deleting


def test_delete_removes_messages_and_index_rows(store: SessionStore) -> None:
    doomed, kept = store.create_session(), store.create_session()
    store.append_messages(doomed.id, [user("platypus 鸭嘴兽类动物"), assistant("platypus")])
    store.append_messages(kept.id, [user("platypus too")])
    assert len(fts_ids(store.connection, "platypus")) == 3
    assert store.delete_session(doomed.id) == [doomed.id]
    with pytest.raises(SessionNotFound):
        store.get_session(doomed.id)
    assert (
        count(store.connection, "SELECT count(*) FROM messages WHERE session_id = ?", [doomed.id])
        == 0
    )
    assert fts_ids(store.connection, "platypus") == [store.messages(kept.id)[0].id]
    assert count(store.connection, "SELECT count(*) FROM messages_cjk") == 0
    assert_index_in_step(store)


def test_delete_keeps_non_delegate_children_without_parent(store: SessionStore) -> None:
    parent = store.create_session(title="parent")
    branch = store.create_session(parent_session_id=parent.id, parent_kind="branch")
    continuation = store.continue_after_compression(parent.id)
    store.append_message(branch.id, user("branch message"))
    store.delete_session(parent.id)
    for child in (branch, continuation):
        assert store.get_session(child.id).parent_session_id is None
    assert [m.content for m in store.messages(branch.id)] == ["branch message"]
    assert_index_in_step(store)


def test_delete_takes_delegates_and_their_delegates_along(store: SessionStore) -> None:
    parent = store.create_session()
    delegate = store.create_session(parent_session_id=parent.id, parent_kind="delegate")
    grandchild = store.create_session(parent_session_id=delegate.id, parent_kind="delegate")
    branch_of_delegate = store.create_session(parent_session_id=delegate.id, parent_kind="branch")
    unrelated = store.create_session()
    for session in (parent, delegate, grandchild, branch_of_delegate):
        store.append_message(session.id, user(f"wombat in {session.id}"))
    deleted = store.delete_session(parent.id)
    assert set(deleted) == {parent.id, delegate.id, grandchild.id}
    remaining = {row[0] for row in store.connection.execute("SELECT id FROM sessions")}
    assert remaining == {branch_of_delegate.id, unrelated.id}
    assert store.get_session(branch_of_delegate.id).parent_session_id is None
    assert len(fts_ids(store.connection, "wombat")) == 1
    assert_index_in_step(store)


def test_delete_unknown_session_is_session_not_found(store: SessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.delete_session("20990101_000000_ffffff")


def test_delete_sessions_in_batches(store: SessionStore) -> None:
    sessions = [store.create_session() for _ in range(23)]
    for session in sessions:
        store.append_messages(session.id, [user("capybara"), assistant("capybara reply")])
    doomed = [s.id for s in sessions[:17]]
    delegate = store.create_session(parent_session_id=doomed[3], parent_kind="delegate")
    store.append_message(delegate.id, user("capybara delegate"))
    assert store.delete_sessions(doomed, batch_size=5) == 18
    remaining = {row[0] for row in store.connection.execute("SELECT id FROM sessions")}
    assert remaining == {s.id for s in sessions[17:]}
    assert len(fts_ids(store.connection, "capybara")) == 12
    assert count(store.connection, "SELECT count(*) FROM messages") == 12
    assert_index_in_step(store)


def test_delete_sessions_tolerates_duplicates_and_unknown_ids(store: SessionStore) -> None:
    a = store.create_session()
    assert store.delete_sessions([a.id, a.id, "20990101_000000_ffffff"]) == 1
    assert count(store.connection, "SELECT count(*) FROM sessions") == 0


def test_index_stays_in_step_through_a_whole_life_cycle(store: SessionStore) -> None:
    a = store.create_session(title="life")
    assert_index_in_step(store)
    ids = store.append_messages(a.id, [user("alpha 中文字符"), assistant("beta")])
    assert_index_in_step(store)
    store.update_message_content(ids[1], "gamma")
    assert_index_in_step(store)
    b = store.continue_after_compression(a.id)
    store.append_message(b.id, Message(role="tool", content="delta " * 2000, tool_name="t"))
    assert_index_in_step(store)
    store.delete_session(a.id)
    assert_index_in_step(store)
    store.delete_sessions([b.id])
    assert_index_in_step(store)
    assert count(store.connection, "SELECT count(*) FROM messages") == 0


def test_orphaned_children_lose_their_parent_kind_too(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        parent = store.create_session(title="parent")
        child = store.continue_after_compression(parent.id)
        store.delete_session(parent.id)
        orphan = store.get_session(child.id)
        assert orphan.parent_session_id is None and orphan.parent_kind is None


def test_cjk_words_are_found_by_substring_of_any_length(tmp_path: Path) -> None:
    from hermes_core.store.fulltext import find_cjk

    with SessionStore.open(tmp_path) as store:
        session = store.create_session()
        ids = store.append_messages(
            session.id,
            [
                Message("user", "我们讨论了量子纠缠的实验 and more"),
                Message("assistant", "日本語のテキストです"),
                Message("tool", "x" * 5000 + " 深いところの量子纠缠 ", tool_name="terminal"),
            ],
        )
        found = find_cjk(store.connection, "量子纠缠")
        assert sorted(found) == [ids[0], ids[2]]  # tool output past the word index's head too
        assert sorted(find_cjk(store.connection, "纠缠")) == [ids[0], ids[2]]
        assert find_cjk(store.connection, "テキ") == [ids[1]]
        assert find_cjk(store.connection, "无关") == []
        assert find_cjk(store.connection, '"') == []


def test_the_store_writes_with_the_automatic_checkpoint_off(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        assert store.connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0


def _segments(store: SessionStore) -> int:
    """How many segments the word index has (its ``_idx`` table has rows for each)."""
    row = store.connection.execute("SELECT count(DISTINCT segid) FROM messages_fts_idx").fetchone()
    return int(row[0])


def test_the_word_index_is_merged_in_the_pauses_between_writes_not_by_the_writer(
    tmp_path: Path,
) -> None:
    with SessionStore.open(tmp_path) as store:
        automerge = store.connection.execute(
            "SELECT v FROM messages_fts_config WHERE k = 'automerge'"
        ).fetchone()
        assert automerge == (0,)
        session = store.create_session()
        for number in range(12):  # each append its own transaction: one new segment each
            store.append_message(session.id, user(f"entry {number} of the log"))
        assert _segments(store) >= 12  # no write merged them (fewer than FTS5's crisis 16)
        deadline = time.monotonic() + 60
        while _segments(store) >= 4 and time.monotonic() < deadline:
            time.sleep(0.1)  # the store is idle: its maintenance thread merges meanwhile
        assert _segments(store) < 4
        assert fts_ids(store.connection, "entry") == [m.id for m in store.messages(session.id)]
        assert_index_in_step(store)
