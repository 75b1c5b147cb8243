"""Compression continuations (SPEC S6), automatic compression over ``model.context_tokens``,
and branches — through the stand-in endpoint and a real store."""

from __future__ import annotations

from agent_helpers import engine_with
from hermes_hookspecs import Message, Session
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.agent import COMPRESSION_PROMPT, TurnEngine, TurnListener
from hermes_core.store import SessionStore


def chat(store: SessionStore, session_id: str, *pairs: tuple[str, str]) -> None:
    for question, answer in pairs:
        store.append_messages(session_id, [Message("user", question), Message("assistant", answer)])


def test_compress_continues_in_a_numbered_session_seeded_with_the_summary(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli", title="x")
    chat(store, session.id, ("Plan the trip to Lisbon", "Day 1: Alfama. Day 2: Belém."))
    standin.add(Reply(text="The user plans a Lisbon trip: Alfama, then Belém.", usage=(80, 14)))
    second = engine.compress(session.id)
    assert second.title == "x #2"
    assert (second.parent_session_id, second.parent_kind) == (session.id, "compression")
    parent = store.get_session(session.id)
    assert parent.end_reason == "compression" and parent.message_count == 2
    assert (parent.input_tokens, parent.output_tokens) == (80, 14)
    seeded = store.messages(second.id)
    assert [m.role for m in seeded] == ["system"]
    assert seeded[0].content.endswith("The user plans a Lisbon trip: Alfama, then Belém.")
    assert session.id in seeded[0].content
    summary_request = standin.requests[0]
    assert summary_request["messages"][0] == {"role": "system", "content": COMPRESSION_PROMPT}
    assert "Day 1: Alfama" in summary_request["messages"][1]["content"]
    assert "tools" not in summary_request
    # The continuation's turns send the summary after the system prompt.
    standin.add(Reply(text="Day 3: Sintra."))
    assert engine.run_turn(second.id, "And day 3?").text == "Day 3: Sintra."
    sent = standin.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[0]["content"].startswith("You are a test agent.\n\nSummary of the conversation")
    # A second compression gives #3; the lineage resolves to the newest.
    standin.add(Reply(text="Lisbon trip: Alfama, Belém, Sintra."))
    third = engine.compress(second.id)
    assert third.title == "x #3" and third.parent_session_id == second.id
    assert store.resolve("x") == third.id
    assert "Summary of the conversation" in standin.requests[2]["messages"][1]["content"]
    assert len(store.messages(session.id)) == 2 and len(store.messages(second.id)) == 3


def test_a_failed_summary_changes_nothing(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli", title="keep me")
    chat(store, session.id, ("hello", "hi"))
    standin.add(Reply.failure(400, message="context too long"))
    try:
        engine.compress(session.id)
    except Exception as error:
        assert "context too long" in str(error) and "\n" not in str(error)
    else:
        raise AssertionError("compress succeeded without a summary")
    assert store.get_session(session.id).is_active
    assert store.count_sessions() == 1


def test_a_history_over_the_context_budget_is_compressed_before_the_turn(
    store: SessionStore, standin: OpenAIStandIn
) -> None:
    engine = engine_with(store, standin, context_tokens=200)
    session = store.create_session("cli", title="long talk")
    chat(store, session.id, *[(f"question {n} " + "words " * 30, f"answer {n}") for n in range(4)])
    standin.add(Reply(text="They asked four long questions.", usage=(150, 8)))
    standin.add(Reply(text="Here is the fifth answer.", usage=(60, 6)))
    compressed: list[tuple[Session, Session]] = []

    class Watch(TurnListener):
        def on_compressed(self, old: Session, new: Session) -> None:
            compressed.append((old, new))

    result = engine.run_turn(session.id, "fifth question", listener=Watch())
    assert result.error is None and result.text == "Here is the fifth answer."
    assert result.session_id != session.id
    continuation = store.get_session(result.session_id)
    assert continuation.title == "long talk #2" and continuation.parent_session_id == session.id
    assert [(old.id, new.id) for old, new in compressed] == [(session.id, continuation.id)]
    assert [(m.role, m.content) for m in store.messages(continuation.id)][1:] == [
        ("user", "fifth question"), ("assistant", "Here is the fifth answer."),
    ]  # fmt: skip
    # The parent keeps everything, including the turn that triggered the compression.
    parent_messages = store.messages(session.id)
    assert len(parent_messages) == 9 and parent_messages[-1].content == "fifth question"
    summary_body, answer_body = standin.requests
    assert summary_body["messages"][0]["content"] == COMPRESSION_PROMPT
    assert "fifth question" not in summary_body["messages"][1]["content"]
    assert [m["role"] for m in answer_body["messages"]] == ["system", "user"]
    assert "They asked four long questions." in answer_body["messages"][0]["content"]
    assert store.get_session(continuation.id).output_tokens == 6


def test_a_history_within_the_budget_is_not_compressed(
    store: SessionStore, standin: OpenAIStandIn
) -> None:
    engine = engine_with(store, standin, context_tokens=10_000)
    session = store.create_session("cli")
    chat(store, session.id, ("hello", "hi"))
    standin.add(Reply(text="short"))
    assert engine.run_turn(session.id, "again").session_id == session.id
    assert len(standin.requests) == 1


def test_branch_copies_the_history_and_leaves_the_original(
    engine: TurnEngine, store: SessionStore
) -> None:
    original = store.create_session(
        "cli", title="main line", cwd="/work/project", model="standin-model",
        system_prompt="You are a test agent.",
    )  # fmt: skip
    chat(store, original.id, ("first", "one"), ("second", "two"))
    branch = engine.branch(original.id)
    assert (branch.parent_session_id, branch.parent_kind) == (original.id, "branch")
    assert (branch.source, branch.cwd, branch.model) == ("cli", "/work/project", "standin-model")
    assert branch.system_prompt == "You are a test agent."
    assert len(branch.id.rsplit("_", 1)[-1]) == 6
    copied = store.messages(branch.id)
    kept = store.messages(original.id)
    assert [(m.role, m.content, m.timestamp) for m in copied] == [
        (m.role, m.content, m.timestamp) for m in kept
    ]
    assert {m.id for m in copied}.isdisjoint({m.id for m in kept})
    after = store.get_session(original.id)
    assert after.is_active and after.message_count == 4 and after.title == "main line"
