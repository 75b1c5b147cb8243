"""``hermes insights`` through typer's CliRunner on ``build_app``: figures, filters, the empty
report, bad input (one line, nothing written), ``--json`` against its documented shape and
``--html`` files."""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from insights_samples import PRICES_CONFIG, Sample, build_sample
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
runner = CliRunner()


@pytest.fixture(autouse=True)
def utc_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC for these tests (activity and dates are local)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def sample(tmp_path: Path) -> Sample:
    return build_sample(tmp_path / "home")


def write_prices(home: Path, prices: object = PRICES_CONFIG) -> None:
    (home / "config.yaml").write_text(
        json.dumps({"insights": {"prices": prices}}), encoding="utf-8"
    )


def invoke(home: Path, *args: str) -> Result:
    host = PluginHost(load_entry_points=False)
    return runner.invoke(build_app(host), ["--home", str(home), "insights", *args])


def as_json(home: Path, *args: str) -> dict[str, Any]:
    result = invoke(home, "--json", *args)
    assert result.exit_code == 0, result.output
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def test_json_figures_over_the_whole_store(sample: Sample) -> None:
    write_prices(sample.home)
    report = as_json(sample.home)
    totals = report["totals"]
    assert (totals["sessions"], totals["messages"]) == (5, 16)
    assert (totals["input_tokens"], totals["output_tokens"]) == (3_003_100, 701_050)
    assert (totals["tool_calls"], totals["tool_results"], totals["tool_failures"]) == (4, 4, 3)
    assert totals["cost"]["total_usd"] == pytest.approx(10.92)
    assert totals["cost"]["price_estimate_usd"] == pytest.approx(7.5)
    assert report["unpriced"] == {"sessions": 1, "models": ["llama3"]}
    assert report["tools"] == [
        {"name": "terminal", "calls": 3, "failed": 2, "failure_share": 0.6667},
        {"name": "read_file", "calls": 1, "failed": 1, "failure_share": 1.0},
    ]
    assert [d["date"] for d in report["activity"]["by_day"]] == [
        "2026-07-06",
        "2026-07-08",
        "2026-07-09",
    ]
    assert [h["sessions"] for h in report["activity"]["by_hour"]][21] == 2
    assert report["filters"] == {}
    assert report["period"]["first_started_at"] == "2026-07-06T09:10:00+00:00"


def test_filters_select_the_sessions(sample: Sample) -> None:
    report = as_json(sample.home, "--source", "telegram", "--min-messages", "3")
    assert report["totals"]["sessions"] == 1  # B
    assert report["filters"] == {"source": "telegram", "min_messages": "3"}
    assert [m["model"] for m in report["by_model"]] == ["gpt-5-2025-08-07"]
    assert report["by_model"][0]["price"] is None  # no config.yaml: no price table
    assert report["unpriced"] == {"sessions": 1, "models": ["gpt-5-2025-08-07"]}


def test_filters_matching_nothing_give_an_empty_report(sample: Sample) -> None:
    # The sample's sessions are from July 2026; the last 30 days hold none of them.
    with SessionStore.open(sample.home) as store:
        newest = max(s.last_active_at or 0 for s in store.select_sessions())
    assert time.time() - newest > 30 * 86_400
    result = invoke(sample.home, "--days", "30")
    assert result.exit_code == 0, result.output
    assert "No sessions match" in result.stdout
    report = as_json(sample.home, "--days", "30")
    assert report["totals"]["sessions"] == 0
    assert report["by_source"] == [] and report["tools"] == []
    assert report["filters"] == {"newer_than": "30d"}
    assert report["period"] == {"first_started_at": None, "last_active_at": None}
    assert len(report["activity"]["by_hour"]) == 24


def test_the_terminal_report_shows_the_figures_and_bars(sample: Sample) -> None:
    write_prices(sample.home)
    result = invoke(sample.home)
    assert result.exit_code == 0, result.output
    out = result.stdout
    for figure in ("3,003,100", "701,050", "$10.92", "66.7 %", "gpt-5-2025-08-07", "read_file"):
        assert figure in out, figure
    assert "█" in out
    assert "llama3" in out and "not counted" in out  # the unpriced note names the model


