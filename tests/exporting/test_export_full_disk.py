"""``hermes sessions export`` onto a really full disk: a small tmpfs, filled (root; see
tests/disks.py). The store (HERMES_HOME) stays outside it: only the export's target is there.

Whether the disk refuses the first bytes at the final flush (a small export that fits in the
write buffer: the path where the temporary file used to be left behind) or half-way through the
writes, the export fails in one line, leaves no ``.partial`` file, and the old file is left
byte for byte as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from disks import fill, small_tmpfs
from installed_hermes import hermes_command


def run(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home)}
    for name in ("HERMES_DEBUG", "HERMES_PLUGINS", "VIRTUAL_ENV"):
        environment.pop(name, None)
    return subprocess.run(
        [hermes_command(), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's store (15 sessions, about 26 kB as jsonl), outside any tmpfs."""
    home = tmp_path_factory.mktemp("export-full-disk") / "home"
    made = run(home, home.parent, "demo", "--into", str(home))
    assert made.returncode == 0, made.stderr
    return home


def first_session(home: Path) -> str:
    listed = run(home, home.parent, "sessions", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return str(json.loads(listed.stdout)[0]["id"])


def assert_one_line_without_traceback(done: subprocess.CompletedProcess[str], line: str) -> None:
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr == line + "\n"


@pytest.mark.parametrize(
    ("selection", "leave"),
    [("one session", 0), ("every session", 12 * 1024)],
    ids=["refused-at-the-final-flush", "refused-half-way"],
)
def test_a_full_disk_leaves_the_old_export_and_no_partial_file(
    home: Path, tmp_path: Path, selection: str, leave: int
) -> None:
    chosen = ["--session-id", first_session(home)] if selection == "one session" else []
    with small_tmpfs(tmp_path / "disk") as disk:
        old = b'{"an": "older backup"}\n' * 50
        (disk / "out.jsonl").write_bytes(old)
        fill(disk, leave=leave)
        done = run(home, tmp_path, "sessions", "export", "disk/out.jsonl", *chosen)
        assert_one_line_without_traceback(
            done, "hermes: cannot write disk/out.jsonl: the disk is full; nothing was written"
        )
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "out.jsonl"]
        assert (disk / "out.jsonl").read_bytes() == old


def test_a_full_disk_leaves_no_file_where_there_was_none(home: Path, tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk") as disk:
        fill(disk)
        done = run(home, tmp_path, "sessions", "export", "disk/new.html", "-f", "html")
        assert_one_line_without_traceback(
            done, "hermes: cannot write disk/new.html: the disk is full; nothing was written"
        )
        assert [p.name for p in disk.iterdir()] == ["filler"]


def test_a_directory_export_on_a_full_disk_keeps_the_files_it_had(
    home: Path, tmp_path: Path
) -> None:
    with small_tmpfs(tmp_path / "disk") as disk:
        notes = disk / "notes"
        first = run(home, tmp_path, "sessions", "export", str(notes), "-f", "md", "--source", "cli")
        assert first.returncode == 0, first.stderr
        before = {p.name: p.read_bytes() for p in notes.iterdir()}
        assert "manifest.jsonl" in before and len(before) > 2
        fill(disk)
        again = run(home, tmp_path, "sessions", "export", str(notes), "-f", "md", "--source", "cli")
        assert again.returncode == 1
        assert "Traceback" not in again.stderr and len(again.stderr.splitlines()) == 1
        assert again.stderr.startswith(f"hermes: cannot write {notes}/")
        assert again.stderr.endswith(": the disk is full; nothing was written\n")
        assert {p.name: p.read_bytes() for p in notes.iterdir()} == before
        assert list(disk.rglob("*.partial")) == []
