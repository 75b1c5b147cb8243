"""The ``openai`` provider against the stand-in endpoint over real HTTP, with the real SDK:
what it sends, how it assembles a streamed answer, and how it fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

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

REPO_ROOT = Path(__file__).resolve().parents[3]
SEARCH_TOOL = {"name": "session_search", "description": "Search past conversations.",
               "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}  # fmt: skip


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn(api_key="sk-right") as server:
        yield server


def settings(server: OpenAIStandIn, **changes: object) -> ModelSettings:
    values: dict[str, object] = {"provider": "openai", "model": "m", "base_url": server.base_url,
                                 "api_key": "sk-right", "max_retries": 1, "timeout_seconds": 5.0}  # fmt: skip
    values.update(changes)
    return ModelSettings(**values)  # type: ignore[arg-type]


def ask(
    server: OpenAIStandIn, request: ModelRequest | None = None, **changes: object
) -> list[object]:
    request = request or ModelRequest(messages=(Message("user", "hi"),))
    return list(OpenAIProvider().stream(request, settings(server, **changes)))


def test_text_and_reasoning_stream_as_they_arrive_then_usage(standin: OpenAIStandIn) -> None:
    standin.add(Reply(text="Hello world", reasoning="thinking", chunk_chars=5, usage=(9, 2)))
    events = ask(standin)
    assert events == [
        ReasoningDelta("think"), ReasoningDelta("ing"),
        TextDelta("Hello"), TextDelta(" worl"), TextDelta("d"), TokenUsage(9, 2),
    ]  # fmt: skip


def test_tool_calls_are_assembled_from_their_fragments(standin: OpenAIStandIn) -> None:
    standin.add(Reply(text="Let me look.", tool_calls=[
        ScriptedToolCall("session_search", '{"query": "docker compose networks"}', "call_a"),
        ScriptedToolCall("session_search", '{"query": "kubernetes"}', "call_b"),
    ]))  # fmt: skip
    events = ask(standin)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls == [
        ToolCall("session_search", '{"query": "docker compose networks"}', "call_a"),
        ToolCall("session_search", '{"query": "kubernetes"}', "call_b"),
    ]
    assert isinstance(events[-1], TokenUsage)


def test_an_endpoint_without_usage_gets_an_estimate(standin: OpenAIStandIn) -> None:
    standin.add(Reply(text="x" * 40, usage=False))
    request = ModelRequest(messages=(Message("user", "y" * 400),))
    assert ask(standin, request)[-1] == TokenUsage(100, 10)


def test_the_request_carries_the_history_tools_and_streaming_options(
    standin: OpenAIStandIn,
) -> None:
    standin.add(Reply(text="ok"))
    call = ToolCall("session_search", '{"query": "x"}', "call_1")
    request = ModelRequest(
        messages=(
            Message("user", "find x"),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", '{"results": []}', tool_call_id="call_1", tool_name="session_search"),
        ),
        system_prompt="Be brief.",
        tools=(SEARCH_TOOL,),
        max_output_tokens=50,
    )
    ask(standin, request)
    body = standin.requests[0]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "find x"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "session_search", "arguments": '{"query": "x"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"results": []}'},
    ]  # fmt: skip
    assert body["tools"] == [{"type": "function", "function": SEARCH_TOOL}]
    assert (body["stream"], body["stream_options"], body["max_tokens"]) == (
        True, {"include_usage": True}, 50,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "changes", "expected"),
    [
        (Reply.failure(429, times=None), {}, "HTTP 429"),
        (Reply.failure(503, times=None), {}, "HTTP 503"),
        (Reply.failure(404, message="model 'm' not found"), {}, "check model.name"),
        (Reply.hang(3.0, times=None), {"timeout_seconds": 0.3, "max_retries": 0}, "0.3 s"),
        (Reply(text="abc"), {"api_key": None}, "the API key is missing"),
        (Reply(text="abcdef", malformed=True), {}, "malformed answer"),
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


def test_a_missing_model_name_is_one_line(standin: OpenAIStandIn) -> None:
    with pytest.raises(ModelError, match=r"model\.name"):
        ask(standin, model=None)
    assert standin.requests == []


def test_the_standin_runs_as_a_command_with_a_script(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([
        {"text": "from a script", "usage": [5, 3]},
        {"tool_calls": [{"name": "session_search", "arguments": "{}", "id": "c9"}]},
    ]))  # fmt: skip
    record = tmp_path / "requests.jsonl"
    server = subprocess.Popen(
        [sys.executable, "-m", "standins.openai_server", "--port", "0", "--script", str(script),
         "--record", str(record), "--api-key", "sk-cli"],
        cwd=REPO_ROOT / "tests", stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "tests")},
    )  # fmt: skip
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("stand-in OpenAI endpoint: http://127.0.0.1:")
        base_url = line.split(": ", 1)[1].strip()
        provider = OpenAIProvider()
        chosen = ModelSettings(provider="openai", model="m", base_url=base_url, api_key="sk-cli")
        request = ModelRequest(messages=(Message("user", "hi"),))
        first = list(provider.stream(request, chosen))
        second = list(provider.stream(request, chosen))
    finally:
        server.terminate()
        assert server.wait(10) == 0
    assert first == [TextDelta("from"), TextDelta(" a s"), TextDelta("crip"), TextDelta("t"),
                     TokenUsage(5, 3)]  # fmt: skip
    assert second[0] == ToolCall("session_search", "{}", "c9")
    recorded = [json.loads(line) for line in record.read_text().splitlines()]
    assert [r["messages"] for r in recorded] == [[{"role": "user", "content": "hi"}]] * 2


def test_an_endpoint_that_stalls_mid_answer_times_out_in_one_line(standin: OpenAIStandIn) -> None:
    stalled = threading.Event()  # never set: the stand-in stops sending after two chunks
    standin.add(Reply(text="one two three four", hold=stalled, hold_after_chunks=2))
    provider = OpenAIProvider()
    received: list[object] = []
    with pytest.raises(ModelError) as raised:
        for event in provider.stream(ModelRequest(messages=(Message("user", "hi"),)),
                                     settings(standin, timeout_seconds=0.5, max_retries=0)):  # fmt: skip
            received.append(event)
    assert received == [TextDelta("one "), TextDelta("two ")]
    message = str(raised.value)
    assert "in the middle of its answer" in message and "0.5 s" in message
    assert "\n" not in message and standin.base_url in message
