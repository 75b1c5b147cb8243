"""A conversation recorded by the real turn engine (the stand-in OpenAI endpoint over HTTP, the
real openai SDK): its tokens, its tool calls and a failed tool call show in the report."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_model_openai.provider import OpenAIProvider
from standins.openai_server import OpenAIStandIn, Reply, ScriptedToolCall

from hermes_core.agent import Toolbox, TurnEngine
from hermes_core.insights import PriceTable, build_report
from hermes_core.store import SessionStore

API_KEY = "sk-standin-insights"


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn(api_key=API_KEY) as server:
        yield server


def test_a_recorded_turn_counts_its_tokens_calls_and_failures(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    from hermes_hookspecs import ModelSettings

    settings = ModelSettings(
        provider="openai",
        model="standin-model",
        base_url=standin.base_url,
        api_key=API_KEY,
        timeout_seconds=5.0,
        max_retries=1,
        extra={"api_key_env": "OPENAI_API_KEY"},
    )
    with SessionStore.open(tmp_path / "home") as store:
        engine = TurnEngine(store, OpenAIProvider(), settings, tools=Toolbox.default(store))
        session = store.create_session("cli", model="standin-model")
        standin.add(
            Reply(
                tool_calls=[
                    ScriptedToolCall("session_search", '{"query": "docker"}', "c1"),
                    ScriptedToolCall("no_such_tool", "{}", "c2"),
                ],
                usage=(120, 30),
            ),
            Reply(text="Nothing about docker yet.", usage=(200, 12)),
        )
        result = engine.run_turn(session.id, "what did we say about docker?")
        assert result.error is None
        report = build_report(
            store.insight_rows(),
            PriceTable.from_config(
                {"standin-model": {"input_per_mtok": 1_000, "output_per_mtok": 2_000}}
            ),
        )
    assert (report.totals.input_tokens, report.totals.output_tokens) == (320, 42)
    assert report.totals.tool_calls == 2
    tools = {t.name: (t.calls, t.failed) for t in report.tools}
    assert tools == {"session_search": (1, 0), "no_such_tool": (1, 1)}  # {"error": …} output
    assert report.totals.cost.price_estimate_usd == pytest.approx((320 * 1_000 + 42 * 2_000) / 1e6)
