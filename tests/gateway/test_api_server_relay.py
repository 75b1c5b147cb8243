"""The api-server as a relay, end to end through the official ``openai`` SDK against a real
``hermes gateway run`` and the stand-in model: token usage passed through (streamed and not),
the documented 502 when the model is down (streamed too) with one log line, and one-shot
requests that leave no routing row behind."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from gateway_helpers import title_reply
from gateway_process import API_KEY, GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply, ScriptedToolCall

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


def _api_server() -> dict[str, object]:
    return {"api-server": {"api_key": API_KEY, "port": 0}}


def _client(gateway: GatewayProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=gateway.addresses["api-server"], api_key=API_KEY, max_retries=0)


def test_the_models_token_counts_reach_the_client(tmp_path: Path) -> None:
    home = tmp_path / "home"
    laptop = {"X-Hermes-Conversation": "laptop"}
    with OpenAIStandIn() as standin:
        standin.add(title_reply())
        standin.add(Reply(text="plain answer", usage=(120, 7)))
        standin.add(Reply(text="streamed answer", usage=(140, 9)))
        standin.add(Reply(text="no usage asked", usage=(150, 4)))
        write_config(home, standin.base_url, _api_server())
        with GatewayProcess(home) as gateway:
            client = _client(gateway)
            plain = client.chat.completions.create(
                model="hermes", messages=[{"role": "user", "content": "one"}], extra_headers=laptop
            )
            assert plain.usage is not None
            assert (plain.usage.prompt_tokens, plain.usage.completion_tokens) == (120, 7)
            assert plain.usage.total_tokens == 127
            chunks = list(
                client.chat.completions.create(
                    model="hermes",
                    messages=[{"role": "user", "content": "two"}],
                    stream=True,
                    stream_options={"include_usage": True},
                    extra_headers=laptop,
                )
            )
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            assert text == "streamed answer"
            last = chunks[-1]
            assert last.choices == [] and last.usage is not None
            assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (140, 9)
            assert all(c.usage is None for c in chunks[:-1])
            unasked = list(
                client.chat.completions.create(
                    model="hermes",
                    messages=[{"role": "user", "content": "three"}],
                    stream=True,
                    extra_headers=laptop,
                )
            )
            assert all(c.choices and c.usage is None for c in unasked)
            assert gateway.terminate() == 0
        turns = [r for r in standin.requests if "short descriptive title" not in str(r)]
    # Nobody reads the plain request's answer as it arrives: the model was asked for it in one
    # piece; the streamed requests were streamed to the model too.
    assert [turn.get("stream") for turn in turns] == [None, True, True]
    with SessionStore.open(home) as store:
        (session,) = store.select_sessions()
        answers = [m for m in store.messages(session.id) if m.role == "assistant"]
        assert [(m.content, m.token_count) for m in answers] == [
            ("plain answer", 7), ("streamed answer", 9), ("no usage asked", 4),
        ]  # fmt: skip
        assert (session.input_tokens, session.output_tokens) == (120 + 140 + 150, 7 + 9 + 4)


def test_a_plain_request_runs_the_models_tool_calls_and_stores_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with OpenAIStandIn() as standin:
        standin.add(title_reply())
        standin.add(
            Reply(
                text="Let me look.",
                reasoning="search first",
                tool_calls=[ScriptedToolCall("session_search", '{"query": "docker"}', "call_d")],
                usage=(50, 6),
            ),
            Reply(text="Nothing about docker yet.", usage=(80, 5)),
        )
        write_config(home, standin.base_url, _api_server())
        with GatewayProcess(home) as gateway:
            answer = _client(gateway).chat.completions.create(
                model="hermes",
                messages=[{"role": "user", "content": "what did we say about docker?"}],
                user="alice",
            )
            assert answer.choices[0].message.content == "Nothing about docker yet."
            assert answer.usage is not None
            assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (130, 11)
            assert gateway.terminate() == 0
        turns = [r for r in standin.requests if "short descriptive title" not in str(r)]
    assert [turn.get("stream") for turn in turns] == [None, None]
    assert turns[1]["messages"][-1]["role"] == "tool"
    with SessionStore.open(home) as store:
        (session,) = store.select_sessions()
        stored = store.messages(session.id)
        assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
        call = stored[1]
        assert (call.content, call.reasoning, call.token_count) == (
            "Let me look.", "search first", 6,
        )  # fmt: skip
        assert [(c.name, c.id) for c in call.tool_calls] == [("session_search", "call_d")]
        assert stored[2].tool_call_id == "call_d"
        assert (session.input_tokens, session.output_tokens) == (130, 11)


def test_a_model_that_is_down_gets_a_502_streamed_or_not_and_one_log_line(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with OpenAIStandIn() as standin:
        standin.add(title_reply())
        standin.add(Reply.failure(503, message="overloaded", times=None))
        write_config(home, standin.base_url, _api_server())
        with GatewayProcess(home) as gateway:
            client = _client(gateway)
            for stream in (True, False):
                with pytest.raises(openai.APIStatusError) as down:
                    answer = client.chat.completions.create(
                        model="hermes",
                        messages=[{"role": "user", "content": f"stream={stream}"}],
                        stream=stream,
                        extra_headers={"X-Hermes-Conversation": "down"},
                    )
                    if stream:
                        list(answer)  # type: ignore[arg-type]
                assert down.value.status_code == 502
                assert down.value.response.headers["x-hermes-session"]
                assert "overloaded" in str(down.value)
            assert gateway.terminate() == 0
    lines = [line for line in gateway.log_text().splitlines() if "overloaded" in line]
    assert len(lines) == 2, lines  # one per failed message
    assert all("could not answer" in line for line in lines)


def test_one_shot_requests_leave_no_routing_row(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with OpenAIStandIn() as standin:
        standin.add(title_reply())
        standin.add(Reply(text="ok", times=None))
        write_config(home, standin.base_url, _api_server())
        with GatewayProcess(home) as gateway:
            client = _client(gateway)
            conversations = []
            for number in range(5):
                raw = client.chat.completions.with_raw_response.create(
                    model="hermes", messages=[{"role": "user", "content": f"one-shot {number}"}]
                )
                conversations.append(raw.headers["x-hermes-conversation"])
            # The conversation the answer names can still be gone on with.
            again = client.chat.completions.with_raw_response.create(
                model="hermes",
                messages=[{"role": "user", "content": "going on"}],
                extra_headers={"X-Hermes-Conversation": conversations[0]},
            )
            named = client.chat.completions.with_raw_response.create(
                model="hermes", messages=[{"role": "user", "content": "named"}], user="alice"
            )
            assert gateway.terminate() == 0
    with SessionStore.open(home) as store:
        sessions = store.select_sessions()
        assert len(sessions) == 6  # five one-shots (one of them went on) and alice's
        routes = store.routing.routes()
        assert sorted(route.session_id or "" for route in routes) == sorted(
            [again.headers["x-hermes-session"], named.headers["x-hermes-session"]]
        )
        first = next(s for s in sessions if s.chat_id == conversations[0])
        assert first.id == again.headers["x-hermes-session"]
        assert [m.content for m in store.messages(first.id) if m.role == "user"] == [
            "one-shot 0",
            "going on",
        ]
