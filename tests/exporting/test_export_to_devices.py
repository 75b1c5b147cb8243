"""``hermes sessions export`` to what is not a regular file, through the installed command: a
device, a FIFO, ``/dev/stdout``, a process substitution. Each is written in place — never
created, renamed over or chmod'ed (DESIGN §9) — and gets the very bytes ``-`` gets.

The CI runs as root, where replacing ``/dev/null`` with a file would succeed: these tests then
catch it, not just a refusal."""

from __future__ import annotations

import gzip
import json
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from installed_hermes import hermes_command


def run(
    home: Path, *args: str, stdout: Any = subprocess.PIPE
) -> subprocess.CompletedProcess[bytes]:
    """``hermes ARGS…`` as a user runs it, on ``home``; stderr captured, stdout too unless
    ``stdout`` is given."""
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home)}
    for name in ("HERMES_DEBUG", "HERMES_PLUGINS", "VIRTUAL_ENV"):
        environment.pop(name, None)
    return subprocess.run(
        [hermes_command(), *args],
        env=environment,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=120,
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's store: 15 sessions, only read by these tests."""
    home = tmp_path_factory.mktemp("export-devices") / "home"
    made = run(home, "demo", "--into", str(home))
    assert made.returncode == 0, made.stderr
    return home


@pytest.fixture(scope="module")
def expected(home: Path) -> bytes:
    """What ``hermes sessions export -`` writes: the bytes every other target must get."""
    done = run(home, "sessions", "export", "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(b"\n") == 15
    return done.stdout


def one_session(home: Path) -> str:
    listed = run(home, "sessions", "list", "--source", "cli", "--json")
    assert listed.returncode == 0, listed.stderr
    return str(json.loads(listed.stdout)[0]["id"])


def device_identity(path: str) -> tuple[int, int, int, int]:
    """What makes a device node itself: its inode, type and permission bits, device number."""
    found = os.lstat(path)
    return found.st_ino, stat.S_IFMT(found.st_mode), stat.S_IMODE(found.st_mode), found.st_rdev


@pytest.mark.parametrize(
    "format_args",
    [("-f", "jsonl"), ("-f", "html"), ("-f", "md", "--session-id", "SESSION")],
    ids=["jsonl", "html", "md-one-session"],
)
def test_an_export_to_dev_null_leaves_it_the_null_device(
    home: Path, format_args: tuple[str, ...]
) -> None:
    before = device_identity("/dev/null")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    arguments = [one_session(home) if a == "SESSION" else a for a in format_args]
    done = run(home, "sessions", "export", "/dev/null", *arguments)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    assert b"to /dev/null." in done.stdout
    assert device_identity("/dev/null") == before
    assert [p.name for p in Path("/dev").glob(".null.*")] == []  # no temporary file beside it


def test_an_export_to_a_fifo_reaches_its_reader_complete(
    home: Path, expected: bytes, tmp_path: Path
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        done = run(home, "sessions", "export", str(fifo))
        received, _ = reader.communicate(timeout=60)
    finally:
        reader.kill()
        reader.wait()
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == f"Exported 15 session(s) as jsonl to {fifo}."
    assert received == expected
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_an_export_to_dev_stdout_writes_stdout_and_says_so_on_stderr(
    home: Path, expected: bytes, name: str
) -> None:
    before = device_identity("/dev/stdout")
    done = run(home, "sessions", "export", name)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected  # the summary does not mix into the export
    assert done.stderr.decode().strip() == f"Exported 15 session(s) as jsonl to {name}."
    assert device_identity("/dev/stdout") == before  # still the symbolic link to fd 1


def test_dev_stdout_appended_to_a_file_appends_and_keeps_the_file(
    home: Path, expected: bytes, tmp_path: Path
) -> None:
    log = tmp_path / "log"
    log.write_bytes(b"an earlier line\n")
    log.chmod(0o644)
    inode = log.stat().st_ino
    with log.open("ab") as appended:  # hermes sessions export /dev/stdout >> log
        done = run(home, "sessions", "export", "/dev/stdout", stdout=appended)
    assert done.returncode == 0, done.stderr
    assert log.read_bytes() == b"an earlier line\n" + expected
    assert (log.stat().st_ino, stat.S_IMODE(log.stat().st_mode)) == (inode, 0o644)


def test_an_export_into_a_process_substitution_arrives_complete(
    home: Path, expected: bytes, tmp_path: Path
) -> None:
    compressed = tmp_path / "out.gz"
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home)}
    environment.pop("HERMES_DEBUG", None)
    script = '"$0" sessions export >(gzip > "$1") && wait $!'  # $! is the substitution's gzip
    done = subprocess.run(
        ["bash", "-c", script, hermes_command(), str(compressed)],
        env=environment,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(rb"Exported 15 session\(s\) as jsonl to /dev/fd/\d+\.\n", done.stdout)
    assert gzip.decompress(compressed.read_bytes()) == expected


def test_one_session_of_a_file_per_session_format_goes_to_dev_stdout(home: Path) -> None:
    session = one_session(home)
    done = run(home, "sessions", "export", "/dev/stdout", "-f", "md", "--session-id", session)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(b"---\n") and session.encode() in done.stdout
    assert done.stderr.decode().startswith("Exported 1 session(s) as md to /dev/stdout")


def test_several_files_cannot_go_to_one_device(home: Path) -> None:
    before = device_identity("/dev/null")
    done = run(home, "sessions", "export", "/dev/null", "-f", "md", "--source", "cli")
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "hermes: several sessions make several files, which cannot all go to /dev/null; "
        "give a directory as OUTPUT (or select one session with --session-id)\n"
    )
    assert device_identity("/dev/null") == before


def test_a_device_that_refuses_the_bytes_is_one_line(home: Path) -> None:
    before = device_identity("/dev/full")
    done = run(home, "sessions", "export", "/dev/full")
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "hermes: cannot write /dev/full: the disk is full; what was written is incomplete\n"
    )
    assert done.stdout == b""
    assert device_identity("/dev/full") == before
