"""``hermes-platform-matrix`` installed alone beside the core in a fresh virtual environment:
listed by ``hermes plugins`` with its ``matrix`` platform, matrix-nio brought in by its own
dependencies."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_matrix_plugin_alone_is_listed_by_hermes_plugins(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "HERMES_PLUGINS")}
    made = subprocess.run([uv, "venv", "-q", str(venv), "--python", sys.executable],
                          capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), str(REPO_ROOT),
         str(REPO_ROOT / "hookspecs"), str(REPO_ROOT / "plugins" / "hermes-platform-matrix")],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    if installed.returncode != 0 and "network" in installed.stderr.lower():
        pytest.skip(f"the dependencies could not be fetched: {installed.stderr.strip()[:200]}")
    assert installed.returncode == 0, installed.stderr
    home = tmp_path / "home"
    home.mkdir()
    listed = subprocess.run(
        [str(venv / "bin" / "hermes"), "plugins", "--json"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={**env, "HOME": str(tmp_path), "HERMES_HOME": str(home)},
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    plugins = json.loads(listed.stdout)
    assert {p["distribution"] for p in plugins} == {"hermes-platform-matrix"}
    assert "matrix" in json.dumps(plugins)
    nio = subprocess.run([str(python), "-c", "import nio, hermes_platform_matrix.adapter"],
                         capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
    assert nio.returncode == 0, nio.stderr
