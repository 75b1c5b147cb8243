"""Sessions imported from another agent's logs: their tokens and model count, and with no cost
of their own they are priced from the table (a Claude Code sample under ``tests/data``: one
conversation and its two subagents)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import hermes_import_claude.plugin
import pytest
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost

SAMPLE = (
    Path(__file__).resolve().parents[1]
    / "data/importing/claude/projects/-home-ana-web/33333333-aaaa-4bbb-8ccc-000000000003.jsonl"
)
runner = CliRunner()


@pytest.fixture(autouse=True)
def utc_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_an_imported_claude_session_is_priced_from_the_table(tmp_path: Path) -> None:
    host = PluginHost(
        load_entry_points=False, extra_plugins=[("claude", hermes_import_claude.plugin)]
    )
    home = tmp_path / "home"
    log = tmp_path / SAMPLE.name
    shutil.copyfile(SAMPLE, log)
    app = build_app(host)
    imported = runner.invoke(app, ["--home", str(home), "sessions", "import", str(log)])
    assert imported.exit_code == 0, imported.output
    (home / "config.yaml").write_text(
        "insights:\n  prices:\n    claude-sonnet-4: {input_per_mtok: 3, output_per_mtok: 15}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["--home", str(home), "insights", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # Usage per API response (message id), the last line of a streamed response winning: the
    # main conversation msg_e1 10/12 + msg_e2 20/30; its two subagents (delegate sessions,
    # counted too: they cost as much) msg_f1 2/3 + msg_g2 2/3, and msg_g1 2/3.
    totals = report["totals"]
    assert (totals["sessions"], totals["input_tokens"], totals["output_tokens"]) == (3, 36, 51)
    sizes = [(s["input_tokens"], s["output_tokens"]) for s in report["largest_sessions"]]
    assert sizes == [(30, 42), (4, 6), (2, 3)]
    [model] = report["by_model"]
    assert model["model"] == "claude-sonnet-4-20250514"
    assert model["price"] == {  # no cache prices in the table: cache tokens priced as input
        "input_per_mtok": 3.0,
        "output_per_mtok": 15.0,
        "cache_read_per_mtok": 3.0,
        "cache_write_per_mtok": 3.0,
    }
    assert totals["cost"]["price_estimate_usd"] == pytest.approx((36 * 3 + 51 * 15) / 1e6)
    assert totals["cost"]["price_estimate_sessions"] == 3
    assert report["unpriced"] == {"sessions": 0, "models": []}
    assert [s["source"] for s in report["by_source"]] == ["claude-code"]
    assert report["activity"]["by_day"][0]["date"] == "2025-09-07"
    assert report["activity"]["by_weekday"][6]["sessions"] == 3  # a Sunday
    assert report["activity"]["by_hour"][9]["sessions"] == 3
    main = report["largest_sessions"][0]
    assert main["cost_source"] == "price_table"
    assert main["cost_usd"] == pytest.approx((30 * 3 + 42 * 15) / 1e6)
