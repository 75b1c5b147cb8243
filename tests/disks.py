"""Real hostile disks for tests: a small tmpfs that can be filled or remounted read-only, and
immutable files (``chattr +i``). Mounting needs root (CI runs as root); elsewhere the tests
that need it skip with the reason, except under ``CI=true``, where they fail instead."""

from __future__ import annotations

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


class SmallDisk:
    """A tmpfs mounted at ``mount``: fill it, free it, make it read-only."""

    def __init__(self, mount: Path) -> None:
        self.mount = mount
        self._filler = mount / "filler"

    def fill(self) -> None:
        """Take every free byte (zeros appended to one file until the disk says ENOSPC)."""
        descriptor = os.open(self._filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (1 << 16, 4096, 1):
                chunk = b"\0" * size
                while True:
                    try:
                        os.write(descriptor, chunk)
                    except OSError as error:
                        if error.errno != errno.ENOSPC:
                            raise
                        break
        finally:
            os.close(descriptor)

    def free(self) -> None:
        """Give the space taken by :meth:`fill` back."""
        self._filler.unlink(missing_ok=True)

    def free_bytes(self) -> int:
        info = os.statvfs(self.mount)
        return info.f_bavail * info.f_frsize

    def remount(self, mode: str) -> None:
        """``ro`` or ``rw``."""
        subprocess.run(["mount", "-o", f"remount,{mode}", str(self.mount)], check=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """An 8 MB tmpfs under ``tmp_path``, unmounted at the end."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    if os.geteuid() != 0:
        _unavailable("mounting a small tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        _unavailable(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield SmallDisk(mount)
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


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
