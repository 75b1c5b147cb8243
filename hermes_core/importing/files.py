"""What the import bookkeeping compares: a file's size and modification time, and how a file
changed since it was imported. Also the walk over a directory given on the command line."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from hermes_core.store.imports import ImportFileRecord


@dataclass(frozen=True, slots=True)
class FileStamp:
    """A file's size and modification time (nanoseconds), from one ``stat``."""

    size: int
    mtime_ns: int


class Change(Enum):
    """How a file compares with its bookkeeping row."""

    NEW = "new"
    """Never imported (or forgotten)."""
    UNCHANGED = "unchanged"
    """Same size: an append-only log with no new bytes. A new modification time alone (a
    ``touch``, a copy) is not new content."""
    GROWN = "grown"
    """Larger than when imported and a read cursor was kept: only the new part is read."""
    CHANGED = "changed"
    """Smaller than when imported, or larger without a cursor: rewritten, not appended to."""
    INTERRUPTED = "interrupted"
    """An earlier import stopped half-way (a crash): it is discarded and done again."""


BACKUP_OF = "backup-of:"
"""The bookkeeping cursor of a backup file (its sessions carry their own ids):
``backup-of:<number of sessions in it>``. Not a read position: a backup that changed is read
again whole, its sessions matched by id."""


def backup_cursor(sessions: int) -> str:
    """The bookkeeping cursor of a backup of ``sessions`` sessions."""
    return f"{BACKUP_OF}{sessions}"


def backup_size(cursor: str | None) -> int | None:
    """How many sessions the backup with this bookkeeping cursor holds; None when the cursor
    is not a backup's."""
    if cursor is None or not cursor.startswith(BACKUP_OF):
        return None
    count = cursor.removeprefix(BACKUP_OF)
    return int(count) if count.isdigit() else None


def stamp_of(path: Path) -> FileStamp:
    """The stamp of ``path`` (symlinks followed); raises ``OSError`` like ``os.stat``."""
    info = os.stat(path)
    return FileStamp(size=info.st_size, mtime_ns=info.st_mtime_ns)


def compare(stamp: FileStamp, record: ImportFileRecord | None) -> Change:
    """How the file with ``stamp`` changed since ``record`` was written."""
    if record is None:
        return Change.NEW
    if record.state != "done":
        return Change.INTERRUPTED
    if stamp.size == record.size:
        return Change.UNCHANGED
    if stamp.size > record.size and record.cursor is not None:
        return Change.CHANGED if backup_size(record.cursor) is not None else Change.GROWN
    return Change.CHANGED


def walk_regular_files(root: Path) -> Iterator[Path]:
    """Every regular file under ``root``, sorted per directory. Symbolic links are followed
    only when they stay inside ``root``; sockets, pipes and devices are skipped."""
    resolved_root = root.resolve()
    pending = [root]
    seen: set[Path] = set()
    while pending:
        directory = pending.pop()
        real = directory.resolve()
        if real in seen:  # a link back up the tree
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            continue
        subdirectories = []
        for entry in entries:
            path = Path(entry.path)
            try:
                if entry.is_symlink() and not _inside(path.resolve(), resolved_root):
                    continue
                info = entry.stat()  # follows a link that stays inside
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                subdirectories.append(path)
            elif stat.S_ISREG(info.st_mode):
                yield path
        pending.extend(reversed(subdirectories))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
