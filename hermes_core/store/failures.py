"""What an ``sqlite3`` error means for the user, as one of the store's error classes.

Raw ``sqlite3`` errors never leave the store (DESIGN §9): the places that talk to SQLite — a
connection being opened, a write transaction — pass what SQLite raised through
:func:`store_error`, which reads SQLite's own result code (``sqlite_errorcode``, primary code
in the low byte) rather than the message's words.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

from .errors import StoreDamaged, StoreError, StoreFull, StoreReadOnly, StoreUnavailable

SQLITE_IOERR = 10
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_READONLY = 8
SQLITE_NOTADB = 26
SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_PERM = 3
SQLITE_AUTH = 23

FAILURE_CODES = frozenset(
    {SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_READONLY, SQLITE_NOTADB, SQLITE_CANTOPEN}
)
"""Codes that say something about the disk or the file, never about what was asked: always
turned into the store's error classes, wherever they are raised."""

LOW_SPACE_BYTES = 1 << 20
"""An I/O error while the disk has less than this free is taken for a full disk (SQLite
reports a full disk as "disk I/O error" when growing the shared-memory file fails)."""


def primary_code(error: sqlite3.Error) -> int | None:
    """SQLite's primary result code of ``error`` (None when it carries none)."""
    code = getattr(error, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


def shown(path: Path) -> str:
    """``path`` for a message: under the user's home it starts with ``~``."""
    home = os.path.expanduser("~")
    text = str(path)
    if home not in ("", "/") and text.startswith(home + os.sep):
        return "~" + text[len(home) :]
    return text


def full_error(path: Path) -> StoreFull:
    return StoreFull(f"the disk holding {shown(path)} is full; nothing was written")


def read_only_error(path: Path) -> StoreReadOnly:
    return StoreReadOnly(
        f"{shown(path)} is read-only (the file, its folder or the disk it is on); "
        "nothing was written"
    )


def disk_is_nearly_full(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.parent).free < LOW_SPACE_BYTES
    except OSError:
        return False


def store_error(error: sqlite3.Error | OSError, path: Path) -> StoreError:
    """The store's error class for what SQLite (or the file system) raised on ``path``."""
    if isinstance(error, OSError):
        if error.errno == errno.ENOSPC:
            return full_error(path)
        if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return read_only_error(path)
        return StoreUnavailable(f"{path}: {error.strerror or error}")
    code = primary_code(error)
    if code == SQLITE_FULL:
        return full_error(path)
    if code == SQLITE_READONLY:
        return read_only_error(path)
    if code == SQLITE_IOERR and disk_is_nearly_full(path):
        return full_error(path)
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return StoreDamaged(f"{path}: {error}")
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return StoreUnavailable(f"the session store stayed busy: {error}")
    return StoreUnavailable(f"{path}: {error}")


def write_refusal(path: Path) -> StoreReadOnly | None:
    """Why the store at ``path`` cannot be written in this process, found without opening
    the file (``access``, as the kernel would answer a write: a read-only mount, an immutable
    file, missing permissions), or None when it can be. SQLite also needs to create the
    write-ahead log and shared-memory files beside it when they are missing."""
    folder = path.parent
    if not path.exists():
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent  # the folders missing would be made in the nearest one
        return None if os.access(folder, os.W_OK) else read_only_error(path)
    if not os.access(path, os.W_OK):
        return read_only_error(path)
    for companion in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        if companion.exists():
            if not os.access(companion, os.W_OK):
                return read_only_error(path)
        elif not os.access(folder, os.W_OK):
            return read_only_error(path)
    return None
