"""``SessionStore``: the one public way to read and write sessions.

The command line, the gateway and any agent runtime record sessions through this facade;
nothing else writes SQL against ``state.db``. One instance holds one connection and is meant
for one thread (the automatic-title worker opens its own). It is the built-in SQLite backend
of :class:`~hermes_core.store.protocol.Store`; the engines' many small reads go through its
facets ``search_index``, ``lifecycle``, ``imports``, ``routing`` and ``handoffs``.

Every write that starts or ends a session fires the plugin events, whatever its origin:
``create_session``, ``end_session``, ``continue_after_compression``, imports and restores
(through ``imports``), and deleting a session that was still open (``session_ended`` with
reason ``deleted``). Prune and archive touch ended sessions only and fire nothing.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_hookspecs import Message, StoreEvents

from . import fulltext, rowwrites
from .connection import (
    BackgroundMaintenance,
    open_connection,
    open_reader,
    write_transaction,
)
from .errors import StoreError, StoreFull, StoreReadOnly
from .facade import StoreFacade
from .failures import store_error, write_refusal
from .schema import check_readable_schema, migrate
from .statements import SqliteSql

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter

    from .autotitle import TitleJob
    from .backups import BackupSettings, RollingBackups
    from .handoffs import HandoffRegistry
    from .import_bookkeeping import SqliteImportBookkeeping
    from .imports import WholeSession
    from .insight_rows import InsightRows
    from .lifecycle_queries import SqliteLifecycle
    from .maintenance import StoreStats
    from .routed_sessions import RoutingStore
    from .search_queries import SqliteSearchIndex

STATE_DB_NAME = "state.db"

SessionEvents = StoreEvents
"""What the store tells the outside world (the plugin host implements it)."""


class SessionStore(StoreFacade):
    """Sessions and their messages in ``$HERMES_HOME/state.db`` (the session facade itself:
    :class:`~.facade.StoreFacade`; this class gives it SQLite's primitives)."""

    def __init__(
        self,
        path: Path | str,
        *,
        events: SessionEvents | None = None,
        write_lock: threading.Lock | None = None,
    ) -> None:
        """Open the store at ``path``. Threads of one process that each open their own store
        on the same file may share a ``write_lock`` so their writes queue without SQLite's
        sleeping busy handler."""
        self.path = Path(path)
        self._events = events
        self._connection = _open_and_migrate(self.path, write_lock)
        self._sql = SqliteSql(self._connection)
        self._title_threads: list[TitleJob] = []
        self._backups: RollingBackups | None = None
        self._maintenance: BackgroundMaintenance | None = None
        if not self.read_only:
            # Checkpoints and index merges run off the writer's thread (see
            # BackgroundMaintenance), which shares the writer's lock of this process.
            self._connection.execute("PRAGMA wal_autocheckpoint = 0")
            lock = getattr(self._connection, "write_lock", None)
            if lock is None:
                lock = threading.Lock()
                self._connection.write_lock = lock  # type: ignore[attr-defined]
            self._maintenance = BackgroundMaintenance(self.path, lock)

    # The facets are made on first use: a chat start needs none of their modules.

    @cached_property
    def search_index(self) -> SqliteSearchIndex:
        """The reads of ``session_search`` and the browse picker."""
        from .search_queries import SqliteSearchIndex

        return SqliteSearchIndex(self._connection)

    @cached_property
    def lifecycle(self) -> SqliteLifecycle:
        """What prune, archive and the automatic clean-up read and write."""
        from .lifecycle_queries import SqliteLifecycle

        return SqliteLifecycle(self._connection, self.path)

    @cached_property
    def imports(self) -> SqliteImportBookkeeping:
        """Import writes and bookkeeping (their sessions fire the plugin events)."""
        from .import_bookkeeping import SqliteImportBookkeeping

        return SqliteImportBookkeeping(self._connection, self._events)

    @cached_property
    def routing(self) -> RoutingStore:
        """The routing table: the gateway's routed sessions, recovery reads, home channels
        and repair, and the raw rows migrate and imports copy."""
        from .routed_sessions import RoutingStore

        return RoutingStore(self)

    @cached_property
    def handoffs(self) -> HandoffRegistry:
        """The ``/handoff`` registry and what ``/sethome`` knew of the home channel."""
        from .handoffs import HandoffRegistry

        return HandoffRegistry(self._connection)

    @classmethod
    def open(cls, home: Path | str, *, events: SessionEvents | None = None) -> SessionStore:
        """Open (creating if needed) the store of the Hermes home directory ``home``."""
        return cls(Path(home) / STATE_DB_NAME, events=events)

    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying connection, for the store's own modules and SQLite-level tests
        (engines use the typed methods and facets: another backend has no connection)."""
        return self._connection

    @property
    def url(self) -> str:
        """Where this store lives, as a ``store.url``."""
        return f"sqlite:///{self.path}"

    @property
    def read_only(self) -> bool:
        """True when the store was opened for reading only: its file, folder or disk cannot
        be written (a read-only mount, an immutable file, a full disk). Every write then
        raises :class:`~.errors.StoreReadOnly` (or :class:`~.errors.StoreFull`)."""
        return getattr(self._connection, "write_refusal", None) is not None

    def require_writable(self) -> None:
        """Raise what a write would raise when the store is read-only (commands that would
        write much, such as the gateway, refuse at start rather than at their first write)."""
        refusal = getattr(self._connection, "write_refusal", None)
        if refusal is not None:
            raise type(refusal)(str(refusal))

    def start_backups(self, settings: BackupSettings) -> None:
        """Take rolling backups of the store while it is open (see :mod:`.backups`): now if
        one is due, then whenever the interval has passed, each copy made by a process of its
        own that nobody waits for. Nothing for a read-only store or when ``settings`` turn
        them off."""
        if self.read_only or not settings.enabled or self._backups is not None:
            return
        from .backups import RollingBackups

        self._backups = RollingBackups(self.path, settings)

    def close(self) -> None:
        """Wait briefly for automatic titles in flight, then close the connection."""
        self.wait_for_titles(timeout=5.0)
        if self._backups is not None:
            self._backups.stop()
            self._backups = None
        if self._maintenance is not None:
            self._maintenance.stop()
        self._connection.close()

    # ------------------------------------------------------------------ SQLite's primitives

    def _transaction(self) -> AbstractContextManager[object]:
        return write_transaction(self._connection)

    def _where(self, selection: SessionFilter) -> tuple[str, list[object]]:
        from .selection_sql import build_where

        return build_where(selection)

    def _unindex_messages(self, where: str, params: Sequence[object]) -> None:
        """The FTS tables hold the messages' words apart from their rows."""
        fulltext.unindex_messages(self._connection, where, params)

    def _insert_messages(
        self, session_id: str, batch: Sequence[Message], input_tokens: int, output_tokens: int
    ) -> range:
        inserted = rowwrites.insert_messages(self._connection, session_id, batch, time.time())
        self._connection.execute(
            "UPDATE sessions SET message_count = message_count + ?, "
            "tool_call_count = tool_call_count + ?, "
            "input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
            "last_active_at = max(last_active_at, ?) WHERE id = ?",
            (
                len(batch),
                inserted.tool_calls,
                input_tokens,
                output_tokens,
                inserted.last_timestamp,
                session_id,
            ),
        )
        return inserted.ids

    def _insight_rows(self, where: str, params: Sequence[object]) -> InsightRows:
        from .insights import insight_rows

        return insight_rows(self._connection, where, params)

    def _title_worker_store(self) -> SessionStore:
        """The store file opened once more, on a connection of the worker's own."""
        return SessionStore(self.path)

    # ------------------------------------------------------------------ what SQLite says its way

    def previews(self, session_ids: Sequence[str], *, length: int = 200) -> dict[str, str]:
        """The start of each session's first user message (what listings show)."""
        from .search_queries import PREVIEW_BYTES_SQL, preview_text

        found: dict[str, str] = {}
        for session_id in session_ids:
            row = self._connection.execute(
                f"SELECT {PREVIEW_BYTES_SQL} FROM messages WHERE session_id = ? AND role = 'user' "
                "ORDER BY id LIMIT 1",
                (length, session_id),
            ).fetchone()
            text = preview_text(row[0], length) if row else None
            found[session_id] = " ".join(text.split()) if text else ""
        return found

    def add_whole_sessions(self, sessions: Iterable[WholeSession]) -> list[str]:
        """Store finished sessions with their messages, many per transaction (the bulk path:
        see :func:`.imports.write_whole_sessions`); returns their ids. No events fire."""
        from .imports import write_whole_sessions

        return write_whole_sessions(self._connection, sessions)

    def update_message_content(self, message_id: int, content: str) -> None:
        """Replace a message's text, keeping the indexes in step."""
        with write_transaction(self._connection) as db:
            row = db.execute("SELECT role FROM messages WHERE id = ?", (message_id,)).fetchone()
            if row is None:
                raise KeyError(f"no message {message_id}")
            fulltext.unindex_messages(db, "id = ?", [message_id])
            db.execute("UPDATE messages SET content = ? WHERE id = ?", (content, message_id))
            runs = fulltext.cjk_runs(content)
            fulltext.index_new_messages(
                db, message_id, message_id, [(message_id, runs)] if runs else []
            )

    def backup(self) -> Path:
        """Copy the store beside itself through SQLite's backup API, named with the time;
        returns the copy's path (made before a repair changes anything)."""
        from .maintenance import backup_files

        return backup_files(self._connection, self.path)

    def stats(self) -> StoreStats:
        """Counts and size for ``hermes sessions stats``."""
        from .maintenance import collect_stats

        return collect_stats(self._connection, self.path)


def _open_and_migrate(path: Path, write_lock: threading.Lock | None) -> sqlite3.Connection:
    """The store's connection, its schema brought up to date. A store that cannot be written
    here (see :func:`~.failures.write_refusal`; or a disk too full to open it for writing) is
    opened for reading: reading commands still work, writes are refused in one line."""
    refusal: StoreError | None = write_refusal(path)
    if refusal is None:
        try:
            connection = open_connection(path, write_lock=write_lock)
        except (StoreFull, StoreReadOnly) as refused:
            refusal = refused
        else:
            try:
                with _closed_on_failure(connection, path):
                    migrate(connection)
                    connection.execute("SELECT count(*) FROM sessions LIMIT 1").fetchone()
            except (StoreFull, StoreReadOnly) as refused:
                refusal = refused
            else:
                return connection
    connection = open_reader(path, refusal)
    with _closed_on_failure(connection, path):
        check_readable_schema(connection, refusal)
        connection.execute("SELECT count(*) FROM sessions LIMIT 1").fetchone()
    return connection


@contextmanager
def _closed_on_failure(connection: sqlite3.Connection, path: Path) -> Iterator[None]:
    """Close ``connection`` when the block fails; an SQLite error leaves as the store's own
    (a damaged or unreadable file: one line)."""
    try:
        yield
    except sqlite3.Error as error:
        connection.close()
        raise store_error(error, path) from error
    except BaseException:
        connection.close()
        raise
