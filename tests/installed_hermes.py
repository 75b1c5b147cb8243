"""The ``hermes`` console script installed next to the running Python: what end-to-end tests
run, so they go through the real entry points a user has (``pythonpath = ["tests"]`` in
pyproject makes this importable from every test folder)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest


def hermes_command() -> str:
    """The installed ``hermes`` script; the test fails (never falls back) when it is missing."""
    installed = shutil.which("hermes", path=str(Path(sys.executable).parent))
    if installed is None:
        pytest.fail("the hermes console script is not installed next to this Python")
    return installed


def run_hermes_in(
    home: Path, *args: str, timeout: float = 300, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``hermes --home HOME ARGS…`` run to its end, output captured, no terminal to ask on;
    ``env`` is added to this process's environment."""
    return subprocess.run(
        [hermes_command(), "--home", str(home), *args],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env={**os.environ, **env} if env else None,
    )
