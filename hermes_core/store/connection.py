"""Opening the SQLite file with the settings every connection needs, and write transactions.

WAL gives many readers and one writer; ``synchronous=NORMAL`` is crash-safe in WAL mode (a
power cut may lose the last commits, never corrupt the file). Writes take the write lock up
front with ``BEGIN IMMEDIATE`` and retry a bounded number of times when another process holds
it, so "database is locked" does not reach callers under ordinary contention.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import (
    NotASessionStore,
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreUnavailable,
)
from .failures import FAILURE_CODES, primary_code, store_error
from .unicode_repair import storable_parameters

BUSY_TIMEOUT_MS = 5_000
WRITE_RETRY_SECONDS = 60.0
"""How long a write keeps retrying a busy store before giving up with a clear error."""


def _translated(error: sqlite3.Error, path: Path | None) -> BaseException:
    """What to raise for ``error``: the store's own class when it says something about the
    disk or the file (full, read-only, damaged, I/O), else ``error`` itself (a busy lock, a
    query the full-text index refuses, a constraint: the callers handle those)."""
    if primary_code(error) in FAILURE_CODES:
        return store_error(error, path or Path("state.db"))
    return error


class StoreCursor(sqlite3.Cursor):
    """A cursor whose failures of the disk or the file come out as the store's errors (DESIGN
    §9), wherever they happen: running a statement or stepping through its rows (a damaged
    page is often found only while reading)."""

    def _path(self) -> Path | None:
        return getattr(self.connection, "store_path", None)

    def execute(self, sql: str, parameters: Any = (), /) -> StoreCursor:
        try:
            try:
                super().execute(sql, parameters)
            except UnicodeEncodeError:
                # A lone surrogate fails before the statement runs: repaired and run once more.
                super().execute(sql, storable_parameters(parameters))
        except sqlite3.Error as error:
            raise _translated(error, self._path()) from error
        return self

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> StoreCursor:
        rows = _LastRow(parameters)
        try:
            while True:
                try:
                    super().executemany(sql, rows)
                    break
                except UnicodeEncodeError:
                    # Binding a row with a lone surrogate fails before that row runs; the
                    # rows before it are written (once). It runs repaired, then the rest.
                    repaired = storable_parameters(rows.last)
                    if repaired is rows.last:
                        raise  # not a binding failure: the caller's rows raised it
                    super().execute(sql, repaired)
        except sqlite3.Error as error:
            raise _translated(error, self._path()) from error
        return self

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as error:
            raise _translated(error, self._path()) from error

    def fetchmany(self, size: int | None = None) -> list[Any]:
        try:
            return super().fetchmany(self.arraysize if size is None else size)
        except sqlite3.Error as error:
            raise _translated(error, self._path()) from error

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as error:
            raise _translated(error, self._path()) from error

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as error:
            raise _translated(error, self._path()) from error


class _LastRow:
    """An iterator over ``executemany``'s rows that remembers the last row it gave.

    Text is bound as it is: checking every value of every row for lone surrogates first cost
    more than a third of a bulk load's Python time, for rows that almost never hold one. When
    one does, binding it raises ``UnicodeEncodeError`` and ``StoreCursor.executemany`` runs
    that row repaired and goes on with the rest."""

    __slots__ = ("_rows", "last")

    def __init__(self, rows: Iterable[Any]) -> None:
        self._rows = iter(rows)
        self.last: Any = None

    def __iter__(self) -> _LastRow:
        return self

    def __next__(self) -> Any:
        self.last = next(self._rows)
        return self.last


class StoreConnection(sqlite3.Connection):
    """A connection the store opened on its file, counted in this process's register of
    open store files (see :data:`_open_files`) until it is closed.

    Its statements run on :class:`StoreCursor`: what SQLite raises about the disk or the file
    reaches callers as the store's errors. Its write transactions also take the lock shared
    with the other connections of this process (``write_lock``), when one is given: threads
    that each have their own connection (the gateway's workers) then queue for the write lock
    in Python, handed over at once, instead of in SQLite's busy handler, which sleeps in steps
    of milliseconds."""

    write_lock: threading.Lock | None = None
    store_path: Path | None = None
    """The file this connection is on (for the store's error messages)."""
    write_refusal: StoreError | None = None
    """Why this connection may only read (a read-only or full disk): raised, as a new error
    of the same class and message, by every write transaction."""
    _file_key: tuple[int, int] | None = None

    def cursor(self, factory: Any = StoreCursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> StoreCursor:
        cursor: StoreCursor = self.cursor()
        return cursor.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> StoreCursor:
        cursor: StoreCursor = self.cursor()
        return cursor.executemany(sql, parameters)

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        try:
            return super().executescript(script)
        except sqlite3.Error as error:
            raise _translated(error, self.store_path) from error

    def close(self) -> None:
        super().close()  # counted until really closed: no header read meanwhile
        with _open_files_lock:
            key, self._file_key = self._file_key, None
            if key is not None:
                _open_files[key] -= 1
                if _open_files[key] <= 0:
                    del _open_files[key]
                    _open_paths.pop(key, None)


_open_files: dict[tuple[int, int], int] = {}
"""How many store connections this process holds on each file, by (device, inode).

While one is open, nothing in this process may open and close the file by path: closing any
descriptor of a file drops every POSIX lock the process holds on it, SQLite's included, and
another process could then believe it is the last one, checkpoint, and delete the WAL under
this one (SQLite's "How To Corrupt An SQLite Database File", §2.2)."""
_open_paths: dict[tuple[int, int], Path] = {}
"""The path each file of :data:`_open_files` was first opened by (to find its ``-wal`` and
``-shm``)."""
_open_files_lock = threading.Lock()


def _file_key(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _connect(path: Path, *, uri: str | None = None) -> StoreConnection:
    """``sqlite3.connect`` under the register's lock, counted in it.

    A file this process does not hold open yet has its header read by path first (a foreign
    schema is refused before SQLite may touch it); one it already holds is never opened by
    path again — its header was checked when the first connection was made."""
    with _open_files_lock:
        key = _file_key(path)
        if uri is None and (key is None or key not in _open_files):
            _refuse_foreign_file(path)
        connection = sqlite3.connect(
            uri or path,
            uri=uri is not None,
            isolation_level=None,
            check_same_thread=False,
            factory=StoreConnection,
        )
        assert isinstance(connection, StoreConnection)
        connection.store_path = path
        key = key or _file_key(path)
        if key is not None:
            connection._file_key = key
            _open_files[key] = _open_files.get(key, 0) + 1
            _open_paths.setdefault(key, path)
        return connection


def holds_open(path: Path) -> bool:
    """Whether this process holds a store connection on ``path`` (tests, diagnostics)."""
    key = _file_key(path)
    with _open_files_lock:
        return key is not None and key in _open_files


STORE_FILE_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""The database file and the files SQLite keeps beside it."""


def held_store_file(path: Path) -> bool:
    """Whether ``path`` is one of the files of a store this process holds a connection on:
    the database itself, its ``-wal``, ``-shm`` or ``-journal`` (by device and inode, so any
    name or link of it counts). Such a file must not be opened by path here (see
    :data:`_open_files`): code that would hand a path to a plugin or write over it asks
    first. Only ``stat`` is used."""
    key = _file_key(path)
    if key is None:
        return False
    with _open_files_lock:
        if key in _open_files:
            return True
        held = list(_open_paths.values())
    return any(
        _file_key(Path(f"{store}{suffix}")) == key
        for store in held
        for suffix in STORE_FILE_SUFFIXES[1:]
    )


def held_store_files() -> frozenset[tuple[int, int]]:
    """(device, inode) of every file of every store this process holds a connection on — the
    database, its ``-wal``, ``-shm`` and ``-journal`` — as of now: checking many paths
    (``import --all`` over thousands of logs) with :func:`is_held_file` costs one ``stat``
    each instead of one per held file."""
    with _open_files_lock:
        keys = set(_open_files)
        held = list(_open_paths.values())
    for store in held:
        for suffix in STORE_FILE_SUFFIXES[1:]:
            key = _file_key(Path(f"{store}{suffix}"))
            if key is not None:
                keys.add(key)
    return frozenset(keys)


def is_held_file(path: Path, held: frozenset[tuple[int, int]]) -> bool:
    """Whether ``path`` is one of ``held`` (a :func:`held_store_files` snapshot); one ``stat``."""
    key = _file_key(path)
    return key is not None and key in held


def read_only_uri(path: Path, *, immutable: bool = False) -> str:
    """The URI that opens ``path`` read-only (any character of the path quoted); with
    ``immutable``, SQLite also skips locks and the write-ahead log (see :func:`open_reader`)."""
    return path.absolute().as_uri() + ("?immutable=1" if immutable else "?mode=ro")


def open_reader(
    path: Path, refusal: StoreError, *, leave_no_files: bool = False
) -> StoreConnection:
    """Open a store that cannot be written here (``refusal`` says why) for reading.

    SQLite reads a WAL-mode file read-only when its ``-wal`` and ``-shm`` files exist or can
    be made. On a read-only mount or a full disk they often cannot; then the file is opened
    *immutable* (no locks, no log) — complete only when the write-ahead log is empty or
    gone, so a non-empty log that cannot be read is refused instead of being ignored.
    ``leave_no_files``: when neither ``-wal`` nor ``-shm`` exists (no process has the store
    open, nothing is in a log), open it immutable at once, so no empty ``-wal``/``-shm`` is
    left beside a file that cannot be written (``repair --check-only``)."""
    if not path.exists():
        raise refusal
    companions = (Path(f"{path}-wal"), Path(f"{path}-shm"))
    if leave_no_files and not any(companion.exists() for companion in companions):
        try:
            connection = _connect(path, uri=read_only_uri(path, immutable=True))
        except sqlite3.Error as failure:
            raise store_error(failure, path) from failure
        return _as_reader(connection, path, refusal)
    try:
        connection = _connect(path, uri=read_only_uri(path))
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except BaseException:
            connection.close()
            raise
    except (sqlite3.OperationalError, StoreUnavailable, StoreFull, StoreReadOnly) as error:
        if isinstance(error, StoreDamaged):
            raise
        if wal_bytes(path):
            raise type(refusal)(
                f"{refusal}; and its write-ahead log cannot be read from here ({error})"
            ) from error
        try:
            connection = _connect(path, uri=read_only_uri(path, immutable=True))
        except sqlite3.Error as failure:
            raise store_error(failure, path) from failure
    return _as_reader(connection, path, refusal)


def _as_reader(connection: StoreConnection, path: Path, refusal: StoreError) -> StoreConnection:
    """``connection`` marked read-only for ``refusal``, once the file is known to be a
    session store (else closed: a failed open must not stay counted, see _open_files)."""
    connection.write_refusal = refusal
    try:
        _refuse_foreign_schema(connection, path)
    except BaseException as error:
        connection.close()
        if isinstance(error, sqlite3.Error):
            raise store_error(error, path) from error
        raise
    return connection


def open_connection(
    path: Path, *, read_only: bool = False, write_lock: threading.Lock | None = None
) -> sqlite3.Connection:
    """Open ``path`` (creating it 0600 unless ``read_only``) with the store's settings;
    ``write_lock`` is taken around every write transaction (see StoreConnection)."""
    connection: StoreConnection | None = None
    try:
        if read_only:
            connection = _connect(path, uri=read_only_uri(path))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            _create_private_file(path)
            connection = _connect(path)
            connection.write_lock = write_lock
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not read_only:
            # Before the first write: the WAL switch and the migrations must never touch
            # another program's database (its schema may sit in a WAL the header misses).
            _refuse_foreign_schema(connection, path)
            mode = _enable_wal(connection)
            if mode.lower() != "wal":
                raise StoreUnavailable(f"{path}: cannot enable WAL journal mode (got {mode})")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("PRAGMA journal_size_limit = 67108864")
        connection.execute("PRAGMA cache_size = -16384")
    except BaseException as error:
        if connection is not None:
            connection.close()  # a failed open must not stay counted (see _open_files)
        if isinstance(error, sqlite3.Error | OSError):
            raise store_error(error, path) from error
        raise
    return connection


SQLITE_HEADER = b"SQLite format 3\x00"


def not_a_session_store(path: Path) -> NotASessionStore:
    return NotASessionStore(
        f"{path}: not a Hermes sessions store — another program's SQLite database (a Hermes "
        "Agent state.db?), left untouched; use another home (--home, HERMES_HOME, store.url), "
        "or import it with 'hermes sessions import --from hermes-agent PATH'"
    )


def _refuse_foreign_file(path: Path) -> None:
    """Refuse, without SQLite opening it, an SQLite file whose header says another program
    made it: a schema (schema cookie, offset 40) but no store schema version (user_version,
    offset 60). This store sets its version in the transaction that creates its first tables.

    Reads the file by path: only ever called, under the register's lock, while this process
    holds no connection on the file (see :data:`_open_files`)."""
    try:
        with path.open("rb") as file:
            header = file.read(100)
    except FileNotFoundError:
        return
    if len(header) < 100 or not header.startswith(SQLITE_HEADER):
        return  # empty (new) or not SQLite: opening reports it
    schema_cookie = int.from_bytes(header[40:44], "big")
    user_version = int.from_bytes(header[60:64], "big")
    if schema_cookie and not user_version:
        raise not_a_session_store(path)


def _refuse_foreign_schema(connection: sqlite3.Connection, path: Path) -> None:
    """The same rule asked of SQLite itself (it also sees a schema still in the WAL)."""
    if connection.execute("PRAGMA user_version").fetchone()[0]:
        return
    if connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None:
        connection.close()
        raise not_a_session_store(path)


def _enable_wal(connection: sqlite3.Connection) -> str:
    """Switch to WAL. On a brand-new file several processes may race to do it, and the switch
    needs an exclusive lock that SQLite's busy handler does not always wait for: retry."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return str(connection.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as error:
            if not _is_busy(error) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _create_private_file(path: Path) -> None:
    """Create the file with mode 0600 before SQLite opens it (SQLite would use 0644)."""
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(descriptor)


def _is_busy(error: sqlite3.OperationalError) -> bool:
    message = str(error).lower()
    return "locked" in message or "busy" in message


@contextlib.contextmanager
def write_transaction(
    connection: sqlite3.Connection, *, retry_seconds: float = WRITE_RETRY_SECONDS
) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error.

    Taking the lock can fail with "database is locked" when another process holds it past the
    busy timeout; that is retried with jittered back-off for up to ``retry_seconds``. Once the
    lock is held the body runs exactly once.
    """
    refusal = getattr(connection, "write_refusal", None)
    if refusal is not None:
        raise type(refusal)(str(refusal))
    lock = getattr(connection, "write_lock", None)
    if lock is not None:
        with lock:
            yield from _write_transaction(connection, retry_seconds)
        return
    yield from _write_transaction(connection, retry_seconds)


def _write_transaction(
    connection: sqlite3.Connection, retry_seconds: float
) -> Iterator[sqlite3.Connection]:
    path = getattr(connection, "store_path", None) or Path("state.db")
    deadline = time.monotonic() + retry_seconds
    while True:
        try:
            connection.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as error:
            if not _is_busy(error):
                raise store_error(error, path) from error
            if time.monotonic() >= deadline:
                raise StoreUnavailable(f"the session store stayed busy: {error}") from error
            import random  # only on contention: start-up time is a budget

            time.sleep(random.uniform(0.01, 0.1))
    try:
        yield connection
    except BaseException:
        _roll_back(connection)
        raise
    try:
        connection.execute("COMMIT")
    except StoreError:
        _roll_back(connection)  # the disk's or the file's doing (see StoreCursor)
        raise
    except sqlite3.Error as error:
        _roll_back(connection)
        raise store_error(error, path) from error


def _roll_back(connection: sqlite3.Connection) -> None:
    """End the failed transaction; a rollback that fails too (the disk is gone) changes
    nothing: SQLite rolls back on its own when the connection next reads or closes."""
    with contextlib.suppress(sqlite3.Error, StoreError):
        connection.execute("ROLLBACK")


WAL_CHECKPOINT_BYTES = 1 << 20
"""The background thread copies the write-ahead log back once it passes this size."""
WAL_CATCH_UP_ROUNDS = 20
"""How many checkpoints the background thread runs back to back while writes keep adding to
the log, before it waits for its next turn."""
MERGE_STEPS_PER_TURN = 200
"""How many index merge steps the background thread runs back to back before its next turn."""
MERGE_MIN_FREE_BYTES = 64 << 20
"""The background thread merges the index only while the store's disk has this much room: a
merge writes new segments before the old ones' pages are free again, and on a nearly full
disk that room is the writer's."""


def wal_bytes(path: Path) -> int:
    try:
        return os.stat(f"{path}-wal").st_size
    except OSError:
        return 0


class BackgroundMaintenance:
    """Checkpoints the write-ahead log and merges the word index off the writer's thread.

    SQLite's automatic checkpoint runs inside whichever commit crosses 1,000 WAL pages, with
    two fsyncs: about one single-message append in 150 paid several milliseconds for it. The
    store's writer turns the automatic checkpoint off and never checkpoints itself: this
    thread runs PASSIVE checkpoints (they never block readers or the writer) whenever the log
    has grown. The log starts again from its beginning (and stops growing) at the first write
    after a checkpoint that copied all of it; under a steady stream of writes one checkpoint
    never does — more was committed while it copied — so the thread runs them back to back
    (each has less to copy than the one before) until one copies everything, up to
    :data:`WAL_CATCH_UP_ROUNDS` per turn.

    FTS5's automatic merging is off too (schema 5): in the pauses between writes this thread
    merges the word index in small steps (:func:`.fulltext.merge_step`), each its own write
    transaction under the store's in-process ``write_lock``, so a writer of this process that
    arrives meanwhile waits for at most one step; not on a disk with less than
    :data:`MERGE_MIN_FREE_BYTES` free. Closing the store stops the thread; SQLite
    checkpoints once more when the last connection closes.
    """

    def __init__(self, path: Path, write_lock: threading.Lock, *, interval: float = 0.5) -> None:
        self._path = path
        self._write_lock = write_lock
        self._interval = interval
        self._seen_version: int | None = None
        self._merging = True  # an index left half-merged by an earlier process
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="hermes-store-maintenance", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        connection: StoreConnection | None = None
        try:
            while not self._stop.wait(self._interval):
                try:
                    if connection is None:
                        connection = _connect(self._path)
                        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                        connection.execute("PRAGMA synchronous = NORMAL")
                        connection.write_lock = self._write_lock
                    if wal_bytes(self._path) >= WAL_CHECKPOINT_BYTES:
                        self._catch_up(connection)
                    self._merge(connection)
                except (sqlite3.Error, StoreError):
                    # A full disk, a busy or damaged file: the writer hears of it on its
                    # own; try again at the next turn of the loop.
                    continue
        finally:
            if connection is not None:
                connection.close()

    def _catch_up(self, connection: StoreConnection) -> None:
        """Checkpoint until the whole log is in the database file, or another checkpointer
        (another process) holds it, or the rounds of this turn are spent."""
        for _ in range(WAL_CATCH_UP_ROUNDS):
            busy, logged, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if busy or copied >= logged or self._stop.is_set():
                return

    def _merge(self, connection: StoreConnection) -> None:
        """Merge steps while the index has work, in a quiet moment: only when nothing was
        written since the last turn (``data_version`` moves with every commit of another
        connection), stopping as soon as something is. A live agent writes in bursts (a
        turn), so merges fill the pauses between them; under a steady stream of writes they
        wait, and FTS5's own ``crisismerge`` keeps the number of segments bounded."""
        from . import fulltext  # not needed before the first turn: start-up time is a budget

        if _free_bytes(self._path) < MERGE_MIN_FREE_BYTES:
            return
        version = _data_version(connection)
        if version != self._seen_version:
            self._seen_version = version
            self._merging = True
            return
        for _ in range(MERGE_STEPS_PER_TURN):
            if not self._merging or self._stop.is_set():
                return
            with write_transaction(connection, retry_seconds=0) as db:
                self._merging = fulltext.merge_step(db)
            if _data_version(connection) != version:
                return  # a writer is at work: the next quiet turn goes on

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def _free_bytes(path: Path) -> int:
    """Room left for this process on the disk holding ``path`` (``statvfs``: the file is not
    opened)."""
    try:
        found = os.statvfs(path.parent)
    except OSError:
        return 0
    return found.f_bavail * found.f_frsize


def _data_version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA data_version").fetchone()[0])
