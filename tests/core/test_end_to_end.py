"""The installed ``hermes`` command, run as a user runs it (a real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from installed_hermes import hermes_command


def run(
    *args: str, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home), **(env or {})}
    environment.pop("HERMES_DEBUG", None)
    return subprocess.run(
        [hermes_command(), *args], capture_output=True, text=True, env=environment, timeout=60
    )


def test_demo_fills_a_home_lists_it_and_shows_a_session(tmp_path: Path) -> None:
    demo_home = tmp_path / "demo"
    result = run("demo", "--into", str(demo_home), home=tmp_path / "unused")
    assert result.returncode == 0, result.stderr
    assert "Demo home with 15 sample sessions" in result.stdout
    assert "Title" in result.stdout and "Total sessions: 15" in result.stdout
    assert "refactoring auth" in result.stdout and "● user" in result.stdout
    listed = run(
        "--home", str(demo_home), "sessions", "list", "--all", "--json", home=tmp_path / "unused"
    )
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert len(rows) == 15
    assert {"my project", "my project #2", "my project #3"} <= {row["title"] for row in rows}


def test_demo_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("precious")
    result = run("demo", "--into", str(tmp_path / "full"), home=tmp_path / "unused")
    assert result.returncode == 1
    assert result.stderr.strip().startswith("hermes: ") and "not empty" in result.stderr
    assert (tmp_path / "full" / "keep.txt").read_text() == "precious"


def test_store_is_created_private_under_hermes_home(tmp_path: Path) -> None:
    home = tmp_path / "h"
    result = run("sessions", "list", home=home)
    assert result.returncode == 0, result.stderr
    assert "No sessions yet." in result.stdout
    assert (home / "state.db").stat().st_mode & 0o777 == 0o600


def test_usage_errors_exit_2_and_user_errors_exit_1(tmp_path: Path) -> None:
    assert run("sessions", "list", "--limit", "zero", home=tmp_path / "h").returncode == 2
    result = run("sessions", "delete", "nope", "--yes", home=tmp_path / "h")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_version_and_help(tmp_path: Path) -> None:
    assert run("--version", home=tmp_path / "h").stdout.startswith("hermes-sessions ")
    help_text = run("--help", home=tmp_path / "h").stdout
    assert "sessions" in help_text and "plugins" in help_text and "demo" in help_text
