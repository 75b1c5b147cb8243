"""The turn engine against the stand-in endpoint over real HTTP, with the real openai SDK and
a real store: what is stored, when, and what the model is sent."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from agent_helpers import engine_with
from hermes_hookspecs import Message, TokenUsage, ToolCall
from standins.openai_server import OpenAIStandIn, Reply, ScriptedToolCall

from hermes_core.agent import INTERRUPTED_MARK, MAX_TOOL_ROUNDS, TurnEngine, TurnListener
from hermes_core.store import SessionStore


class Recorder(TurnListener):
    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.results: list[tuple[ToolCall, str]] = []
        self.usage: list[TokenUsage] = []

    def on_text(self, delta: str) -> None:
        self.text.append(delta)

    def on_tool_call(self, call: ToolCall) -> None:
        self.calls.append(call)

    def on_tool_result(self, call: ToolCall, output: str) -> None:
        self.results.append((call, output))

    def on_usage(self, usage: TokenUsage) -> None:
        self.usage.append(usage)


def roles(messages: list[Message]) -> list[str]:
    return [m.role for m in messages]


def sent_roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


def test_two_turns_are_stored_with_their_usage(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli")
    standin.add(Reply(text="Hello! How can I help?", usage=(20, 7)))
    standin.add(Reply(text="Paris is the capital of France.", usage=(41, 9)))
    listener = Recorder()
    first = engine.run_turn(session.id, "hi", listener=listener)
    second = engine.run_turn(session.id, "What is the capital of France?")
    assert (first.text, first.error, first.usage) == (
        "Hello! How can I help?",
        None,
        TokenUsage(20, 7),
    )
    assert "".join(listener.text) == first.text and listener.usage == [TokenUsage(20, 7)]
    assert second.text == "Paris is the capital of France." and second.session_id == session.id
    messages = store.messages(session.id)
    assert roles(messages) == ["user", "assistant", "user", "assistant"]
    assert [m.content for m in messages] == [
        "hi", "Hello! How can I help?", "What is the capital of France?",
        "Paris is the capital of France.",
    ]  # fmt: skip
    assert [m.token_count for m in messages if m.role == "assistant"] == [7, 9]
    stored = store.get_session(session.id)
    assert (stored.input_tokens, stored.output_tokens) == (61, 16)
    # The second call is built from the stored history, after the system prompt.
    body = standin.requests[1]
    assert sent_roles(body) == ["system", "user", "assistant", "user"]
    assert body["messages"][0]["content"] == "You are a test agent."
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "standin-model"


def test_the_user_turn_is_stored_before_the_model_answers(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn, home: Path
) -> None:
    session = store.create_session("cli")
    release = threading.Event()
    standin.add(Reply(text="finally an answer", hold=release, hold_after_chunks=0))
    results = []
    worker = threading.Thread(target=lambda: results.append(engine.run_turn(session.id, "hello?")))
    worker.start()
    try:
        standin.wait_for_requests(1)
        with SessionStore.open(home) as reader:  # another connection, as a crash would leave it
            assert [(m.role, m.content) for m in reader.messages(session.id)] == [
                ("user", "hello?")
            ]
    finally:
        release.set()
        worker.join(10)
    assert results[0].text == "finally an answer"
    assert roles(store.messages(session.id)) == ["user", "assistant"]


def seed_past_session(store: SessionStore) -> str:
    past = store.create_session("cli", title="Payments deploy")
    store.append_messages(past.id, [
        Message("user", "How do we deploy the payments service with docker compose?"),
        Message("assistant", "Use docker compose up -d in the payments folder."),
    ])  # fmt: skip
    store.end_session(past.id, "user_exit")
    return past.id


def test_the_model_calls_session_search_and_gets_the_result(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    past_id = seed_past_session(store)
    session = store.create_session("cli")
    standin.add(Reply(tool_calls=[ScriptedToolCall("session_search", '{"query": "docker compose"}',
                                                   "call_search_1")], usage=(50, 10)))  # fmt: skip
    standin.add(Reply(text="Last time we used docker compose up -d.", usage=(300, 12)))
    listener = Recorder()
    result = engine.run_turn(session.id, "How did we deploy payments last time?", listener=listener)
    assert result.error is None and result.text == "Last time we used docker compose up -d."
    assert result.tool_calls == (ToolCall("session_search", '{"query": "docker compose"}',
                                          "call_search_1"),)  # fmt: skip
    assert result.usage == TokenUsage(350, 22)
    messages = store.messages(session.id)
    assert roles(messages) == ["user", "assistant", "tool", "assistant"]
    call_message, tool_message = messages[1], messages[2]
    assert call_message.tool_calls == result.tool_calls and call_message.content == ""
    assert (tool_message.tool_call_id, tool_message.tool_name) == (
        "call_search_1",
        "session_search",
    )
    output = json.loads(tool_message.content)
    assert past_id in json.dumps(output)
    assert "docker compose up -d" in tool_message.content
    assert listener.calls == list(result.tool_calls)
    assert listener.results == [(result.tool_calls[0], tool_message.content)]
    assert store.get_session(session.id).tool_call_count == 1
    # The tool was offered with its description, and its result went back to the model.
    first, second = standin.requests
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert "past conversation" in tools["session_search"]["description"]
    assert "last time" in tools["session_search"]["description"]
    assert sent_roles(second) == ["system", "user", "assistant", "tool"]
    sent_call = second["messages"][2]["tool_calls"][0]
    assert sent_call["id"] == "call_search_1" and sent_call["function"]["name"] == "session_search"
    assert second["messages"][3] == {"role": "tool", "tool_call_id": "call_search_1",
                                     "content": tool_message.content}  # fmt: skip


def test_malformed_tool_arguments_are_answered_with_an_error_the_model_reads(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli")
    standin.add(Reply(tool_calls=[ScriptedToolCall("session_search", '{"query": "dock', "c1")]))
    standin.add(Reply(tool_calls=[ScriptedToolCall("session_search", '["docker"]', "c2")]))
    standin.add(Reply(tool_calls=[ScriptedToolCall("no_such_tool", "{}", "c3")]))
    standin.add(Reply(text="Sorry, I could not search."))
    result = engine.run_turn(session.id, "search for docker")
    assert result.error is None and result.text == "Sorry, I could not search."
    outputs = [m for m in store.messages(session.id) if m.role == "tool"]
    assert [m.tool_call_id for m in outputs] == ["c1", "c2", "c3"]
    errors = [json.loads(m.content)["error"] for m in outputs]
    assert "not valid JSON" in errors[0]
    assert "must be a JSON object" in errors[1]
    assert "no tool named 'no_such_tool'" in errors[2]
    last = standin.requests[-1]["messages"]
    assert [m["content"] for m in last if m["role"] == "tool"] == [m.content for m in outputs]


def test_a_model_that_keeps_calling_tools_is_stopped(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli")
    standin.add(Reply(tool_calls=[ScriptedToolCall("session_search", "{}")], times=None))
    result = engine.run_turn(session.id, "browse forever")
    assert len(standin.requests) == MAX_TOOL_ROUNDS
    assert result.error is not None and "still calling tools" in result.error
    assert roles(store.messages(session.id)).count("tool") == MAX_TOOL_ROUNDS


def test_a_rate_limit_storm_is_retried_then_answered(
    store: SessionStore, standin: OpenAIStandIn
) -> None:
    engine = engine_with(store, standin, max_retries=3)
    session = store.create_session("cli")
    standin.add(Reply.failure(429, times=3), Reply(text="made it"))
    result = engine.run_turn(session.id, "hello")
    assert (result.text, result.error) == ("made it", None)
    assert len(standin.requests) == 4


def assert_one_line_failure(result: Any, store: SessionStore, session_id: str, *parts: str) -> None:
    assert result.error is not None and "\n" not in result.error
    for part in parts:
        assert part in result.error, result.error
    assert (result.text, result.interrupted) == ("", False)
    assert [(m.role, m.content) for m in store.messages(session_id)] == [("user", "hello")]


def test_rate_limits_outlasting_the_retries_are_one_line(
    store: SessionStore, standin: OpenAIStandIn
) -> None:
    engine = engine_with(store, standin, max_retries=2)
    session = store.create_session("cli")
    standin.add(Reply.failure(429, times=None))
    result = engine.run_turn(session.id, "hello")
    assert_one_line_failure(result, store, session.id, "HTTP 429", "after 2 retries")
    assert len(standin.requests) == 3


def test_a_server_error_is_one_line(store: SessionStore, standin: OpenAIStandIn) -> None:
    engine = engine_with(store, standin, max_retries=1)
    session = store.create_session("cli")
    standin.add(Reply.failure(500, times=None, message="model crashed"))
    result = engine.run_turn(session.id, "hello")
    assert_one_line_failure(
        result, store, session.id, "HTTP 500", "model crashed", standin.base_url
    )


def test_a_hung_endpoint_times_out_in_one_line(store: SessionStore, standin: OpenAIStandIn) -> None:
    engine = engine_with(store, standin, timeout_seconds=0.5, max_retries=0)
    session = store.create_session("cli")
    standin.add(Reply.hang(5.0))
    result = engine.run_turn(session.id, "hello")
    assert_one_line_failure(result, store, session.id, "did not answer within 0.5 s")


def test_a_refused_key_names_the_environment_variable(
    store: SessionStore, standin: OpenAIStandIn
) -> None:
    engine = engine_with(store, standin, api_key="sk-wrong", extra={"api_key_env": "MY_LLM_KEY"})
    session = store.create_session("cli")
    standin.add(Reply(text="never sent"))
    result = engine.run_turn(session.id, "hello")
    assert_one_line_failure(result, store, session.id, "HTTP 401", "MY_LLM_KEY")
    assert standin.pending_replies == 1


def test_an_endpoint_that_is_down_is_one_line_naming_it(
    store: SessionStore, standin: OpenAIStandIn
) -> None:
    closed = OpenAIStandIn()
    url = closed.base_url
    closed.stop()  # the port is closed now: nothing listens there
    engine = engine_with(store, standin, base_url=url, max_retries=1)
    session = store.create_session("cli")
    result = engine.run_turn(session.id, "hello")
    assert_one_line_failure(result, store, session.id, "cannot reach", url)


def test_a_malformed_stream_keeps_the_text_that_arrived(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli")
    standin.add(Reply(text="partial answer here", malformed=True))
    result = engine.run_turn(session.id, "hello")
    assert result.error is not None and "malformed" in result.error and "\n" not in result.error
    answer = store.messages(session.id)[-1]
    assert answer.role == "assistant"
    assert answer.content == f"{result.text}\n\n{INTERRUPTED_MARK}" and result.text == "part"


def test_cancel_mid_stream_keeps_the_partial_text(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli")
    release = threading.Event()
    standin.add(Reply(text="one two three four five", chunk_chars=4, hold=release,
                      hold_after_chunks=2))  # fmt: skip
    cancel = threading.Event()

    class CancelAfterTwo(TurnListener):
        def __init__(self) -> None:
            self.seen = 0

        def on_text(self, delta: str) -> None:
            self.seen += 1
            if self.seen == 2:
                cancel.set()

    try:
        result = engine.run_turn(session.id, "count", listener=CancelAfterTwo(), cancel=cancel)
    finally:
        release.set()
    assert result.interrupted and result.error is None and result.text == "one two "
    messages = store.messages(session.id)
    assert roles(messages) == ["user", "assistant"]
    assert messages[1].content == f"one two \n\n{INTERRUPTED_MARK}"
    # The next turn goes on from the stored history, the interrupted answer included.
    standin.add(Reply(text="Continuing."))
    assert engine.run_turn(session.id, "go on").text == "Continuing."
    assert sent_roles(standin.requests[-1]) == ["system", "user", "assistant", "user"]


def test_a_cancel_while_the_endpoint_is_silent_ends_the_turn_at_once(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli")
    standin.add(Reply.hang(3.0))
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    result = engine.run_turn(session.id, "hello", cancel=cancel)
    assert result.interrupted and result.text == "" and result.error is None
    assert roles(store.messages(session.id)) == ["user"]


def test_a_history_cut_by_a_kill_mid_turn_can_still_be_continued(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli")
    store.append_messages(
        session.id,
        [
            Message("user", "search something"),
            Message("assistant", "", tool_calls=(ToolCall("session_search", "{}", "lost_1"),)),
        ],
    )  # fmt: skip  (the process died before the tool result was stored)
    standin.add(Reply(text="Where were we?"))
    assert engine.run_turn(session.id, "hello again").text == "Where were we?"
    sent = standin.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[3]["tool_call_id"] == "lost_1" and "no result" in sent[3]["content"]


def test_visible_reasoning_is_shown_and_stored_with_the_answer(
    engine: TurnEngine, store: SessionStore, standin: OpenAIStandIn
) -> None:
    session = store.create_session("cli")
    standin.add(Reply(reasoning="The user greets me.", text="Hello!", usage=(5, 9)))
    seen: list[str] = []

    class Thoughts(TurnListener):
        def on_reasoning(self, delta: str) -> None:
            seen.append(delta)

    assert engine.run_turn(session.id, "hi", listener=Thoughts()).text == "Hello!"
    answer = store.messages(session.id)[-1]
    assert (answer.content, answer.reasoning, answer.token_count) == (
        "Hello!", "The user greets me.", 9,
    )  # fmt: skip
    assert "".join(seen) == "The user greets me."
    # Reasoning is not sent back to the model on the next call.
    standin.add(Reply(text="again"))
    engine.run_turn(session.id, "hi again")
    assert "The user greets me." not in json.dumps(standin.requests[-1])
