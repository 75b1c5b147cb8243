"""A private, consistent copy of a Hermes Agent ``state.db``, taken without writing to it.

Hermes Agent may be running and writing while we read, and its file must stay exactly as it
is (content and modification time, and those of its ``-wal`` and ``-shm`` files). Reading it
in place would not do that: in WAL mode even a ``mode=ro`` connection records its read mark
in the ``-shm`` file, and a long read of a rollback-journal database would hold back the
agent's writes. So the importer reads a copy in a temporary folder:

* **rollback journal** (no WAL): the sqlite3 backup API from a ``mode=ro`` connection — a
  consistent snapshot under one shared lock, taken at disk speed. A database locked by a
  writer for longer than the busy timeout is refused with one line.
* **WAL**: the main file and its ``-wal`` are copied as bytes (the ``-shm`` is never opened),
  and the copy is accepted only if the WAL header (salts and checkpoint sequence) is the same
  before and after: every page a checkpoint may have written into the main file meanwhile is
  then also in the copied WAL, which SQLite replays when it opens the copy, up to the last
  complete transaction. ``immutable=1`` would not do: it ignores the WAL (the newest turns).
"""

from __future__ import annotations

import shutil
import sqlite3
import urllib.parse
from pathlib import Path

from hermes_hookspecs import UserFacingError

SQLITE_MAGIC = b"SQLite format 3\x00"
_WAL_HEADER_BYTES = 32
_COPY_ATTEMPTS = 5


class NotASqliteFile(UserFacingError):
    """The file is not an SQLite database at all (a text file, an empty file…)."""


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` starts with the SQLite header (read as bytes; never raises)."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def uses_wal(path: Path) -> bool:
    """Whether the database file is in WAL mode (its header's read/write versions are 2)."""
    with path.open("rb") as handle:
        header = handle.read(100)
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise NotASqliteFile("not an SQLite database")
    return header[18] == 2 or header[19] == 2


def read_only_uri(path: Path, *, immutable: bool = False) -> str:
    """The ``file:`` URI that opens ``path`` read-only."""
    quoted = urllib.parse.quote(str(path.absolute()))
    return f"file:{quoted}?mode=ro" + ("&immutable=1" if immutable else "")


def private_copy(path: Path, folder: Path, *, busy_timeout: float = 5.0) -> Path:
    """Copy the database at ``path`` into ``folder`` (see the module docstring) and return
    the copy's path. Raises ``UserFacingError`` with one line when it cannot."""
    target = folder / "state.db"
    if uses_wal(path):
        _copy_wal_database(path, target)
    else:
        _backup_rollback_database(path, target, busy_timeout)
    return target


def _copy_wal_database(path: Path, target: Path) -> None:
    wal = Path(str(path) + "-wal")
    for _attempt in range(_COPY_ATTEMPTS):
        before = _wal_header(wal)
        shutil.copyfile(path, target)
        copied_wal = Path(str(target) + "-wal")
        copied_wal.unlink(missing_ok=True)
        if before is not None:
            try:
                shutil.copyfile(wal, copied_wal)
            except FileNotFoundError:
                continue  # checkpointed and removed meanwhile: copy again
        if _wal_header(wal) == before and _wal_header(copied_wal) == before:
            return
    raise UserFacingError(
        "the Hermes Agent store kept changing while it was being copied; "
        "try again when Hermes Agent is idle"
    )


def _wal_header(wal: Path) -> bytes | None:
    try:
        with wal.open("rb") as handle:
            header = handle.read(_WAL_HEADER_BYTES)
    except FileNotFoundError:
        return None
    return header if len(header) == _WAL_HEADER_BYTES else b""


def _backup_rollback_database(path: Path, target: Path, busy_timeout: float) -> None:
    try:
        source = sqlite3.connect(read_only_uri(path), uri=True, timeout=busy_timeout)
    except sqlite3.Error as error:
        raise UserFacingError(f"cannot open the Hermes Agent store: {error}") from error
    try:
        # Take the shared lock first, within the busy timeout: the backup itself would wait
        # for a writer's exclusive lock forever. Holding it, the copy is one snapshot.
        source.execute("BEGIN")
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
        destination = sqlite3.connect(target)
        try:
            source.backup(destination)
        finally:
            destination.close()
    except sqlite3.OperationalError as error:
        if "locked" in str(error).lower() or "busy" in str(error).lower():
            raise UserFacingError(
                f"the Hermes Agent store is locked by another process (waited {busy_timeout:g} s);"
                " try again when Hermes Agent is idle"
            ) from error
        raise UserFacingError(f"cannot read the Hermes Agent store: {error}") from error
    except sqlite3.DatabaseError as error:
        raise UserFacingError(f"the Hermes Agent store is damaged: {error}") from error
    finally:
        source.close()
