"""The export plugins as users install them: real entry points, the real ``hermes`` command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from installed_hermes import hermes_command

REPO_ROOT = Path(__file__).resolve().parents[2]


def run(command: list[str], home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home)}
    for name in ("HERMES_DEBUG", "HERMES_PLUGINS", "VIRTUAL_ENV"):
        environment.pop(name, None)
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, env=environment, timeout=120
    )


def workspace_hermes() -> list[str]:
    return [hermes_command()]


def demo_home(command: list[str], tmp_path: Path) -> Path:
    home = tmp_path / "home"
    made = run(command, tmp_path / "unused", "demo", "--into", str(home))
    assert made.returncode == 0, made.stderr
    return home


def test_the_installed_plugins_export_jsonl_and_markdown(tmp_path):
    hermes = workspace_hermes()
    home = demo_home(hermes, tmp_path)
    listed = run(hermes, home, "plugins", "--json")
    components = {c for p in json.loads(listed.stdout) for c in p["components"]}
    assert {"exporter:jsonl", "exporter:md", "exporter:qmd", "importer:jsonl"} <= components
    backup = tmp_path / "backup.jsonl"
    done = run(hermes, home, "sessions", "export", str(backup))
    assert done.returncode == 0, done.stderr
    assert len(backup.read_text().splitlines()) == 15
    done = run(hermes, home, "sessions", "export", "-f", "md", "--source", "cli")
    assert done.returncode == 0, done.stderr
    assert (home / "session-exports" / "manifest.jsonl").exists()


@pytest.mark.slow
def test_an_export_over_the_store_itself_is_refused_and_the_store_kept(tmp_path):
    # Renamed over state.db (or its -wal), the export would replace the store under every
    # process that has it open.
    hermes = workspace_hermes()
    home = demo_home(hermes, tmp_path)
    before = run(hermes, home, "sessions", "list", "--json", "--limit", "100").stdout
    for name in ("state.db", "state.db-wal"):
        target = home / name
        refused = run(hermes, home, "sessions", "export", str(target))
        assert refused.returncode == 1
        assert refused.stderr == (
            f"hermes: {target} is a file of the session store in use; writing over it would "
            "destroy the store: give another OUTPUT\n"
        )
    listed = run(hermes, home, "sessions", "list", "--json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == json.loads(before) != []


def test_the_core_and_one_plugin_install_into_a_fresh_venv_and_export(tmp_path):
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    venv = tmp_path / "venv"
    created = subprocess.run(
        [uv, "venv", "-q", str(venv), "--python", sys.executable],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stderr
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [
            uv,
            "pip",
            "install",
            "-q",
            "--python",
            str(python),
            str(REPO_ROOT),
            str(REPO_ROOT / "hookspecs"),
            str(REPO_ROOT / "plugins" / "hermes-export-markdown"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"},
    )
    if installed.returncode != 0 and "network" in installed.stderr.lower():
        pytest.skip(f"the dependencies could not be fetched: {installed.stderr.strip()[:200]}")
    assert installed.returncode == 0, installed.stderr
    hermes = [str(venv / "bin" / "hermes")]
    home = demo_home(hermes, tmp_path)

    plugins = run(hermes, home, "plugins", "--json")
    names = {p["distribution"] for p in json.loads(plugins.stdout)}
    assert names == {"hermes-export-markdown"}

    out = tmp_path / "notes"
    done = run(hermes, home, "sessions", "export", str(out), "-f", "qmd", "--title", "my project")
    assert done.returncode == 0, done.stderr
    documents = sorted(out.glob("*.qmd"))
    assert len(documents) == 2  # the two ended sessions of the demo's lineage
    meta = yaml.safe_load(documents[0].read_text(encoding="utf-8").split("---\n")[1])
    assert meta["format"] == "html" and meta["title"].startswith("my project")

    missing = run(hermes, home, "sessions", "export", "page.html", "-f", "html")
    assert missing.returncode == 1
    assert missing.stderr.strip() == (
        "hermes: no exporter 'html' is installed (pip install hermes-export-html); "
        "installed formats: md, qmd"
    )
    default = run(hermes, home, "sessions", "export", "backup.jsonl")
    assert "pip install hermes-export-jsonl" in default.stderr


def test_a_terminal_sees_the_export_progress(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    hermes = workspace_hermes()
    home = demo_home(hermes, tmp_path)
    environment = {**os.environ, "HOME": str(tmp_path), "HERMES_HOME": str(home)}
    environment.pop("HERMES_DEBUG", None)
    child = pexpect.spawn(
        hermes[0],
        ["sessions", "export", str(tmp_path / "backup.jsonl")],
        env=environment,
        encoding="utf-8",
        timeout=60,
    )
    child.expect(r"Exporting… 15 session\(s\)\r?\n")
    child.expect("Exported 15 session")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_reader_that_stops_early_ends_the_export_quietly(tmp_path):
    from hermes_hookspecs import Message

    from hermes_core.store import SessionStore

    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        for _ in range(4):
            session = store.create_session("cli")
            store.append_messages(session.id, [Message("user", "x" * 500_000)])
    environment = {**os.environ, "HOME": str(tmp_path), "HERMES_HOME": str(home)}
    environment.pop("HERMES_DEBUG", None)
    child = subprocess.Popen(
        [*workspace_hermes(), "sessions", "export", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.read(100).startswith(b'{"format":"hermes-session"')
    child.stdout.close()  # like `| head -c 100`
    error = child.stderr.read().decode()
    assert child.wait(timeout=60) == 1
    assert error == ""
