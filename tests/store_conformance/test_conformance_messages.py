"""Messages: append, read back in order, counters, edits, previews."""

from __future__ import annotations

import time

import pytest
from hermes_hookspecs import Message, ToolCall

from hermes_core.store.errors import SessionNotFound
from hermes_core.store.protocol import Store


def test_messages_come_back_in_order_with_every_field(store: Store) -> None:
    session = store.create_session("cli", started_at=1.0)
    first = store.append_message(session.id, Message("user", "run the tests", timestamp=10.0))
    ids = store.append_messages(
        session.id,
        [
            Message(
                "assistant",
                "",
                timestamp=11.0,
                tool_calls=(ToolCall("terminal", '{"cmd": "pytest"}', "call_1"),),
                reasoning="the user wants tests run",
            ),
            Message(
                "tool", "3 passed", timestamp=12.0, tool_name="terminal", tool_call_id="call_1"
            ),
            Message("assistant", "All 3 pass.", timestamp=13.0, token_count=4),
        ],
    )
    assert len(ids) == 3 and ids[0] > first
    stored = store.messages(session.id)
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert [m.id for m in stored] == [first, *ids]
    assert stored[1].tool_calls == (ToolCall("terminal", '{"cmd": "pytest"}', "call_1"),)
    assert stored[1].reasoning == "the user wants tests run"
    assert (stored[2].tool_name, stored[2].tool_call_id) == ("terminal", "call_1")
    assert stored[3].token_count == 4
    assert list(store.iter_messages(session.id, batch=2)) == stored
    again = store.get_session(session.id)
    assert again.message_count == 4 == store.message_count(session.id)
    assert again.tool_call_count == 1
    assert again.last_active_at == 13.0


def test_appending_to_an_unknown_session_writes_nothing(store: Store) -> None:
    with pytest.raises(SessionNotFound):
        store.append_messages("20260101_000000_000000", [Message("user", "lost")])
    assert store.append_messages("20260101_000000_000000", []) == range(0)
    assert store.message_count("20260101_000000_000000") == 0


def test_an_edited_message_is_found_by_its_new_text_only(store: Store) -> None:
    from hermes_core.search import session_search

    session = store.create_session("cli")
    message_id = store.append_message(session.id, Message("user", "the aardvark escaped"))
    store.update_message_content(message_id, "the pangolin escaped")
    assert store.messages(session.id)[0].content == "the pangolin escaped"
    assert session_search(store, query="aardvark")["count"] == 0
    assert session_search(store, query="pangolin")["count"] == 1
    with pytest.raises(KeyError):
        store.update_message_content(10**9, "nothing")


def test_previews_are_the_start_of_the_first_user_message(store: Store) -> None:
    talk = store.create_session("cli")
    store.append_messages(
        talk.id,
        [Message("assistant", "hello"), Message("user", "please   fix\nthe build " + "x" * 300)],
    )
    silent = store.create_session("cli")
    previews = store.previews([talk.id, silent.id], length=20)
    assert previews == {talk.id: "please fix the bui", silent.id: ""}
    wide = store.create_session("cli")
    store.append_message(wide.id, Message("user", "😀é" * 50))
    assert store.previews([wide.id], length=7) == {wide.id: "😀é😀é😀é😀"}


def test_the_end_of_a_session_reads_newest_first_and_counts_by_role(store: Store) -> None:
    session = store.create_session("cli")
    store.append_messages(
        session.id,
        [
            Message("system", "s"),
            Message("user", "u1"),
            Message("assistant", "a1"),
            Message("tool", "t1", tool_call_id="c1", tool_name="terminal"),
            Message("user", "u2"),
            Message("assistant", "a2"),
        ],
    )
    newest = store.iter_messages_newest_first(session.id, roles=("user", "assistant"))
    assert [m.content for m in newest] == ["a2", "u2", "a1", "u1"]
    assert [m.content for m in store.iter_messages_newest_first(session.id)][:2] == ["a2", "u2"]
    assert store.count_messages(session.id) == 6
    assert store.count_messages(session.id, roles=("user",)) == 2
    assert store.count_messages("20990101_000000_ffffff") == 0


def test_appending_an_answer_adds_its_model_call_tokens(store: Store) -> None:
    session = store.create_session("cli")
    store.append_message(session.id, Message(role="user", content="q", timestamp=1.0))
    store.append_message(
        session.id,
        Message(role="assistant", content="a", timestamp=2.0),
        input_tokens=30,
        output_tokens=7,
    )
    store.append_messages(
        session.id, [Message(role="assistant", content="b", timestamp=3.0)], output_tokens=5
    )
    found = store.get_session(session.id)
    assert (found.input_tokens, found.output_tokens, found.message_count) == (30, 12, 3)


