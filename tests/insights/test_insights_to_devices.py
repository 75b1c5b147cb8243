"""``hermes insights --html`` to what is not a regular file, and onto a full disk, through the
installed command: a device, a FIFO, ``/dev/stdout`` and a process substitution are written in
place, never replaced; a full disk is one line and leaves the old page and no temporary file."""

from __future__ import annotations

import gzip
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest
from disks import fill, small_tmpfs
from insights_samples import build_sample
from installed_hermes import hermes_command


def run(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home), "TZ": "UTC"}
    for name in ("HERMES_DEBUG", "HERMES_PLUGINS", "VIRTUAL_ENV"):
        environment.pop(name, None)
    return subprocess.run(
        [hermes_command(), *args], cwd=cwd, env=environment, capture_output=True, timeout=120
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The five sample sessions; only read by these tests."""
    return build_sample(tmp_path_factory.mktemp("insights-devices") / "home").home


def comparable(page: bytes) -> bytes:
    """The page without what differs from one run to the next (its nonce, when generated)."""
    page = re.sub(rb"nonce-[A-Za-z0-9_-]+|nonce=\"[A-Za-z0-9_-]+\"", b"NONCE", page)
    return re.sub(rb"generated \d{4}-\d\d-\d\d \d\d:\d\d", b"GENERATED", page)


@pytest.fixture(scope="module")
def expected(home: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The page as a regular file gets it."""
    page = tmp_path_factory.mktemp("insights-page") / "page.html"
    done = run(home, "insights", "--html", str(page))
    assert done.returncode == 0, done.stderr
    text = page.read_bytes()
    assert text.startswith(b"<!DOCTYPE html>") and text.endswith(b"</html>\n")
    return comparable(text)


def device_identity(path: str) -> tuple[int, int, int, int]:
    found = os.lstat(path)
    return found.st_ino, stat.S_IFMT(found.st_mode), stat.S_IMODE(found.st_mode), found.st_rdev


def test_a_page_to_dev_null_leaves_it_the_null_device(home: Path) -> None:
    before = device_identity("/dev/null")
    done = run(home, "insights", "--html", "/dev/null")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == "Wrote insights over 5 session(s) to /dev/null"
    assert device_identity("/dev/null") == before
    assert [p.name for p in Path("/dev").glob(".null.*")] == []


def test_a_page_to_a_fifo_reaches_its_reader_complete(
    home: Path, expected: bytes, tmp_path: Path
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        done = run(home, "insights", "--html", str(fifo))
        received, _ = reader.communicate(timeout=60)
    finally:
        reader.kill()
        reader.wait()
    assert done.returncode == 0, done.stderr
    assert comparable(received) == expected
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_a_page_to_dev_stdout_is_stdout_and_the_note_goes_to_stderr(
    home: Path, expected: bytes
) -> None:
    done = run(home, "insights", "--html", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert comparable(done.stdout) == expected
    assert done.stderr.decode().strip() == "Wrote insights over 5 session(s) to /dev/stdout"


def test_a_page_into_a_process_substitution_arrives_complete(
    home: Path, expected: bytes, tmp_path: Path
) -> None:
    compressed = tmp_path / "page.html.gz"
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home)}
    environment.pop("HERMES_DEBUG", None)
    script = '"$0" insights --html >(gzip > "$1") && wait $!'  # $! is the substitution's gzip
    done = subprocess.run(
        ["bash", "-c", script, hermes_command(), str(compressed)],
        env=environment,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert comparable(gzip.decompress(compressed.read_bytes())) == expected


def test_a_device_that_refuses_the_page_is_one_line(home: Path) -> None:
    done = run(home, "insights", "--html", "/dev/full")
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "hermes: cannot write /dev/full: the disk is full; what was written is incomplete\n"
    )
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)


def test_a_full_disk_keeps_the_old_page_and_leaves_no_partial_file(
    home: Path, tmp_path: Path
) -> None:
    with small_tmpfs(tmp_path / "disk") as disk:
        old = b"<p>the page of last week</p>\n"
        (disk / "page.html").write_bytes(old)
        fill(disk)
        done = run(home, "insights", "--html", "disk/page.html", cwd=tmp_path)
        assert done.returncode == 1
        assert done.stderr.decode() == (
            "hermes: cannot write disk/page.html: the disk is full; nothing was written\n"
        )
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "page.html"]
        assert (disk / "page.html").read_bytes() == old
