"""docs/writing-an-importer.md works: its example plugin is real, tested and importable.

The example plugin lives in ``tests/data/importing/example_importer/``; the guide shows each of
its files in a code block titled with the file's path, and the first test fails when they
differ. The plugin is installed for a test as a real distribution without touching the
shared environment: a ``<name>-<version>.dist-info`` folder (METADATA + entry_points.txt,
from the example's pyproject.toml) next to a copy of the package, on ``PYTHONPATH`` of the
subprocesses (the real ``hermes``, and pytest for the plugin's own test).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import titled_files
from installed_hermes import hermes_command
from plugin_folders import register_distribution

from hermes_core.store import SessionStore

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-an-importer.md"
EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "importing" / "example_importer"


def guide_files() -> dict[str, str]:
    """Relative path → content of every code block of the guide with a ``title``."""
    return titled_files(GUIDE)


def example_files() -> dict[str, str]:
    return {
        str(path.relative_to(EXAMPLE)): path.read_text(encoding="utf-8")
        for path in sorted(EXAMPLE.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def install_example(root: Path) -> dict[str, Any]:
    """A copy of the example plugin under ``root``, made an installed distribution."""
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return register_distribution(root)


def environment(tmp_path: Path, plugin_root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "MYTOOL_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        HERMES_HOME=str(tmp_path / "hermes-home"),
        PYTHONPATH=str(plugin_root),
        COLUMNS="200",
    )
    return env


def run_hermes(
    tmp_path: Path, plugin_root: Path, args: list[str], **extra_env: str
) -> subprocess.CompletedProcess[str]:
    command = [hermes_command()]
    env = environment(tmp_path, plugin_root) | extra_env
    return subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def plugin_root(tmp_path: Path) -> Path:
    root = tmp_path / "hermes-mytool"
    install_example(root)
    return root


def test_the_guide_shows_every_example_file_exactly() -> None:
    shown, actual = guide_files(), example_files()
    assert sorted(shown) == sorted(actual)
    for relative, content in actual.items():
        assert shown[relative] == content, f"{relative} differs from the guide's code block"


def test_hermes_plugins_lists_the_example_importer(tmp_path: Path, plugin_root: Path) -> None:
    result = run_hermes(tmp_path, plugin_root, ["plugins", "--json"])
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    record = {r["name"]: r for r in json.loads(result.stdout)}["mytool"]
    assert (record["distribution"], record["version"], record["error"]) == (
        "hermes-mytool",
        "0.1.0",
        None,
    )
    assert record["hooks"] == ["hermes_register_importers", "hermes_register_sources"]
    assert record["components"] == ["importer:mytool", "source:mytool"]


def test_the_example_plugins_own_test_passes(tmp_path: Path, plugin_root: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=plugin_root,
        env=environment(tmp_path, plugin_root),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_hermes_sessions_import_from_mytool_stores_the_sample(
    tmp_path: Path, plugin_root: Path
) -> None:
    sample = plugin_root / "sample-chat.jsonl"
    before = (sample.read_bytes(), sample.stat().st_mtime_ns)
    result = run_hermes(
        tmp_path, plugin_root, ["sessions", "import", "--from", "mytool", str(sample)]
    )
    assert result.returncode == 0, result.stderr
    imported = re.search(r"Imported MyTool session as (?P<id>\S+): ", result.stdout)
    assert imported, result.stdout
    session_id = imported["id"]
    assert f"hermes --resume {session_id}" in result.stdout
    assert (sample.read_bytes(), sample.stat().st_mtime_ns) == before

    with SessionStore.open(tmp_path / "hermes-home") as store:
        session = store.get_session(session_id)
        messages = store.messages(session_id)
    assert session.source == "mytool"
    assert session.title == "Imported from MyTool: Why is the checkout page slow?"
    assert session.cwd == "/home/ana/shop"
    assert session.end_reason == "imported"
    assert session.ended_at == datetime(2026, 5, 1, 9, 1, 5, tzinfo=UTC).timestamp()
    assert session.metadata["imported_from"]["tool"] == "mytool"
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Why is the checkout page slow?"),
        (
            "assistant",
            "[ran tool: grep]\n[ran tool: edit]\n\n"
            "Each cart line runs its own price query (an N+1). I batched them into one.",
        ),
        ("user", "Thanks, that did it."),
        ("assistant", "Glad it helped."),
    ]

    again = run_hermes(tmp_path, plugin_root, ["sessions", "import", str(sample)])
    assert again.returncode == 0, again.stderr
    assert f"already imported as {session_id}" in again.stdout


def test_import_all_finds_the_example_logs_in_their_default_place(
    tmp_path: Path, plugin_root: Path
) -> None:
    chats = tmp_path / "mytool-home" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(plugin_root / "sample-chat.jsonl", chats / "c-42.jsonl")
    result = run_hermes(
        tmp_path,
        plugin_root,
        ["sessions", "import", "--from", "mytool", "--all"],
        MYTOOL_HOME=str(tmp_path / "mytool-home"),
    )
    assert result.returncode == 0, result.stderr
    assert "Summary: 1 imported" in result.stdout
    with SessionStore.open(tmp_path / "hermes-home") as store:
        [session] = store.list_sessions()
    assert session.metadata["imported_from"]["foreign_id"] == "c-42"
