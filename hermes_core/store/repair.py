"""``hermes sessions repair`` on a SQLite store: check it, fix in place what drifted, or
salvage a damaged file into a new store (with what a rolling backup can add back).

The steps, each its own function so the command line can ask in between:

1. :func:`inspect` — what state the file is in, changing nothing: missing, not a file, empty,
   made by a newer Hermes (:class:`~.errors.StoreTooNew`, raised), another program's database
   (:class:`~.errors.NotASessionStore`, raised), or open and checked — ``integrity_check``,
   the full-text indexes (FTS5's ``integrity-check`` is a write, so a store that cannot be
   written gets the read-only checks and is told which could not run), and the sessions'
   counters against their messages. Verdict: healthy, fixable in place, or damaged.
2. :func:`fix_in_place` — a backup beside the store (SQLite's backup API), then ``REINDEX``
   for index entries out of step, the full-text indexes rebuilt, counters recomputed; each in
   a write transaction, so a running gateway or chat may stay up.
3. :func:`salvage_store` — for damage SQLite cannot read through: every readable row goes into
   a new store (see :mod:`.salvage`), built beside the damaged file under a temporary name.
   It refuses while another process holds the store (:mod:`.holders`): the file is about to
   be replaced under it. The result can take what a backup holds of what the damage took
   (:meth:`Salvaged.merge_backup`), or become a copy of the backup
   (:meth:`Salvaged.use_backup`); :meth:`Salvaged.install` then keeps the damaged file (and
   its ``-wal``) as ``state.db.damaged-<time>`` — never deleted — and puts the new store in
   its place; :meth:`Salvaged.discard` drops it, changing nothing.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import os
import re
import sqlite3
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hermes_core.files import fsync_directory

from . import counters, fulltext
from .connection import (
    SQLITE_HEADER,
    holds_open,
    not_a_session_store,
    open_connection,
    open_reader,
    read_only_uri,
    write_transaction,
)
from .errors import (
    NotASessionStore,
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreTooNew,
    StoreUnavailable,
)
from .failures import read_only_error, shown, store_error, write_refusal
from .holders import HoldersUnknown, other_holders
from .salvage import SalvageReport, Trace, salvage
from .schema import SCHEMA_VERSION, migrate, too_new_message

DAMAGED_SUFFIX = ".damaged-"
SALVAGE_SUFFIX = ".salvage-"

_INDEX_PROBLEM = re.compile(
    r"^(row \d+ missing from index \S+|wrong # of entries in index \S+|"
    r"non-unique entry in index \S+)$"
)
"""``integrity_check`` lines that ``REINDEX`` cures (the table's rows are intact)."""


class RepairRefused(StoreError):
    """The store is left as it is, for the reason given (in use, not a file…)."""


class StoreInUse(RepairRefused):
    """Another process holds the store open: replacing the file now would lose its writes."""


@dataclass
class Inspection:
    """What :func:`inspect` found. ``state`` is one of ``missing``, ``empty``, ``healthy``,
    ``fixable`` (problems :func:`fix_in_place` cures), ``damaged`` (salvage needed)."""

    path: Path
    state: str
    problems: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    """Checks that could not run here (a read-only store)."""
    read_only: StoreError | None = None
    """Why the store cannot be written here, when it cannot."""
    index_problems: bool = False
    fulltext_problem: bool = False
    drift: list[counters.Drift] = field(default_factory=list)


def inspect(path: Path) -> Inspection:
    """Check the store at ``path``, changing nothing. Raises :class:`StoreTooNew`,
    :class:`NotASessionStore` and :class:`RepairRefused` (not a regular file)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return Inspection(path, "missing")
    except OSError as error:
        raise RepairRefused(f"{shown(path)}: cannot look at it ({error.strerror})") from error
    if stat.S_ISDIR(info.st_mode):
        raise RepairRefused(f"{shown(path)} is a folder, not a session store; nothing was changed")
    if not stat.S_ISREG(info.st_mode):
        raise RepairRefused(
            f"{shown(path)} is not a regular file, not a session store; nothing was changed"
        )
    refusal = write_refusal(path)
    if info.st_size == 0:
        return Inspection(path, "empty", ["the file is empty (0 bytes): it holds no sessions"])
    _check_header(path)
    try:
        connection = _open_for_checks(path, refusal)
    except (StoreTooNew, NotASessionStore):
        raise
    except StoreDamaged as error:
        return Inspection(path, "damaged", [_damage(error)], read_only=refusal)
    except (StoreUnavailable, StoreFull, StoreReadOnly) as error:
        return Inspection(path, "damaged", [f"cannot be opened: {error}"], read_only=refusal)
    try:
        found = _check(connection, path)
    finally:
        connection.close()
    found.read_only = getattr(connection, "write_refusal", None) or refusal
    return found


def _check_header(path: Path) -> None:
    """Refuse another program's database, or a store made by a newer Hermes, from the file's
    header — before SQLite opens it (this process holds no connection on it yet)."""
    if holds_open(path):
        return
    try:
        with path.open("rb") as file:
            header = file.read(100)
    except OSError as error:
        raise RepairRefused(f"{shown(path)}: cannot read it ({error.strerror})") from error
    if len(header) < 100 or not header.startswith(SQLITE_HEADER):
        return  # damage: SQLite says so when it opens it
    schema_cookie = int.from_bytes(header[40:44], "big")
    user_version = int.from_bytes(header[60:64], "big")
    if user_version > SCHEMA_VERSION:
        raise StoreTooNew(too_new_message(user_version, path))
    if schema_cookie and not user_version:
        raise not_a_session_store(path)


def _open_for_checks(path: Path, refusal: StoreError | None) -> sqlite3.Connection:
    """A connection to check the store with: writable when the store can be written (the
    full-text check is a write), else read-only. Never migrates."""
    if refusal is None:
        try:
            connection = open_connection(path)
        except (StoreFull, StoreReadOnly) as refused:
            refusal = refused
        else:
            _refuse_too_new(connection, path)
            return connection
    connection = open_reader(path, refusal, leave_no_files=True)
    _refuse_too_new(connection, path)
    return connection


def _refuse_too_new(connection: sqlite3.Connection, path: Path) -> None:
    try:
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
    except BaseException:
        connection.close()
        raise
    if version > SCHEMA_VERSION:
        connection.close()
        raise StoreTooNew(too_new_message(version, path))


def _damage(error: BaseException) -> str:
    text = str(error)
    return f"damaged: {text.split(': ', 1)[-1] if ': ' in text else text}"


def _check(connection: sqlite3.Connection, path: Path) -> Inspection:
    found = Inspection(path, "healthy")
    try:
        rows = [str(row[0]) for row in connection.execute("PRAGMA integrity_check(100)")]
    except StoreDamaged as error:
        return Inspection(path, "damaged", [_damage(error)])
    if rows != ["ok"]:
        found.problems.extend(f"integrity: {row}" for row in rows)
        if not all(_INDEX_PROBLEM.match(row) for row in rows):
            found.state = "damaged"
            return found
        found.index_problems = True
    try:
        if getattr(connection, "write_refusal", None) is None:
            problem = fulltext.check(connection)
        else:
            problem = fulltext.check_read_only(connection)
            found.not_run.append(
                "whether the word index's entries match the messages' text (FTS5's "
                "integrity-check is a write)"
            )
        if problem:
            found.problems.append(problem)
            found.fulltext_problem = True
        found.drift = counters.find_drift(connection)
    except StoreDamaged as error:
        found.problems.append(_damage(error))
        found.state = "damaged"
        return found
    if found.drift:
        found.problems.append(counters.describe(found.drift))
    if found.problems:
        found.state = "fixable"
    return found


# ---------------------------------------------------------------------- fixing in place


@dataclass
class FixReport:
    """What :func:`fix_in_place` did."""

    backup: Path
    actions: list[str]
    remaining: list[str]
    """Problems still there afterwards (empty when the store is healthy now)."""


def fix_in_place(path: Path, found: Inspection) -> FixReport:
    """Back the store up beside itself, then cure what ``found`` lists (it must be
    ``fixable``) in write transactions, and check again."""
    from .maintenance import backup_files

    connection = open_connection(path)
    try:
        backup = backup_files(connection, path)  # before anything changes, an upgrade too
        migrate(connection)
        actions: list[str] = []
        if found.index_problems:
            connection.execute("REINDEX")
            actions.append("rebuilt the table indexes (REINDEX)")
        if found.fulltext_problem or found.index_problems:
            with write_transaction(connection):
                fulltext.rebuild(connection)
            actions.append("rebuilt the full-text indexes from the messages")
        if found.drift:
            with write_transaction(connection):
                changed = counters.recount(connection, [d.session_id for d in found.drift])
            actions.append(f"recounted the messages and tool calls of {changed} session(s)")
        after = _check(connection, path)
    finally:
        connection.close()
    return FixReport(backup, actions, after.problems)


# ---------------------------------------------------------------------- salvage


@dataclass
class Salvaged:
    """A new store built from a damaged one, not yet in its place."""

    path: Path
    """The store being repaired."""
    built: Path
    """The new store, beside it under a temporary name."""
    stamp: str
    report: SalvageReport
    trace: Trace
    """What the damaged file showed of its sessions and messages (for merging a backup)."""
    added_from_backup: tuple[int, int] | None = None
    """(sessions, messages) a merge added back, once merged."""
    replaced_by_backup: bool = False

    def merge_backup(self, backup: Path) -> tuple[int, int]:
        """Add what ``backup`` holds that the damage took: its sessions the damaged file
        still showed a trace of (or every one it does not contradict, when the file's
        record of its sessions was lost too), and the messages of kept sessions that are
        missing. Returns (sessions, messages) added."""
        from .backup_merge import merge

        connection = open_connection(self.built)
        try:
            added = merge(connection, backup, self.trace)
            _single_file(connection)
        finally:
            connection.close()
        self.added_from_backup = added
        return added

    def use_backup(self, backup: Path) -> None:
        """Make the new store a copy of ``backup`` instead of the salvage."""
        _remove_store_files(self.built)
        copy_backup(backup, self.built)
        self.replaced_by_backup = True

    def discard(self) -> None:
        """Remove the new store; nothing else was changed."""
        _remove_store_files(self.built)

    def install(self) -> Path | None:
        """Keep the damaged file as ``<name>.damaged-<time>`` (with its ``-wal``) and put
        the new store in its place; returns where the damaged file is kept (None when there
        was no file). Refuses, removing the new store, when another process opened the
        store meanwhile."""
        try:
            _refuse_holders(self.path)
        except BaseException:
            self.discard()
            raise
        kept: Path | None = None
        if self.path.exists():
            kept = self.path.with_name(f"{self.path.name}{DAMAGED_SUFFIX}{self.stamp}")
            _keep(self.path, kept)
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.path}{suffix}")
        os.replace(self.built, self.path)
        fsync_directory(self.path.parent)
        return kept


def salvage_store(path: Path) -> Salvaged:
    """Build a new store from what is readable in the damaged store ``path`` (which may also
    be missing or empty: the new store is then empty, for a backup to fill). Raises
    :class:`StoreInUse` while another process holds it, the store's errors when the new
    store cannot be written (nothing is left behind)."""
    _refuse_holders(path)
    folder = path.parent
    if not os.access(folder, os.W_OK):
        raise read_only_error(path)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    built = path.with_name(f"{path.name}{SALVAGE_SUFFIX}{stamp}")
    _remove_store_files(built)
    try:
        if path.exists() and path.stat().st_size > 0:
            report, trace = salvage(path, built)
        else:
            report, trace = _empty_store(built), Trace()
        connection = open_connection(built)
        try:
            _single_file(connection)
        finally:
            connection.close()
    except BaseException as error:
        _remove_store_files(built)
        if isinstance(error, OSError):
            error = store_error(error, built)
        if isinstance(error, StoreFull):
            raise StoreFull(
                f"the disk holding {shown(path)} is full: there is no room for the new store; "
                "nothing was changed (free some space and try again)"
            ) from error
        raise error
    return Salvaged(path, built, stamp, report, trace)


def salvage_estimate(path: Path) -> SalvageReport:
    """What a salvage of ``path`` would keep, built in a temporary folder and thrown away
    (for ``--check-only``: the store and its folder are not touched)."""
    with tempfile.TemporaryDirectory(prefix="hermes-salvage-") as scratch:
        report, _trace = salvage(path, Path(scratch) / "estimate.db")
    return report


def copy_backup(backup: Path, target: Path) -> None:
    """Copy ``backup`` into a new store at ``target`` through SQLite's backup API (the
    backup file is only read), upgraded to this schema version."""
    try:
        source = sqlite3.connect(read_only_uri(backup, immutable=True), uri=True)
    except sqlite3.Error as error:
        raise store_error(error, backup) from error
    try:
        version = int(source.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreTooNew(too_new_message(version, backup))
        destination = open_connection(target)
        try:
            source.backup(destination, pages=-1)
            migrate(destination)
            _single_file(destination)
        finally:
            destination.close()
    except sqlite3.Error as error:
        raise store_error(error, target) from error
    finally:
        source.close()


def check_installed(path: Path) -> list[str]:
    """The problems of the store now at ``path`` (empty when healthy)."""
    connection = open_connection(path)
    try:
        migrate(connection)
        return _check(connection, path).problems
    finally:
        connection.close()


def _empty_store(target: Path) -> SalvageReport:
    connection = open_connection(target)
    try:
        migrate(connection)
    finally:
        connection.close()
    return SalvageReport()


def _single_file(connection: sqlite3.Connection) -> None:
    """Fold the new store's write-ahead log into its file, so renaming the one file moves
    all of it (the next process to open it switches back to WAL)."""
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.execute("PRAGMA journal_mode = DELETE")


def _refuse_holders(path: Path) -> None:
    try:
        holders = other_holders(path)
    except HoldersUnknown:
        return
    if holders:
        who = ", ".join(str(holder) for holder in holders)
        raise StoreInUse(
            f"{shown(path)} is open in another process ({who}): stop it (a running "
            "gateway or chat) and try again; nothing was changed"
        )


def _keep(path: Path, kept: Path) -> None:
    """Give the damaged file (and its write-ahead log) a second name that stays: a hard
    link, so the store's own name never points at nothing; a rename where links fail."""
    for source, target in ((path, kept), (Path(f"{path}-wal"), Path(f"{kept}-wal"))):
        if not source.exists():
            continue
        try:
            os.link(source, target)
        except OSError as error:
            if error.errno not in (errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EXDEV):
                raise store_error(error, path) from error
            os.rename(source, target)


def _remove_store_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
