"""A real full disk for a test: a small tmpfs mounted on a folder, then filled.

Mounting needs root (the CI runs as root). Where it cannot be done the test is skipped with the
reason — except under ``CI=true``, where it fails: there the full-disk tests must run.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _cannot_mount(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why}; CI=true, where the full-disk tests must run")
    pytest.skip(why)


@contextlib.contextmanager
def small_tmpfs(folder: Path, size: str = "1m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted on ``folder`` (created if needed), unmounted afterwards."""
    if os.geteuid() != 0:
        _cannot_mount("mounting a tmpfs to fill needs root")
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        _cannot_mount(f"mount -t tmpfs failed: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        unmounted = subprocess.run(["umount", str(folder)], capture_output=True, text=True)
        if unmounted.returncode != 0:  # something still holds a file there: detach it anyway
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path, *, leave: int = 0) -> Path:
    """Write a filler file into ``folder`` until its file system refuses with ENOSPC, then
    give back ``leave`` bytes (rounded by the file system to its pages). Returns the filler."""
    filler = folder / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    chunk = b"\0" * 65536
    try:
        while True:
            os.write(descriptor, chunk)
    except OSError as error:
        assert error.errno == errno.ENOSPC, error
    finally:
        os.close(descriptor)
    if leave:
        os.truncate(filler, max(filler.stat().st_size - leave, 0))
    else:
        assert os.statvfs(folder).f_bavail == 0
    return filler