def test_names_from_the_store_are_not_rich_markup(tmp_path: Path) -> None:
    from hermes_hookspecs import Message

    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        session = store.create_session("cli", model="[bold]gpt[/bold]")
        store.append_messages(
            session.id, [Message(role="tool", content="ok", tool_name="[red]rm -rf[/red]")]
        )
    result = invoke(home)
    assert result.exit_code == 0, result.output
    assert "[red]rm -rf[/red]" in result.stdout
    assert "[bold]gpt[/bold]" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--newer-than", "3x"), "hermes: --newer-than: '3x' is not a duration"),
        (("--min-cost", "-1"), "hermes: --min-cost: -1.0 is negative"),
        (("--days", "3", "--newer-than", "2d"), "hermes: --days and --newer-than"),
        (("--source", " "), "hermes: --source: the value is empty"),
    ],
)
def test_bad_filters_are_one_line_and_exit_1(
    sample: Sample, args: tuple[str, ...], message: str
) -> None:
    result = invoke(sample.home, *args)
    assert result.exit_code == 1
    assert result.stderr.startswith(message), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_days_must_be_at_least_one(sample: Sample) -> None:
    result = invoke(sample.home, "--days", "0")
    assert result.exit_code == 2
    assert "--days" in result.stderr


@pytest.mark.parametrize(
    "prices",
    [
        {"gpt-5": {"input_per_mtok": "cheap", "output_per_mtok": 1}},
        {"gpt-5": {"input_per_mtok": 1}},
        {"gpt-5": {"input_per_mtok": -1, "output_per_mtok": 1}},
        ["gpt-5"],
    ],
)
def test_a_bad_price_table_is_one_line(sample: Sample, prices: object) -> None:
    write_prices(sample.home, prices)
    result = invoke(sample.home)
    assert result.exit_code == 1
    assert "insights.prices must be" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_html_is_written_private_and_atomically(sample: Sample, tmp_path: Path) -> None:
    target = tmp_path / "out" / "insights.html"
    target.parent.mkdir()
    result = invoke(sample.home, "--html", str(target))
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"Wrote insights over 5 session(s) to {target}"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(target.parent) == ["insights.html"]  # no temporary file left behind
    assert "<svg" in target.read_text(encoding="utf-8")
    # With --json as well, the JSON is the whole of stdout.
    again = invoke(sample.home, "--html", str(target), "--json")
    assert again.exit_code == 0
    assert json.loads(again.stdout)["totals"]["sessions"] == 5
    assert "Wrote insights" in again.stderr


@pytest.mark.parametrize("where", ["missing/insights.html", "."])
def test_an_unusable_html_target_is_one_line_and_writes_nothing(
    sample: Sample, tmp_path: Path, where: str
) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    result = invoke(sample.home, "--html", str(tmp_path / where))
    assert result.exit_code == 1
    assert result.stderr.startswith("hermes: --html")
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# ---------------------------------------------------------------- the documented JSON shape


def documented_section() -> str:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(r"^### hermes insights\n(.*?)(?=^#{1,3} )", text, flags=re.S | re.M)
    assert match, "docs/cli.md has no '### hermes insights' section"
    return match[1]


def documented_json() -> dict[str, Any]:
    block = re.search(r"```json\n(.*?)```", documented_section(), flags=re.DOTALL)
    assert block, "the JSON example of 'insights --json' is missing"
    parsed: dict[str, Any] = json.loads(block[1])
    return parsed


def assert_same_shape(documented: Any, real: Any, where: str = "$") -> None:
    """Same keys in the same order at every level, same types where the real value is set."""
    if isinstance(real, dict):
        assert isinstance(documented, dict), where
        assert list(documented) == list(real), where
        for key, value in real.items():
            assert_same_shape(documented[key], value, f"{where}.{key}")
    elif isinstance(real, list):
        assert isinstance(documented, list) and documented, where
        if real:
            assert_same_shape(documented[0], real[0], f"{where}[0]")
    elif real is not None and documented is not None:
        assert type(documented) is type(real), where


def test_the_documented_json_shape_is_the_real_one(sample: Sample) -> None:
    write_prices(sample.home)
    real = as_json(sample.home, "--source", "telegram")
    assert real["tools"] and real["by_model"][0]["price"] is not None
    assert_same_shape(documented_json(), real)


def test_the_json_table_names_every_key(sample: Sample) -> None:
    real = as_json(sample.home)
    table = documented_section()
    keys = set(real) | set(real["totals"]) | set(real["totals"]["cost"])
    for key in keys:
        assert f"`{key}`" in table, f"key {key} is not explained in docs/cli.md"
