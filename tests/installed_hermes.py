"""The ``hermes`` console script installed next to the running Python: what end-to-end tests
run, so they go through the real entry points a user has (``pythonpath = ["tests"]`` in
pyproject makes this importable from every test folder)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest


def hermes_command() -> str:
    """The installed ``hermes`` script; the test fails (never falls back) when it is missing."""
    installed = shutil.which("hermes", path=str(Path(sys.executable).parent))
    if installed is None:
        pytest.fail("the hermes console script is not installed next to this Python")
    return installed
