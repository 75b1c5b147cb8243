"""Figure (n): ``hermes insights`` over a bench store — target ≤ 1 s at 1M messages.

On the store of each size (built by (a), or untimed when (a) did not run), opened through
``SessionStore`` (a store cached by an older version is migrated first, untimed: schema v4 adds
the tool-result index insights reads). Each run is the whole in-process work of the command
after start-up: the store's aggregate queries (``SessionStore.insight_rows``), the report
(``build_report``), the terminal rendering into a buffer and the JSON document.

- ``insights_all_p50_p95_<size>``: every session (bare ``hermes insights``), ``repeats`` runs
  after one warm-up; ``insights_all_first_<size>`` (context) is the warm-up itself, the first
  run on a freshly opened connection.
- ``insights_filtered_p50_p95_<size>`` (context): ``--source cli --newer-than`` the median
  last activity, the shape of an everyday filtered call.
- ``insights_command_<size>`` (context): wall time of the installed ``hermes insights --json``
  in a fresh process, start-up included (median of 3).
"""

from __future__ import annotations

import io
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from hermes_core.insights import PriceTable, build_report
from hermes_core.insights.json_report import report_as_json
from hermes_core.insights.terminal import render
from hermes_core.selection.filters import SessionFilter
from hermes_core.store import SessionStore
from hermes_core.store.schema import SCHEMA_VERSION

BENCH_PRICES = PriceTable.from_config(
    {
        "gpt-5": {"input_per_mtok": 1.25, "output_per_mtok": 10},
        "claude-sonnet-4": {"input_per_mtok": 3, "output_per_mtok": 15},
    }
)
"""Prices for two of the corpus models, so both the priced and the unpriced paths run."""


@dataclass
class InsightsFigures:
    migrated_seconds: float | None = None
    first_ms: float = 0.0
    all_ms: list[float] = field(default_factory=list)
    filtered_ms: list[float] = field(default_factory=list)
    command_ms: float | None = None
    command_error: str | None = None
    sessions: int = 0
    tool_results: int = 0
    filtered_sessions: int = 0


def _one_run(store: SessionStore, selection: SessionFilter) -> tuple[float, int, int]:
    """Milliseconds for the command's work; with the sessions and tool results it counted."""
    from rich.console import Console

    started = time.perf_counter()
    report = build_report(store.insight_rows(selection), BENCH_PRICES)
    render(report, Console(file=io.StringIO(), width=100, highlight=False))
    report_as_json(report)
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed, report.totals.sessions, report.tool_results


def _schema_version(db_path: Path) -> int:
    import sqlite3

    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        version: int = connection.execute("PRAGMA user_version").fetchone()[0]
        return version
    finally:
        connection.close()


def _hermes() -> str | None:
    return shutil.which("hermes", path=str(Path(sys.executable).parent))


def run_insights_bench(home: Path, repeats: int) -> InsightsFigures:
    """Time ``hermes insights`` over the store in ``home`` (see the module docstring)."""
    found = InsightsFigures()
    db_path = home / "state.db"
    before = _schema_version(db_path)
    started = time.perf_counter()
    with SessionStore.open(home) as store:
        if before < SCHEMA_VERSION:
            found.migrated_seconds = time.perf_counter() - started
        everything = SessionFilter()
        found.first_ms, found.sessions, found.tool_results = _one_run(store, everything)
        moments = sorted(s.last_active_at or 0.0 for s in store.iter_selected())
        middle = moments[len(moments) // 2] if moments else 0.0
        filtered = SessionFilter(source="cli", newer_than=middle)
        for _ in range(repeats):
            elapsed, _sessions, _tools = _one_run(store, everything)
            found.all_ms.append(elapsed)
            elapsed, found.filtered_sessions, _tools = _one_run(store, filtered)
            found.filtered_ms.append(elapsed)
    command = _hermes()
    if command is None:
        found.command_error = "the hermes console script is not installed next to this Python"
        return found
    environment = {**os.environ, "HERMES_HOME": str(home)}
    for name in ("HERMES_DEBUG", "HERMES_PLUGINS"):
        environment.pop(name, None)
    walls = []
    for _ in range(3):
        started = time.perf_counter()
        done = subprocess.run(
            [command, "insights", "--json"], capture_output=True, env=environment, timeout=600
        )
        walls.append((time.perf_counter() - started) * 1000)
        if done.returncode != 0:
            found.command_error = done.stderr.decode(errors="replace").strip()[:200]
            return found
    found.command_ms = statistics.median(walls)
    return found
