"""The installed ``hermes`` command in a real subprocess: no terminal means no question, and
the automatic clean-up runs for session commands but not for ``--help``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from installed_hermes import hermes_command
from lifecycle_helpers import ids, make

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


def hermes(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    installed = hermes_command()
    environment = {**os.environ, "HERMES_HOME": str(home)}
    environment.pop("HERMES_DEBUG", None)
    return subprocess.run(
        [installed, *args],
        capture_output=True,
        text=True,
        env=environment,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_prune_without_a_terminal_refuses_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        session = make(store, "cron")
    result = hermes("sessions", "prune", "--source", "cron", home=home)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "hermes: not a terminal, so nothing was asked or changed: add --yes to delete these "
        "1 session(s), or --dry-run to list them"
    ]
    with SessionStore.open(home) as store:
        assert ids(store) == {session}


def test_auto_prune_runs_for_list_but_not_for_help(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        old = make(store, days_ago=200)
        recent = make(store, days_ago=1)
    (home / "config.yaml").write_text("sessions:\n  auto_prune: true\n")
    helped = hermes("sessions", "list", "--help", home=home)
    assert helped.returncode == 0 and "automatic clean-up" not in helped.stderr
    with SessionStore.open(home) as store:
        assert ids(store) == {old, recent}
    listed = hermes("sessions", "list", home=home)
    assert listed.returncode == 0, listed.stderr
    assert "hermes: automatic clean-up: pruned 1 old session(s)." in listed.stderr
    assert recent in listed.stdout or recent[:10] in listed.stdout
    with SessionStore.open(home) as store:
        assert ids(store) == {recent}
