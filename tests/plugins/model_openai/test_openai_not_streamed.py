"""The ``openai`` provider asked for an answer nobody reads as it arrives
(``ModelRequest(stream=False)``): one non-streamed call against the stand-in endpoint over real
HTTP with the real SDK, yielding the same events a stream gives, and failing the same way."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from hermes_hookspecs import (
    Message,
    ModelError,
    ModelRequest,
    ModelSettings,
    ReasoningDelta,
    TextDelta,
    TokenUsage,
    ToolCall,
)
from hermes_model_openai.provider import OpenAIProvider
from standins.openai_server import OpenAIStandIn, Reply, ScriptedToolCall

HI = (Message("user", "hi"),)


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn(api_key="sk-right") as server:
        yield server


def settings(base_url: str, **changes: object) -> ModelSettings:
    values: dict[str, object] = {"provider": "openai", "model": "m", "base_url": base_url,
                                 "api_key": "sk-right", "max_retries": 1, "timeout_seconds": 5.0}  # fmt: skip
    values.update(changes)
    return ModelSettings(**values)  # type: ignore[arg-type]


def ask(
    server: OpenAIStandIn, messages: tuple[Message, ...] = HI, **changes: object
) -> list[object]:
    request = ModelRequest(messages=messages, max_output_tokens=50, stream=False)
    return list(OpenAIProvider().stream(request, settings(server.base_url, **changes)))


def test_one_answer_gives_the_reasoning_the_text_and_the_usage(standin: OpenAIStandIn) -> None:
    standin.add(Reply(text="Hello world", reasoning="thinking", chunk_chars=5, usage=(9, 2)))
    assert ask(standin) == [ReasoningDelta("thinking"), TextDelta("Hello world"), TokenUsage(9, 2)]
    (body,) = standin.requests
    assert "stream" not in body and "stream_options" not in body
    assert (body["model"], body["max_tokens"], body["messages"]) == (
        "m", 50, [{"role": "user", "content": "hi"}],
    )  # fmt: skip


def test_tool_calls_come_whole_in_their_order(standin: OpenAIStandIn) -> None:
    standin.add(Reply(text="Let me look.", usage=(30, 12), tool_calls=[
        ScriptedToolCall("session_search", '{"query": "docker compose networks"}', "call_a"),
        ScriptedToolCall("session_search", '{"query": "kubernetes"}', "call_b"),
    ]))  # fmt: skip
    assert ask(standin) == [
        TextDelta("Let me look."),
        ToolCall("session_search", '{"query": "docker compose networks"}', "call_a"),
        ToolCall("session_search", '{"query": "kubernetes"}', "call_b"),
        TokenUsage(30, 12),
    ]


def test_an_answer_without_usage_gets_an_estimate(standin: OpenAIStandIn) -> None:
    standin.add(Reply(text="x" * 40, usage=False))
    assert ask(standin, (Message("user", "y" * 400),))[-1] == TokenUsage(100, 10)


def test_a_server_error_is_retried_as_the_settings_allow(standin: OpenAIStandIn) -> None:
    standin.add(Reply.failure(503), Reply(text="after a retry", usage=(3, 2)))
    assert ask(standin) == [TextDelta("after a retry"), TokenUsage(3, 2)]
    assert len(standin.requests) == 2


@pytest.mark.parametrize(
    ("reply", "changes", "expected"),
    [
        (Reply.failure(429, times=None), {}, "HTTP 429"),
        (Reply.failure(503, times=None), {}, "HTTP 503"),
        (Reply.failure(404, message="model 'm' not found"), {}, "check model.name"),
        (Reply.hang(3.0, times=None), {"timeout_seconds": 0.3, "max_retries": 0}, "0.3 s"),
        (Reply(text="abc"), {"api_key": None}, "the API key is missing"),
        (Reply(text="abcdef", malformed=True), {}, "malformed answer"),
        (Reply(tool_calls=[ScriptedToolCall("", "{}")]), {}, "without a name"),
    ],
)
def test_every_failure_is_one_model_error_line(
    standin: OpenAIStandIn, reply: Reply, changes: dict[str, object], expected: str
) -> None:
    standin.add(reply)
    with pytest.raises(ModelError) as raised:
        ask(standin, **changes)
    message = str(raised.value)
    assert expected in message and "\n" not in message and standin.base_url in message


def test_an_endpoint_that_is_down_is_one_line() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        base_url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    request = ModelRequest(messages=HI, stream=False)
    with pytest.raises(ModelError) as raised:
        list(OpenAIProvider().stream(request, settings(base_url, max_retries=0)))
    message = str(raised.value)
    assert f"cannot reach the model endpoint {base_url}" in message and "\n" not in message


def test_a_missing_model_name_is_one_line_and_sends_nothing(standin: OpenAIStandIn) -> None:
    with pytest.raises(ModelError, match=r"model\.name"):
        ask(standin, model=None)
    assert standin.requests == []