def test_activity_never_moves_back_an_undated_message_is_stamped_now_and_sessions_stay_apart(
    store: Store,
) -> None:
    late = store.create_session("cli", started_at=5_000.0)
    store.append_message(late.id, Message("user", "old", timestamp=1_000.0))
    assert store.get_session(late.id).last_active_at == 5_000.0
    other = store.create_session("cli", started_at=1_000.0)
    before = time.time()
    [stamped] = store.append_messages(other.id, [Message("user", "now")])
    last = store.get_session(other.id).last_active_at
    assert last is not None and before <= last <= time.time()
    assert store.messages(other.id)[0].timestamp == last
    assert [m.id for m in store.messages(other.id)] == [stamped]
    assert [m.content for m in store.messages(late.id)] == ["old"]
    assert store.append_messages(other.id, []) == range(0)
    assert store.get_session(other.id).message_count == 1


def test_every_word_of_a_long_tool_output_is_found_with_its_snippet(store: Store) -> None:
    from hermes_core.search import MATCH_END, MATCH_START, session_search

    filler = "build step ok " * 18_000  # ≈ 250 kB on each side of the middle word
    output = (
        "openingword beside the start "
        + filler
        + " centreword beside the middle "
        + filler
        + " beside the end closingword"
    )
    assert len(output) > 500_000
    tool = store.create_session("cli")
    store.append_message(tool.id, Message("user", "run the build"))
    store.append_message(
        tool.id, Message("tool", output, tool_name="terminal", tool_call_id="c1")
    )
    for word, where in (
        ("openingword", "the start"),
        ("centreword", "the middle"),
        ("closingword", "the end"),
    ):
        found = session_search(store, query=word, role_filter="tool")
        [result] = found["results"]
        assert result["session_id"] == tool.id
        snippet = str(result["snippet"])
        assert f"{MATCH_START}{word}{MATCH_END}" in snippet
        assert where in snippet, snippet  # the snippet is cut from around the word
    assert session_search(store, query="centreword")["results"] == []  # tool output: asked for
    assert store.messages(tool.id)[1].content == output
    assert store.stats().indexed_in_part == 0


def test_an_edited_cjk_message_is_found_by_its_new_text_only(store: Store) -> None:
    from hermes_core.search import session_search

    session = store.create_session("cli")
    [message_id] = store.append_messages(session.id, [Message("user", "量子纠缠的实验")])
    assert session_search(store, query="纠缠的")["count"] == 1
    store.update_message_content(message_id, "no more chinese")
    assert session_search(store, query="纠缠的")["count"] == 0
    store.update_message_content(message_id, "东京的天气")
    assert session_search(store, query="京的天")["count"] == 1
    assert session_search(store, query="纠缠")["count"] == 0


LONE_SURROGATES = ["high \ud800 alone", "low \udc00 alone", "reversed \udc00\ud800 pair"]


def test_text_with_lone_surrogates_is_stored_repaired_never_refused(store: Store) -> None:
    """UTF-8 cannot hold a lone surrogate: the store replaces each with U+FFFD and keeps the
    rest (hermes_core.store.unicode_repair), in messages, tool calls and session fields."""
    session = store.create_session("cli", started_at=1.0, cwd="/work/\udcff", model="m\ud800")
    store.append_messages(
        session.id,
        [Message("user", text, timestamp=2.0 + n) for n, text in enumerate(LONE_SURROGATES)]
        + [
            Message(
                "assistant",
                "split pair \ud83d\ude00 joined",
                timestamp=9.0,
                reasoning="why \ud800",
                tool_calls=(ToolCall("terminal", '{"q": "\udc00"}', "c\ud800"),),
            )
        ],
    )
    stored = store.messages(session.id)
    assert [m.content for m in stored] == [
        "high \ufffd alone",
        "low \ufffd alone",
        "reversed \ufffd\ufffd pair",
        "split pair \U0001f600 joined",
    ]
    assert stored[3].reasoning == "why \ufffd"
    assert stored[3].tool_calls == (ToolCall("terminal", '{"q": "\ufffd"}', "c\ufffd"),)
    again = store.get_session(session.id)
    assert (again.cwd, again.model) == ("/work/\ufffd", "m\ufffd")
