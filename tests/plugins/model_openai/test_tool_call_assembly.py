"""Tool-call fragments as a stream carries them (JSON objects), joined into whole calls."""

from __future__ import annotations

from typing import Any

from hermes_hookspecs import ToolCall
from hermes_model_openai.assembling import ToolCallAssembler


def fragment(index: int, call_id: str | None = None, name: str | None = None,
             arguments: str | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "index": index, "id": call_id, "type": "function" if call_id else None,
        "function": {"name": name, "arguments": arguments},
    }  # fmt: skip


def test_interleaved_fragments_are_joined_by_index() -> None:
    calls = ToolCallAssembler()
    for piece in (
        fragment(0, "a", "session_search", ""), fragment(1, "b", "session_search", '{"qu'),
        fragment(0, arguments='{"query"'), fragment(1, arguments='ery": "k8s"}'),
        fragment(0, arguments=': "docker"}'),
    ):  # fmt: skip
        calls.add(piece)
    assert calls.finish() == [
        ToolCall("session_search", '{"query": "docker"}', "a"),
        ToolCall("session_search", '{"query": "k8s"}', "b"),
    ]
    assert not calls


def test_whole_calls_sent_with_one_index_but_their_own_ids_stay_apart() -> None:
    calls = ToolCallAssembler()
    calls.add(fragment(0, "first", "session_search", '{"query": "a"}'))
    calls.add(fragment(0, "second", "session_search", '{"query": "b"}'))
    assert [(c.id, c.arguments) for c in calls.finish()] == [
        ("first", '{"query": "a"}'), ("second", '{"query": "b"}'),
    ]  # fmt: skip


def test_a_call_without_id_or_arguments_gets_an_id_and_empty_arguments() -> None:
    calls = ToolCallAssembler()
    calls.add(fragment(0, name="session_search"))
    (call,) = calls.finish()
    assert call.arguments == "{}" and call.id is not None and call.id.startswith("call_")
