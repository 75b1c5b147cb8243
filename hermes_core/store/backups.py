"""Rolling backups of a SQLite store: a copy every ``interval_hours``, the newest ``keep``
kept, which ``repair`` offers when the store is damaged.

* **Who takes them.** A process that opens the store for writing through the command line (a
  chat, the gateway, a ``hermes sessions`` command) starts :class:`RollingBackups`: when the
  newest backup is older than the interval it starts a backup process of its own, detached
  (``python -m hermes_core.store.backups``), then looks again every few minutes for as long
  as it runs. Nobody waits for a copy: the command that found a backup due exits at once.
* **How.** ``VACUUM INTO`` a temporary name in the backup folder, on a connection of its own:
  in WAL mode that is one read transaction, so writers are never blocked (the log grows
  meanwhile and is checkpointed after), and the copy is compact, in rollback-journal mode, a
  single file. It is synced, renamed into place, and the oldest backups beyond ``keep``
  removed — only after the new one is complete.
* **One at a time.** Taking one holds an exclusive ``flock`` on ``.lock`` in the backup
  folder (released by the kernel if the process dies); another process finding it held skips,
  and whoever takes the lock checks again whether a backup is still due. Temporary files left
  by a process that died mid-backup are removed by the next one.
* **Never in the writer's way.** A failure (a full disk, a damaged store) is logged and
  recorded in ``state_meta`` (``stats`` shows it), the partial file removed, older backups
  kept. On the store's own disk a backup is only started when the disk keeps at least a
  tenth of the copy's size (1 MiB or more) free after it, so a backup never takes the space
  the writer needs.

Where: ``store.backups.folder`` (default ``backups/`` beside the store file), named
``<store name>-<UTC time>.db`` (``state-20260705T040000Z.db``). SQLite stores only: a
PostgreSQL store has none (back it up with ``pg_dump``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
import re
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .connection import BUSY_TIMEOUT_MS, open_connection, read_only_uri, write_transaction
from .errors import StoreDamaged, StoreError
from .failures import shown, store_error

if TYPE_CHECKING:
    import logging


def _log() -> logging.Logger:
    """This module's logger (``logging`` is imported only when there is something to say:
    every command that opens the store checks for a due backup, and start-up is a budget)."""
    import logging

    return logging.getLogger("hermes.store.backups")


DEFAULT_INTERVAL_HOURS = 24
DEFAULT_KEEP = 3
CHECK_EVERY_SECONDS = 600.0
"""How often a long-lived process looks whether a backup is due."""
LAST_FAILURE_KEY = "last_backup_failure"
"""``state_meta`` key: when the last rolling backup failed and why (JSON)."""
LOCK_NAME = ".lock"
PARTIAL_SUFFIX = ".partial"
_STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(r"^(?P<stem>.+)-(?P<stamp>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?\.db$")


@dataclass(frozen=True, slots=True)
class BackupSettings:
    """``store.backups.*`` of ``config.yaml``."""

    interval_hours: float = DEFAULT_INTERVAL_HOURS
    keep: int = DEFAULT_KEEP
    folder: Path | None = None
    """Where backups go; None: ``backups/`` beside the store file."""

    @property
    def enabled(self) -> bool:
        """0 for either setting turns rolling backups off."""
        return self.interval_hours > 0 and self.keep > 0

    @classmethod
    def from_config(cls, config: Any) -> BackupSettings:
        """From a :class:`~hermes_core.config.Config` (or any ``key → value`` lookup)."""
        folder = config["store.backups.folder"]
        return cls(
            interval_hours=float(config["store.backups.interval_hours"]),
            keep=int(config["store.backups.keep"]),
            folder=Path(folder).expanduser() if folder else None,
        )


@dataclass(frozen=True, slots=True)
class Backup:
    """One backup file."""

    path: Path
    taken_at: float
    """When it was taken (from its name), seconds since the epoch."""

    @property
    def local_time(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(self.taken_at))


def backup_folder(store: Path, settings: BackupSettings) -> Path:
    """Where the backups of the store file ``store`` go (a relative ``folder`` is taken
    from the store's folder)."""
    if settings.folder is None:
        return store.parent / "backups"
    return settings.folder if settings.folder.is_absolute() else store.parent / settings.folder


def list_backups(store: Path, settings: BackupSettings) -> list[Backup]:
    """The store's backups, newest first (files named as this module names them)."""
    folder = backup_folder(store, settings)
    stem = store.stem
    found: list[Backup] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        match = _NAME.match(name)
        if match is None or match["stem"] != stem:
            continue
        moment = _stamp_time(match["stamp"])
        found.append(Backup(folder / name, moment.timestamp() + int(match["n"] or 0) * 1e-3))
    found.sort(key=lambda backup: backup.taken_at, reverse=True)
    return found


def _stamp_time(stamp: str) -> _dt.datetime:
    """The UTC moment of a backup name's ``%Y%m%dT%H%M%SZ`` stamp (read by hand: ``strptime``
    costs an import on every start of every command)."""
    return _dt.datetime(
        int(stamp[0:4]), int(stamp[4:6]), int(stamp[6:8]),
        int(stamp[9:11]), int(stamp[11:13]), int(stamp[13:15]), tzinfo=_dt.UTC,
    )  # fmt: skip


def is_due(store: Path, settings: BackupSettings, now: float) -> bool:
    """Whether the newest backup is older than the interval (or there is none). One far in
    the future (the clock was set back) does not stop backups for good."""
    if not settings.enabled:
        return False
    backups = list_backups(store, settings)
    if not backups:
        return True
    age = now - backups[0].taken_at
    interval = settings.interval_hours * 3600
    return age >= interval or -age > max(interval, 3600)


class BackupSkipped(Exception):
    """Why no backup was taken although one was asked for (not a failure)."""


class NoRoom(BackupSkipped):
    """The store's disk has too little room for a backup: skipped, and recorded like a
    failure (the user should know backups are not being taken)."""


def take_backup(
    store: Path,
    settings: BackupSettings,
    *,
    now: float | None = None,
    only_if_due: bool = True,
) -> Backup:
    """Take one backup of ``store`` now and rotate; returns it. Raises :class:`BackupSkipped`
    (another process is taking one, none is due, not enough room on the store's disk), or
    the store's errors when the copy fails — its partial file removed, older backups kept."""
    moment = time.time() if now is None else now
    folder = backup_folder(store, settings)
    _make_folder(folder, store)
    with _exclusive(folder) as held:
        if not held:
            raise BackupSkipped("another process is taking a backup")
        if only_if_due and not is_due(store, settings, moment):
            raise BackupSkipped("a recent backup exists")
        _remove_partials(folder)
        target = _new_name(folder, store, moment)
        partial = target.with_name(target.name + PARTIAL_SUFFIX)
        try:
            _copy(store, partial, folder)
            _sync_file(partial)
            os.replace(partial, target)
            from hermes_core.files import fsync_directory

            fsync_directory(folder)
        except BaseException:
            with contextlib.suppress(OSError):
                partial.unlink()
            raise
        backup = Backup(target, moment)
        _rotate(store, settings)
    return backup


def _copy(store: Path, partial: Path, folder: Path) -> None:
    """``VACUUM INTO`` ``partial`` on a connection of its own (one read transaction)."""
    connection = open_connection(store, read_only=True)
    try:
        _check_room(connection, store, folder)
        descriptor = os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(descriptor)
        try:
            connection.execute("VACUUM INTO ?", (str(partial),))
        except sqlite3.Error as error:
            raise store_error(error, partial) from error
    finally:
        connection.close()


def _check_room(connection: sqlite3.Connection, store: Path, folder: Path) -> None:
    """On the store's own disk, refuse a backup that would leave less than a tenth of its
    size (1 MiB at least) free: the writer needs that room more than a backup does."""
    try:
        same_disk = os.stat(folder).st_dev == os.stat(store).st_dev
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if not same_disk:
        return
    page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    free_pages = connection.execute("PRAGMA freelist_count").fetchone()[0]
    needed = (pages - free_pages) * page_size
    reserve = max(needed // 10, 1 << 20)
    if free < needed + reserve:
        raise NoRoom(
            f"not enough room on the store's disk: the copy needs about {needed:,} bytes and "
            f"{reserve:,} must stay free; {free:,} are"
        )


def _rotate(store: Path, settings: BackupSettings) -> None:
    for old in list_backups(store, settings)[settings.keep :]:
        with contextlib.suppress(OSError):
            old.path.unlink()


def _new_name(folder: Path, store: Path, moment: float) -> Path:
    stamp = time.strftime(_STAMP, time.gmtime(moment))
    target = folder / f"{store.stem}-{stamp}.db"
    number = 1
    while target.exists():
        number += 1
        target = folder / f"{store.stem}-{stamp}-{number}.db"
    return target


def _make_folder(folder: Path, store: Path) -> None:
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise store_error(error, folder) from error
    if not folder.is_dir():
        raise BackupSkipped(f"{shown(folder)} is not a folder")


def _remove_partials(folder: Path) -> None:
    """Temporary files of a backup that never finished (its process died): only called
    under the lock, so none of them is being written."""
    for name in os.listdir(folder):
        if name.endswith(PARTIAL_SUFFIX):
            with contextlib.suppress(OSError):
                (folder / name).unlink()


@contextlib.contextmanager
def _exclusive(folder: Path) -> Iterator[bool]:
    """Hold the backup folder's lock (True), or False when another process holds it. The
    kernel releases it when its holder dies."""
    descriptor = os.open(folder / LOCK_NAME, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        if not _try_lock(descriptor):
            yield False
            return
        try:
            yield True
        finally:
            _unlock(descriptor)
    finally:
        os.close(descriptor)


if sys.platform == "win32":  # pragma: no cover - no POSIX locks there
    import msvcrt

    def _try_lock(descriptor: int) -> bool:
        try:
            msvcrt.locking(descriptor, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(descriptor: int) -> None:
        with contextlib.suppress(OSError):
            msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(descriptor: int) -> bool:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False
            raise
        return True

    def _unlock(descriptor: int) -> None:
        fcntl.flock(descriptor, fcntl.LOCK_UN)


def _sync_file(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


# ---------------------------------------------------------------------- reading a backup


@dataclass(frozen=True, slots=True)
class BackupContents:
    """What a backup holds."""

    sessions: int
    messages: int
    schema_version: int


def describe(backup: Path) -> BackupContents:
    """Count what ``backup`` holds (read-only; never changes the file)."""
    try:
        connection = sqlite3.connect(read_only_uri(backup, immutable=True), uri=True)
    except sqlite3.Error as error:
        raise store_error(error, backup) from error
    try:
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        sessions = connection.execute("SELECT count(*) FROM sessions").fetchone()[0]
        messages = connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    except sqlite3.Error as error:
        raise store_error(error, backup) from error
    finally:
        connection.close()
    return BackupContents(int(sessions), int(messages), int(version))


# ---------------------------------------------------------------------- who takes them


def backup_and_record(store: Path, settings: BackupSettings) -> Backup | None:
    """Take a backup if one is due and record how it went (what the backup process runs);
    the backup, or None when none was taken. Never raises."""
    try:
        backup = take_backup(store, settings)
    except NoRoom as error:
        _failed(store, error)
    except BackupSkipped as skipped:
        _log().debug("rolling backup skipped: %s", skipped)
    except Exception as error:
        _failed(store, error)
    else:
        if _failure_recorded(store):
            clear_failure(store)
        return backup
    return None


def _failed(store: Path, error: Exception) -> None:
    reason = str(error).removeprefix(f"{store}: ")
    if isinstance(error, StoreDamaged):
        # A damaged file is written to no more (no failure record); the next command that
        # reads the damaged page says so, with the way back.
        _log().warning(
            "hermes: rolling backup of %s failed: the store is damaged (%s)", shown(store), reason
        )
        return
    _log().warning("hermes: rolling backup of %s failed: %s", shown(store), reason)
    record_failure(store, reason)


INLINE_BACKUP_BYTES = 8 << 20
"""A store up to this size (with its log) is copied in this process's backup thread — a few
tens of milliseconds, which :meth:`RollingBackups.stop` may wait for; a larger one by a
detached process of its own, which nobody waits for."""


class RollingBackups:
    """Takes a backup of ``store`` whenever one is due — at once, then every ``check_every``
    seconds until :meth:`stop`. A small store is copied in this object's thread; a larger one
    (past :data:`INLINE_BACKUP_BYTES`) by a process of its own, detached from this one: a
    short command never waits for a copy of seconds (a store of a million messages), and a
    chat or gateway that stops leaves it to finish. Never raises into the process that runs
    it."""

    def __init__(
        self, store: Path, settings: BackupSettings, *, check_every: float = CHECK_EVERY_SECONDS
    ) -> None:
        self.store = store
        self.settings = settings
        self._check_every = check_every
        self._stop = threading.Event()
        self._child: Any = None
        self._thread = threading.Thread(target=self._run, name="hermes-backups", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.run_once()
            if self._stop.wait(self._check_every):
                break

    def run_once(self) -> None:
        """Take a backup if one is due (here, or by a process of its own for a large store)
        and none of ours is still being taken."""
        if self._child is not None and self._child.poll() is None:
            return
        if not is_due(self.store, self.settings, time.time()):
            return
        if _store_bytes(self.store) <= INLINE_BACKUP_BYTES:
            backup_and_record(self.store, self.settings)
            return
        try:
            self._child = spawn_backup(self.store, self.settings)
        except OSError as error:
            _log().warning("hermes: could not start a rolling backup: %s", error)

    def stop(self) -> None:
        """Stop looking, once a small store's copy in progress is done (a backup process
        already started goes on by itself)."""
        self._stop.set()
        self._thread.join()


def _store_bytes(store: Path) -> int:
    total = 0
    for path in (store, Path(f"{store}-wal")):
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    return total


def spawn_backup(store: Path, settings: BackupSettings) -> Any:
    """Start ``python -m hermes_core.store.backups`` for ``store``, in a session of its own
    (a Ctrl-C or the end of the command that started it does not stop it), reading and
    writing no terminal. It takes the backup if one is still due (see :func:`main`)."""
    import subprocess

    folder = "" if settings.folder is None else str(settings.folder)
    return subprocess.Popen(
        [sys.executable, "-m", __name__, str(store), repr(settings.interval_hours),
         str(settings.keep), folder],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )  # fmt: skip


def main(argv: list[str]) -> int:
    """The backup process: ``STORE INTERVAL_HOURS KEEP FOLDER`` (FOLDER empty: the default)."""
    store, interval, keep, folder = argv
    settings = BackupSettings(
        interval_hours=float(interval), keep=int(keep), folder=Path(folder) if folder else None
    )
    return 0 if backup_and_record(Path(store), settings) is not None else 1


def record_failure(store: Path, error: str) -> None:
    """Note a failed backup in ``state_meta`` (best effort: on a full disk it cannot be)."""
    _write_meta(store, json.dumps({"at": time.time(), "error": error}))


def clear_failure(store: Path) -> None:
    _write_meta(store, None)


def last_failure(connection: sqlite3.Connection) -> tuple[float, str] | None:
    """When the last rolling backup failed and why, if that is the latest news of them."""
    row = connection.execute(
        "SELECT value FROM state_meta WHERE key = ?", (LAST_FAILURE_KEY,)
    ).fetchone()
    if row is None or row[0] is None:
        return None
    try:
        found = json.loads(row[0])
        return float(found["at"]), str(found["error"])
    except (ValueError, KeyError, TypeError):
        return None


def _failure_recorded(store: Path) -> bool:
    try:
        connection = open_connection(store, read_only=True)
    except StoreError:
        return False
    try:
        return last_failure(connection) is not None
    except (StoreError, sqlite3.Error):
        return False
    finally:
        connection.close()


def _write_meta(store: Path, value: str | None) -> None:
    try:
        connection = open_connection(store)
    except StoreError:
        return
    try:
        with write_transaction(connection, retry_seconds=5.0) as db:
            if value is None:
                db.execute("DELETE FROM state_meta WHERE key = ?", (LAST_FAILURE_KEY,))
            else:
                db.execute(
                    "INSERT INTO state_meta(key, value) VALUES (?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (LAST_FAILURE_KEY, value),
                )
    except (StoreError, sqlite3.Error) as error:
        _log().warning("hermes: could not record the backup's outcome: %s", error)
    finally:
        connection.close()


def rolling_backups_for(url: str, config: Any) -> RollingBackups | None:
    """Rolling backups of the store at ``url`` for a long-lived process that keeps its own
    connections (the gateway): None for another backend, a store that cannot be written
    here, or when ``store.backups.*`` turn them off. The caller stops it."""
    from .backends import SQLITE_SCHEME, sqlite_path, url_scheme
    from .failures import write_refusal

    if url_scheme(url) != SQLITE_SCHEME:
        return None
    path = sqlite_path(url)
    settings = BackupSettings.from_config(config)
    if not settings.enabled or write_refusal(path) is not None:
        return None
    return RollingBackups(path, settings)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
