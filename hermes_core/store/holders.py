"""Which other processes hold the store open, asked of the kernel's record locks.

A process with an SQLite connection on a WAL-mode database holds, for as long as the
connection is open, a shared lock on the database file's lock range and on the "dead man
switch" byte of its ``-shm`` file — that is how SQLite itself knows whether it is the only
user. ``fcntl(F_GETLK)`` asks who holds a lock conflicting with one we *would* take, without
taking anything: an idle gateway or chat is seen, a reader between queries too.

Asking means opening those files by path and closing them again, which drops every POSIX
lock *this* process holds on them (DESIGN §9): :func:`other_holders` refuses to run while
this process has a store connection on the file.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from .connection import holds_open

_PENDING_BYTE = 0x40000000
_SHARED_FIRST = _PENDING_BYTE + 2
_SHARED_SIZE = 510
"""SQLite's lock bytes in the database file (os_unix.c): readers hold a shared lock here."""
_SHM_DMS = 128
"""The "dead man switch" byte of the ``-shm`` file: every connection holds it shared."""

_FLOCK = ""
"""``struct flock`` as this platform lays it out ("" where there are no POSIX locks)."""
_TYPE_AT, _PID_AT = 0, 0
if sys.platform.startswith("linux"):
    _FLOCK = "hhqqi4x"  # l_type, l_whence, l_start, l_len, l_pid
    _TYPE_AT, _PID_AT = 0, 4
elif sys.platform == "darwin" or "bsd" in sys.platform:
    _FLOCK = "qqihh"  # l_start, l_len, l_pid, l_type, l_whence
    _TYPE_AT, _PID_AT = 3, 2


class HoldersUnknown(Exception):
    """This platform cannot tell (no POSIX record locks)."""


@dataclass(frozen=True, slots=True)
class Holder:
    """Another process holding the store open."""

    pid: int
    command: str | None
    """Its command line when the system shows it (``/proc``), else None."""

    def __str__(self) -> str:
        return f"pid {self.pid}" + (f": {self.command}" if self.command else "")


def other_holders(path: Path) -> list[Holder]:
    """The processes other than this one that hold ``path`` (a store file) open through
    SQLite. Raises :class:`HoldersUnknown` where record locks cannot be asked about."""
    if not _FLOCK:
        raise HoldersUnknown("this system cannot tell which processes hold a file")
    if holds_open(path):
        raise RuntimeError(f"{path}: this process holds a connection on it (DESIGN §9)")
    pids: set[int] = set()
    for target, start, length in (
        (path, _SHARED_FIRST, _SHARED_SIZE),
        (Path(f"{path}-shm"), _SHM_DMS, 1),
    ):
        pid = _conflicting_pid(target, start, length)
        if pid:
            pids.add(pid)
    return [Holder(pid, _command_of(pid)) for pid in sorted(pids)]


def _conflicting_pid(path: Path, start: int, length: int) -> int | None:
    """The process holding a lock that conflicts with a write lock on the range, if any."""
    if sys.platform == "win32":  # pragma: no cover - other_holders refuses first
        return None
    import fcntl

    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None  # no such file: nobody holds it
    try:
        if _FLOCK.startswith("hh"):
            request = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, start, length, 0)
        else:
            request = struct.pack(_FLOCK, start, length, 0, fcntl.F_WRLCK, os.SEEK_SET)
        try:
            answer = fcntl.fcntl(descriptor, fcntl.F_GETLK, request)
        except OSError:
            return None
    finally:
        os.close(descriptor)
    fields = struct.unpack(_FLOCK, answer)
    if fields[_TYPE_AT] == fcntl.F_UNLCK:
        return None
    pid = int(fields[_PID_AT])
    return pid if pid > 0 and pid != os.getpid() else None


def _command_of(pid: int) -> str | None:
    """The command line of ``pid`` as the system shows it (Linux ``/proc``), shortened."""
    with contextlib.suppress(OSError):
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        parts = [part.decode(errors="replace") for part in raw.split(b"\0") if part]
        if parts:
            parts[0] = os.path.basename(parts[0])
            if len(parts) > 1 and parts[0].startswith("python"):
                parts = [os.path.basename(parts[1]), *parts[2:]]
            text = " ".join(parts)
            printable = "".join(ch if ch.isprintable() else "?" for ch in text)
            return printable[:80]
    return None
