"""``hermes-export-html`` and ``hermes-export-trace`` each installed alone next to the core in a
fresh virtual environment (no huggingface_hub, no other plugin), exporting for real."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from trace_checks import assert_claude_trace_shape, parse_trace

REPO_ROOT = Path(__file__).resolve().parents[2]


def fresh_venv_with(tmp_path: Path, plugin: str) -> Path:
    """A new venv holding the core, the contract and ``plugin`` only; its ``bin`` folder."""
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


def run(
    bin_folder: Path, home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home), **(env or {})}
    for name in ("HERMES_DEBUG", "HERMES_PLUGINS", "VIRTUAL_ENV", "HF_TOKEN", "HF_ENDPOINT"):
        if name not in (env or {}):
            environment.pop(name, None)
    return subprocess.run(
        [str(bin_folder / "hermes"), *args],
        capture_output=True, text=True, env=environment, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def plugin_names(bin_folder: Path, home: Path) -> set[str]:
    listed = run(bin_folder, home, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    return {plugin["distribution"] for plugin in json.loads(listed.stdout)}


@pytest.mark.slow
def test_html_plugin_alone_exports_a_page(tmp_path: Path) -> None:
    bin_folder = fresh_venv_with(tmp_path, "hermes-export-html")
    home = tmp_path / "home"
    made = run(bin_folder, tmp_path / "unused", "demo", "--into", str(home))
    assert made.returncode == 0, made.stderr
    assert plugin_names(bin_folder, home) == {"hermes-export-html"}
    page = tmp_path / "all.html"
    done = run(bin_folder, home, "sessions", "export", str(page), "-f", "html")
    assert done.returncode == 0, done.stderr
    text = page.read_text(encoding="utf-8")
    assert text.count('class="pick"') == 15
    assert "default-src 'none'" in text
    missing = run(bin_folder, home, "sessions", "export", "-f", "trace")
    assert missing.returncode == 1
    assert "pip install hermes-export-trace" in missing.stderr


@pytest.mark.slow
def test_trace_plugin_alone_exports_and_names_the_upload_extra(tmp_path: Path) -> None:
    bin_folder = fresh_venv_with(tmp_path, "hermes-export-trace")
    home = tmp_path / "home"
    made = run(bin_folder, tmp_path / "unused", "demo", "--into", str(home))
    assert made.returncode == 0, made.stderr
    assert plugin_names(bin_folder, home) == {"hermes-export-trace"}
    # No selection: the most recent session, redacted, to stdout.
    done = run(bin_folder, home, "sessions", "export", "-f", "trace")
    assert done.returncode == 0, done.stderr
    records = parse_trace(done.stdout.encode())
    session_id = next(r["sessionId"] for r in records if "sessionId" in r)
    assert_claude_trace_shape(records, session_id)
    assert "redacted" in done.stderr
    # Without the [upload] extra, --upload says how to get it, in one line, and writes nothing.
    upload = run(bin_folder, home, "sessions", "export", "-f", "trace", "--upload",
                 env={"HF_TOKEN": "hf_not_used"})  # fmt: skip
    assert upload.returncode == 1
    lines = upload.stderr.strip().splitlines()
    assert len(lines) == 1, upload.stderr
    assert "pip install 'hermes-export-trace[upload]'" in lines[0]
    assert upload.stdout == ""
