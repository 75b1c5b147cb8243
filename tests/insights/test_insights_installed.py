"""``hermes insights`` through the installed ``hermes`` console script, in a subprocess."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from insights_samples import PRICES_CONFIG, build_sample
from installed_hermes import hermes_command


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home), "TZ": "UTC"}
    for name in ("HERMES_DEBUG", "HERMES_PLUGINS", "VIRTUAL_ENV"):
        environment.pop(name, None)
    return subprocess.run(
        [hermes_command(), *args], capture_output=True, text=True, env=environment, timeout=120
    )


def test_the_installed_command_reports_json_terminal_and_html(tmp_path: Path) -> None:
    sample = build_sample(tmp_path / "home")
    (sample.home / "config.yaml").write_text(
        json.dumps({"insights": {"prices": PRICES_CONFIG}}), encoding="utf-8"
    )
    done = run(sample.home, "insights", "--json", "--source", "telegram")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["totals"]["sessions"] == 2
    assert report["totals"]["cost"]["total_usd"] == 7.5
    assert report["tools"] == [{"name": "terminal", "calls": 1, "failed": 1, "failure_share": 1.0}]
    assert report["activity"]["by_hour"][21]["sessions"] == 2  # TZ=UTC in the child

    shown = run(sample.home, "insights")
    assert shown.returncode == 0, shown.stderr
    assert "3,003,100" in shown.stdout and "$10.92" in shown.stdout and "█" in shown.stdout

    page = tmp_path / "insights.html"
    written = run(sample.home, "insights", "--html", str(page), "--after", "2026-07-08")
    assert written.returncode == 0, written.stderr
    assert written.stdout.strip() == f"Wrote insights over 3 session(s) to {page}"
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    assert "default-src 'none'" in page.read_text(encoding="utf-8")

    bad = run(sample.home, "insights", "--older-than", "yesterday-ish")
    assert bad.returncode == 1
    assert bad.stderr.startswith("hermes: --older-than:")
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
