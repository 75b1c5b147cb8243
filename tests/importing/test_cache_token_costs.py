"""Prompt-cache tokens counted apart and priced at their own price (issue 27, item 3): the
Claude Code session of the issue — 242 input, 16,553,628 cache-read, 237,121 cache-write and
49,467 output tokens — imported through the installed ``hermes``, priced by hand here, and
shown by ``insights`` (terminal, JSON, HTML) and ``sessions show``; a jsonl backup carries the
figures to another home."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from claude_helpers import SESSION, lines, prompt, reply, text, write
from installed_hermes import run_hermes_in

MODEL = "claude-opus-4-5-20251101"
USAGES = [  # two API responses; together the issue's figures
    {
        "input_tokens": 121,
        "cache_read_input_tokens": 8_000_000,
        "cache_creation_input_tokens": 200_000,
        "output_tokens": 20_000,
    },
    {
        "input_tokens": 121,
        "cache_read_input_tokens": 8_553_628,
        "cache_creation_input_tokens": 37_121,
        "output_tokens": 29_467,
    },
]
INPUT, CACHE_READ, CACHE_WRITE, OUTPUT = 242, 16_553_628, 237_121, 49_467
PRICES = "insights:\n  prices:\n    claude-opus-4-5: {input_per_mtok: 5, output_per_mtok: 25%s}\n"
CACHE_PRICES = ", cache_read_per_mtok: 0.5, cache_write_per_mtok: 6.25"


def cached_claude_log(folder: Path) -> Path:
    return write(
        folder / f"{SESSION}.jsonl",
        lines(
            prompt("u1", 1, "Refactor the parser, please."),
            reply("a1", 2, text("Done with the lexer."), message_id="m1", usage=USAGES[0], model=MODEL),
            prompt("u2", 3, "Now the tests."),
            reply("a2", 4, text("The tests pass."), message_id="m2", usage=USAGES[1], model=MODEL),
        ),
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    log = cached_claude_log(tmp_path / "logs")
    imported = run_hermes_in(home, "sessions", "import", "--from", "claude", str(log))
    assert imported.returncode == 0, imported.stderr
    return home


def insights_json(home: Path) -> dict[str, object]:
    result = run_hermes_in(home, "insights", "--json")
    assert result.returncode == 0, result.stderr
    report: dict[str, object] = json.loads(result.stdout)
    return report


def test_the_issues_session_is_priced_as_a_hand_computation(home: Path) -> None:
    (home / "config.yaml").write_text(PRICES % CACHE_PRICES, encoding="utf-8")
    report = insights_json(home)
    totals = report["totals"]
    assert isinstance(totals, dict)
    figures = [totals[name] for name in ("input_tokens", "cache_read_tokens")]
    figures += [totals[name] for name in ("cache_write_tokens", "output_tokens")]
    assert figures == [INPUT, CACHE_READ, CACHE_WRITE, OUTPUT]
    by_hand = (242 * 5 + 16_553_628 * 0.5 + 237_121 * 6.25 + 49_467 * 25) / 1_000_000
    assert by_hand == pytest.approx(10.99670525)  # the issue's "≈ $11"
    assert totals["cost"]["price_estimate_usd"] == pytest.approx(by_hand, abs=1e-6)
    [model] = report["by_model"]  # type: ignore[misc]
    assert model["price"] == {
        "input_per_mtok": 5.0,
        "output_per_mtok": 25.0,
        "cache_read_per_mtok": 0.5,
        "cache_write_per_mtok": 6.25,
    }
    [largest] = report["largest_sessions"]  # type: ignore[misc]
    assert (largest["cache_read_tokens"], largest["cache_write_tokens"]) == (CACHE_READ, CACHE_WRITE)
    assert largest["cost_usd"] == pytest.approx(by_hand, abs=1e-6)
    tokens = INPUT + CACHE_READ + CACHE_WRITE + OUTPUT
    assert report["activity"]["by_day"][0]["tokens"] == tokens  # type: ignore[index]


def test_without_cache_prices_cache_tokens_cost_what_input_costs(home: Path) -> None:
    (home / "config.yaml").write_text(PRICES % "", encoding="utf-8")
    totals = insights_json(home)["totals"]
    assert isinstance(totals, dict)
    by_hand = ((242 + 16_553_628 + 237_121) * 5 + 49_467 * 25) / 1_000_000
    assert by_hand == pytest.approx(85.19163)  # the figure the issue reports
    assert totals["cost"]["price_estimate_usd"] == pytest.approx(by_hand, abs=1e-6)


def test_the_terminal_and_html_reports_and_show_give_the_cache_figures(
    home: Path, tmp_path: Path
) -> None:
    (home / "config.yaml").write_text(PRICES % CACHE_PRICES, encoding="utf-8")
    terminal = run_hermes_in(home, "insights", env={"COLUMNS": "100"})
    assert terminal.returncode == 0, terminal.stderr
    assert re.search(r"Cache reads +16,553,628\n", terminal.stdout), terminal.stdout
    assert re.search(r"Cache writes +237,121\n", terminal.stdout)
    assert "Prompt cache by model" in terminal.stdout
    assert "$11.00" in terminal.stdout
    page = tmp_path / "insights.html"
    html = run_hermes_in(home, "insights", "--html", str(page))
    assert html.returncode == 0, html.stderr
    written = page.read_text(encoding="utf-8")
    assert "Cache reads" in written and "16,553,628" in written and "237,121" in written
    [listed] = json.loads(run_hermes_in(home, "sessions", "list", "--json").stdout)
    shown = run_hermes_in(home, "sessions", "show", "--json", listed["id"])
    assert shown.returncode == 0, shown.stderr
    payload = json.loads(shown.stdout)
    assert payload["tokens"] == {
        "input": INPUT,
        "cache_read": CACHE_READ,
        "cache_write": CACHE_WRITE,
        "output": OUTPUT,
    }
    human = run_hermes_in(home, "sessions", "show", payload["id"])
    assert human.returncode == 0, human.stderr
    assert (
        "tokens: input 242   cache read 16,553,628   cache write 237,121   output 49,467"
        in human.stdout
    )


def test_a_jsonl_backup_carries_the_cache_figures_to_another_home(
    home: Path, tmp_path: Path
) -> None:
    backup = tmp_path / "backup.jsonl"
    exported = run_hermes_in(home, "sessions", "export", str(backup), "--format", "jsonl")
    assert exported.returncode == 0, exported.stderr
    [line] = backup.read_text(encoding="utf-8").splitlines()
    session = json.loads(line)["session"]
    assert (session["cache_read_tokens"], session["cache_write_tokens"]) == (
        CACHE_READ,
        CACHE_WRITE,
    )
    other = tmp_path / "other-home"
    restored = run_hermes_in(other, "sessions", "import", "--from", "jsonl", str(backup))
    assert restored.returncode == 0, restored.stderr
    (other / "config.yaml").write_text(PRICES % CACHE_PRICES, encoding="utf-8")
    totals = insights_json(other)["totals"]
    assert isinstance(totals, dict)
    assert (totals["input_tokens"], totals["cache_read_tokens"]) == (INPUT, CACHE_READ)
    assert (totals["cache_write_tokens"], totals["output_tokens"]) == (CACHE_WRITE, OUTPUT)
