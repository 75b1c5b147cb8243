"""A fresh virtual environment holding the core, the contract and ONE plugin, for the
"installed alone" tests (``pythonpath = ["tests"]`` makes this importable everywhere)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def fresh_venv_with(tmp_path: Path, plugin: str) -> Path:
    """A new venv with the core, hermes-hookspecs and ``plugins/<plugin>``; its ``bin``."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    venv = tmp_path / "venv"
    quiet_env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    created = subprocess.run(
        [uv, "venv", "-q", str(venv), "--python", sys.executable],
        capture_output=True, text=True, timeout=120, env=quiet_env,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    installed = subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(REPO_ROOT),
         str(REPO_ROOT / "hookspecs"), str(REPO_ROOT / "plugins" / plugin)],
        capture_output=True, text=True, timeout=600, env=quiet_env,
    )  # fmt: skip
    if installed.returncode != 0 and "network" in installed.stderr.lower():
        pytest.skip(f"the dependencies could not be fetched: {installed.stderr.strip()[:200]}")
    assert installed.returncode == 0, installed.stderr
    return venv / "bin"


def run_hermes(
    bin_folder: Path, home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """That venv's ``hermes`` with ``HERMES_HOME=home``."""
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home), **(env or {})}
    for name in ("HERMES_DEBUG", "HERMES_PLUGINS", "VIRTUAL_ENV"):
        if name not in (env or {}):
            environment.pop(name, None)
    return subprocess.run(
        [str(bin_folder / "hermes"), *args],
        capture_output=True, text=True, env=environment, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def listed_distributions(bin_folder: Path, home: Path) -> set[str]:
    """The distributions ``hermes plugins --json`` lists."""
    listed = run_hermes(bin_folder, home, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    return {plugin["distribution"] for plugin in json.loads(listed.stdout)}
