"""Every figure of the insights report over a store of known sessions, against the values
worked out by hand in ``insights_samples``."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest
from insights_samples import PRICES, UTC, Sample, build_sample, utc

from hermes_core.insights import InsightsReport, PriceTable, build_report
from hermes_core.selection.filters import SessionFilter
from hermes_core.store import SessionStore


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("insights") / "home")


def report_of(
    sample: Sample,
    selection: SessionFilter | None = None,
    prices: PriceTable = PRICES,
    zone: _dt.tzinfo = UTC,
) -> InsightsReport:
    with SessionStore.open(sample.home) as store:
        rows = store.insight_rows(selection)
    return build_report(rows, prices, zone=zone)


def test_totals(sample: Sample) -> None:
    totals = report_of(sample).totals
    assert totals.sessions == 5
    assert totals.messages == 5 + 4 + 2 + 4 + 1
    assert totals.input_tokens == 1_000_000 + 2_000_000 + 100 + 3_000
    assert totals.output_tokens == 200_000 + 500_000 + 50 + 1_000
    assert totals.tool_calls == 2 + 1 + 1


def test_cost_actual_then_stored_estimate_then_price_table(sample: Sample) -> None:
    cost = report_of(sample).totals.cost
    assert cost.actual_usd == pytest.approx(3.0)  # A: 1.00 + 2.00
    assert cost.actual_sessions == 1
    assert cost.stored_estimate_usd == pytest.approx(0.42)  # D
    assert cost.stored_estimate_sessions == 1
    assert cost.price_estimate_usd == pytest.approx(7.5)  # B: 2 × 1.25 + 0.5 × 10
    assert cost.price_estimate_sessions == 1
    assert cost.unpriced_sessions == 1  # C: llama3 has no price; E used nothing
    assert cost.estimated_usd == pytest.approx(7.92)
    assert cost.total_usd == pytest.approx(10.92)


def test_without_a_price_table_only_stored_costs_count(sample: Sample) -> None:
    report = report_of(sample, prices=PriceTable())
    cost = report.totals.cost
    assert cost.total_usd == pytest.approx(3.42)
    assert cost.price_estimate_sessions == 0
    assert cost.unpriced_sessions == 2  # B and C
    assert report.unpriced_models == ["gpt-5-2025-08-07", "llama3"]


def test_a_stored_cost_wins_over_the_price_table(sample: Sample) -> None:
    # A is gpt-5 with an actual cost: a price for gpt-5 must not re-estimate it.
    expensive = PriceTable.from_config(
        {"gpt-5": {"input_per_mtok": 100, "output_per_mtok": 100}},
    )
    [model] = [m for m in report_of(sample, prices=expensive).by_model if m.model == "gpt-5"]
    assert model.usage.cost.total_usd == pytest.approx(3.0)
    assert model.price is not None and model.price.input_per_mtok == 100


def test_by_source(sample: Sample) -> None:
    by_source = {s.source: s.usage for s in report_of(sample).by_source}
    assert list(by_source) == ["cli", "telegram"]  # most sessions first
    cli, telegram = by_source["cli"], by_source["telegram"]
    assert (cli.sessions, cli.messages, cli.tool_calls) == (3, 10, 3)
    assert (cli.input_tokens, cli.output_tokens) == (1_003_000, 201_000)
    assert cli.cost.total_usd == pytest.approx(3.42)
    assert (telegram.sessions, telegram.messages, telegram.tool_calls) == (2, 6, 1)
    assert (telegram.input_tokens, telegram.output_tokens) == (2_000_100, 500_050)
    assert telegram.cost.total_usd == pytest.approx(7.5)
    assert telegram.cost.unpriced_sessions == 1


def test_by_model(sample: Sample) -> None:
    by_model = {m.model: m for m in report_of(sample).by_model}
    # Most tokens first; the session without a model is listed under None.
    assert list(by_model) == ["gpt-5-2025-08-07", "gpt-5", "claude-sonnet-4", "llama3", None]
    dated = by_model["gpt-5-2025-08-07"]
    assert dated.price is not None and dated.price.output_per_mtok == 10  # the gpt-5 entry
    assert dated.usage.cost.price_estimate_usd == pytest.approx(7.5)
    assert by_model["llama3"].price is None
    assert by_model["llama3"].usage.cost.unpriced_sessions == 1
    assert by_model["claude-sonnet-4"].usage.cost.stored_estimate_usd == pytest.approx(0.42)
    assert by_model[None].usage.sessions == 1
    assert by_model[None].usage.cost.unpriced_sessions == 0


def test_tools_and_failure_share(sample: Sample) -> None:
    report = report_of(sample)
    tools = {t.name: t for t in report.tools}
    assert list(tools) == ["terminal", "read_file"]  # most calls first
    # terminal: A "p.py…" (ok), B's unnamed result answering call c1 (JSON error), D traceback.
    assert (tools["terminal"].calls, tools["terminal"].failed) == (3, 2)
    assert tools["terminal"].failure_share == pytest.approx(2 / 3)
    assert (tools["read_file"].calls, tools["read_file"].failed) == (1, 1)
    assert report.tool_results == 4
    assert report.tool_failures == 3


def test_activity_in_utc(sample: Sample) -> None:
    report = report_of(sample)
    days = {day.isoformat(): (a.sessions, a.messages) for day, a in report.by_day}
    assert days == {"2026-07-06": (2, 9), "2026-07-08": (2, 6), "2026-07-09": (1, 1)}
    weekdays = [a.sessions for a in report.by_weekday]
    assert weekdays == [2, 0, 2, 1, 0, 0, 0]  # Monday A B, Wednesday C D, Thursday E
    hours = {hour: a.sessions for hour, a in enumerate(report.by_hour) if a.sessions}
    assert hours == {9: 1, 10: 1, 21: 2, 23: 1}
    assert report.by_hour[9].tokens == 1_200_000  # A


def test_activity_follows_the_time_zone_at_quarter_hours(sample: Sample) -> None:
    india = _dt.timezone(_dt.timedelta(hours=5, minutes=30))
    report = report_of(sample, zone=india)
    # A 14:40 Mon 6th, B 03:10 Tue 7th, C 02:35 Thu 9th, D 15:30 Wed 8th, E 05:29 Fri 10th.
    days = {day.isoformat(): a.sessions for day, a in report.by_day}
    assert days == {
        "2026-07-06": 1,
        "2026-07-07": 1,
        "2026-07-08": 1,
        "2026-07-09": 1,
        "2026-07-10": 1,
    }
    hours = {hour: a.sessions for hour, a in enumerate(report.by_hour) if a.sessions}
    assert hours == {14: 1, 3: 1, 2: 1, 15: 1, 5: 1}
    assert [a.sessions for a in report.by_weekday] == [1, 1, 1, 1, 1, 0, 0]
    assert report.first_started_at is not None
    assert report.first_started_at.isoformat() == "2026-07-06T14:40:00+05:30"


def test_filters_narrow_every_figure(sample: Sample) -> None:
    report = report_of(sample, SessionFilter(source="telegram"))
    assert report.totals.sessions == 2
    assert [(t.name, t.calls, t.failed) for t in report.tools] == [("terminal", 1, 1)]
    assert [s.source for s in report.by_source] == ["telegram"]
    later = report_of(sample, SessionFilter(after=utc("2026-07-08 00:00")))
    assert later.totals.sessions == 3  # C, D, E
    assert later.totals.cost.total_usd == pytest.approx(0.42)
    assert [(t.name, t.calls, t.failed) for t in later.tools] == [("terminal", 1, 1)]
    assert {d.isoformat() for d, _ in later.by_day} == {"2026-07-08", "2026-07-09"}


def test_a_selection_matching_nothing_is_an_empty_report(sample: Sample) -> None:
    report = report_of(sample, SessionFilter(source="discord"))
    assert report.empty
    assert report.totals.sessions == 0 and report.totals.cost.total_usd == 0
    assert report.by_source == [] and report.by_model == [] and report.tools == []
    assert report.by_day == []
    assert len(report.by_hour) == 24 and not any(a.sessions for a in report.by_hour)
    assert report.first_started_at is None


def test_an_empty_store_is_an_empty_report(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        assert build_report(store.insight_rows(), PRICES).empty


def test_prices_match_exact_names_then_the_longest_dashed_prefix() -> None:
    table = PriceTable.from_config(
        {
            "gpt-5": {"input_per_mtok": 1, "output_per_mtok": 2},
            "gpt-5-mini": {"input_per_mtok": 3, "output_per_mtok": 4},
            "claude-sonnet-4": {"input_per_mtok": 5, "output_per_mtok": 6},
        }
    )
    assert table.price_for("gpt-5") == table.price_for("gpt-5-2025-08-07")
    mini = table.price_for("gpt-5-mini-2025-08-07")
    assert mini is not None and mini.input_per_mtok == 3
    sonnet = table.price_for("claude-sonnet-4@20250514")
    assert sonnet is not None and sonnet.output_per_mtok == 6
    assert table.price_for("gpt-50") is None  # not a dashed continuation
    assert table.price_for("GPT-5") is None
    assert table.price_for(None) is None
    assert mini.estimate(2_000_000, 500_000) == pytest.approx(2 * 3 + 0.5 * 4)


def test_the_largest_sessions_with_their_cost(sample: Sample) -> None:
    largest = report_of(sample).largest
    # E used no tokens and is not listed.
    assert [s.id for s in largest] == [sample.ids[k] for k in ("B", "A", "D", "C")]
    assert [(s.cost_source, s.cost_usd) for s in largest] == [
        ("price_table", pytest.approx(7.5)),
        ("actual", pytest.approx(3.0)),
        ("stored_estimate", pytest.approx(0.42)),
        (None, None),
    ]
    assert largest[1].title == "Fix the parser"
    assert (largest[1].input_tokens, largest[1].output_tokens, largest[1].messages) == (
        1_000_000,
        200_000,
        5,
    )
