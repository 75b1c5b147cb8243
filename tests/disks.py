"""Real hostile disks for tests: a small tmpfs that can be filled or remounted read-only, and
immutable files (``chattr +i``). Mounting needs root (CI runs as root); where it cannot be done
the test is skipped with the reason — except under ``CI=true``, where it fails: there these
tests must run."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: this test must run)")
    pytest.skip(reason)


@contextlib.contextmanager
def small_tmpfs(folder: Path, size: str = "1m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted on ``folder`` (created if needed), unmounted afterwards."""
    if os.geteuid() != 0:
        _unavailable("mounting a small tmpfs needs root")
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        _unavailable(f"mount -t tmpfs failed: {mounted.stderr.strip()}")
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


class SmallDisk:
    """A tmpfs mounted at ``mount``: fill it, free it, make it read-only."""

    def __init__(self, mount: Path) -> None:
        self.mount = mount

    def fill(self) -> None:
        """Take every free byte (see :func:`fill`)."""
        fill(self.mount)

    def free(self) -> None:
        """Give the space taken by :meth:`fill` back."""
        (self.mount / "filler").unlink(missing_ok=True)

    def remount(self, mode: str) -> None:
        """``ro`` or ``rw``."""
        subprocess.run(["mount", "-o", f"remount,{mode}", str(self.mount)], check=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """An 8 MB tmpfs under ``tmp_path`` (room for a store), unmounted at the end."""
    with small_tmpfs(tmp_path / "small-disk", "8m") as mount:
        yield SmallDisk(mount)


@pytest.fixture
def make_immutable() -> Iterator[Callable[[Path], None]]:
    """``make_immutable(path)``: ``chattr +i`` — not even root may then write, rename or delete
    the file. Every file it was given is made mutable again at the end."""
    if os.geteuid() != 0:
        _unavailable("chattr +i needs root")
    files: list[Path] = []

    def make(path: Path) -> None:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            _unavailable(f"chattr +i is not supported here: {done.stderr.strip()}")
        files.append(path)

    try:
        yield make
    finally:
        for path in files:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
