"""Importing one file end to end: bookkeeping first, the importer only when needed.

For each file the run stats it (one ``stat``), compares it with the bookkeeping loaded once
for the whole run, and then:

* unchanged (same size) → nothing is opened: "already imported as <id>";
* grown, with a cursor → the importer reads from the cursor; new turns are appended to the
  same session, and delegate transcripts not seen before are added;
* rewritten (shrunk, or grown without a cursor) → left alone and reported ("changed since
  its import"); deleting the session and the bookkeeping row (re-import after ``delete``) is
  the way to take the new version. Backups (snapshot sessions) are simply read again: their
  sessions are matched by id;
* interrupted (a crash left the mark ``importing``) → the partial session is deleted and the
  file imported again;
* new → imported; the file's first top-level session is the one its bookkeeping points to.

Errors reading a file become an ``unreadable`` outcome; the run goes on.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_hookspecs import ImportedSession, Importer, UnreadableRecords

from hermes_core.store.connection import held_store_file
from hermes_core.store.errors import StoreError
from hermes_core.store.imports import ImportFileRecord

from .conversations import append_to_conversation, store_new_conversation
from .databases import (
    DatabaseImport,
    database_stamp,
    database_untouched,
    is_database_importer,
    unchanged_database,
)
from .files import Change, FileStamp, backup_cursor, backup_size, compare, stamp_of
from .outcomes import FileOutcome, FileStatus, StoredSession
from .repairs import repaired_sessions
from .snapshots import restore_snapshot

if TYPE_CHECKING:
    from hermes_core.store.protocol import ImportBookkeeping, RoutingTable


RESTORING = "restoring:"
"""The cursor of a backup's ``importing`` row: the session being restored follows."""

OPEN_TAIL = "open-tail:"
"""The cursor of a file whose last messages were still being written (``open_tail``):
``open-tail:<id of the last settled message>:<the importer's cursor>``. The next import
removes the messages after that id and reads them again from the importer's cursor."""


def _stored_cursor(cursor: str | None, settled_id: int | None) -> str | None:
    """What the bookkeeping keeps for an importer's ``cursor``."""
    if cursor is None or settled_id is None:
        return cursor
    return f"{OPEN_TAIL}{settled_id}:{cursor}"


def _importer_cursor(stored: str | None) -> tuple[str | None, int | None]:
    """(the importer's cursor, the id of the last settled message or None) of a bookkeeping
    cursor."""
    if stored is None or not stored.startswith(OPEN_TAIL):
        return stored, None
    settled, _, cursor = stored.removeprefix(OPEN_TAIL).partition(":")
    return cursor, int(settled)


def _settled_id(store: ImportBookkeeping, session_id: str, open_tail: int) -> int | None:
    """The id of the message before the ``open_tail`` messages still being written (None
    when there are none)."""
    if open_tail <= 0:
        return None
    return store.last_message_id(session_id, open_tail)


class ImportRun:
    """One ``hermes sessions import`` invocation over a store: holds the bookkeeping, loaded
    in one query, and keeps it current as files are imported."""

    def __init__(self, store: object, *, clock: Callable[[], float] = time.time) -> None:
        """``store``: an open store (its ``imports`` are used) or its
        :class:`~hermes_core.store.protocol.ImportBookkeeping`."""
        bookkeeping: ImportBookkeeping = getattr(store, "imports", None) or store  # type: ignore[assignment]
        self._store = bookkeeping
        self._routing: RoutingTable | None = getattr(store, "routing", None)
        self._own_path = _own_file(getattr(store, "url", None))
        self._clock = clock
        self.records: dict[str, ImportFileRecord] = bookkeeping.load_files()
        self._unfinished_appends = bookkeeping.pending_appends()
        self._own_files: frozenset[tuple[int, int]] | None = None

    def bulk_load(self) -> AbstractContextManager[None]:
        """A ``with`` block around the imports of one invocation: a store may build its
        indexes once at the end instead of row by row (PostgreSQL, when it holds few
        messages; see :meth:`~hermes_core.store.protocol.ImportBookkeeping.bulk_load`)."""
        return self._store.bulk_load()

    def bookkeeping_key(self, path: Path) -> str:
        """The key a file is remembered by: its absolute path (symlinks not resolved, so a
        log reached through a link is the same log next time)."""
        return str(path.absolute())

    def quick_check(self, path: Path, importer: Importer | None = None) -> FileOutcome | None:
        """The outcome of ``path`` when the bookkeeping alone decides it (unchanged, or
        changed since import), without opening it; None when it must be read (a database:
        whenever its files were written since). Raises ``OSError`` when it cannot even be
        stat'ed."""
        record = self.records.get(self.bookkeeping_key(path))
        if importer is not None and is_database_importer(importer):
            untouched = database_untouched(database_stamp(path), record)
            return unchanged_database(path, record, None) if untouched and record else None
        change = compare(stamp_of(path), record)
        if record is None or change is not Change.UNCHANGED:
            return None
        return _unchanged(path, record, None)

    def import_file(self, path: Path, importer: Importer) -> FileOutcome:
        """Import ``path`` with ``importer`` (see the module docstring)."""
        key = self.bookkeeping_key(path)
        label = getattr(importer, "label", importer.name)
        try:
            stamp = stamp_of(path)
        except OSError as error:
            return _unreadable(path, importer, error)
        if self.is_own_store(path):
            return self.own_store_outcome(path, importer)
        if is_database_importer(importer):
            try:
                stamp = database_stamp(path)
            except OSError as error:
                return _unreadable(path, importer, error)
            record = self.records.get(key)
            if record is not None and database_untouched(stamp, record):
                return unchanged_database(path, record, label)
            return self._import_database(path, importer, key, stamp)
        if key in self._unfinished_appends:  # a process died while appending to it
            session_id, last_id = self._unfinished_appends.pop(key)
            self._store.undo_pending_append(key, session_id, last_id)
        record = self.records.get(key)
        change = compare(stamp, record)
        if record is not None and change is Change.UNCHANGED:
            if stamp.mtime_ns != record.mtime_ns:
                record = _restamped(record, stamp)
                self._store.update_file(record)
                self.records[key] = record
            return _unchanged(path, record, label)
        if record is not None and change is Change.INTERRUPTED:
            if record.cursor is not None and record.cursor.startswith(RESTORING):
                # A backup's session left half-restored: discarded, then restored again.
                under_way = record.cursor.removeprefix(RESTORING)
                record = dataclasses.replace(record, session_id=under_way, cursor=None)
            self._store.discard_partial(record)
            del self.records[key]
            record, change = None, Change.NEW
        outcome = FileOutcome(path=path, status=FileStatus.IMPORTED, importer=importer.name)
        outcome.label = label
        try:
            if record is not None and change is Change.GROWN:
                if record.session_id is None:
                    outcome.status = FileStatus.CHANGED
                    outcome.detail = "grew since its import, but its session was deleted; skipped"
                    return outcome
                self._append(path, importer, key, stamp, record, outcome)
            elif record is not None and change is Change.CHANGED:
                self._reimport_changed(path, importer, key, stamp, record, outcome)
            else:
                self._import_new(path, importer, key, stamp, outcome)
        except (StoreError, *self._store.database_errors):  # type: ignore[misc]
            raise  # the store's trouble, not the file's: the command reports it
        except Exception as error:
            # A file that cannot be read, or an importer that failed on it. What a new import
            # stored stays marked "importing" and is redone by the next import; a failed
            # append has already been undone.
            return _unreadable(path, importer, error, outcome)
        return outcome

    def own_store_outcome(self, path: Path, importer: Importer | None = None) -> FileOutcome:
        """The refusal of ``path``, a file of this store (see :meth:`is_own_store`)."""
        outcome = FileOutcome(
            path, FileStatus.UNREADABLE, importer=importer.name if importer else None
        )
        if importer is not None:
            outcome.label = getattr(importer, "label", importer.name)
        outcome.detail = (
            "this is the session store being imported into; refusing to import it into itself"
        )
        if importer is not None and is_database_importer(importer):
            # Hermes Agent and Hermes sessions both default to ~/.hermes/state.db.
            outcome.detail += (
                " (if the other tool shares this home, give its store's path, or set "
                "HERMES_AGENT_HOME, or run this tool with --home elsewhere)"
            )
        return outcome

    def is_own_store(self, path: Path) -> bool:
        """Whether ``path`` is this store's own file (or its WAL or shared-memory file): one
        ``stat``, compared with the store's files (looked up once per run). A store that is
        not a local file (another backend) has none. Any file of a store this process holds
        open counts too: no importer may open it by path (DESIGN §9)."""
        if held_store_file(path):
            return True
        if self._own_files is None:
            own: set[tuple[int, int]] = set()
            if self._own_path is not None:
                for candidate in (self._own_path, self._own_path + "-wal", self._own_path + "-shm"):
                    try:
                        info = os.stat(candidate)
                    except OSError:
                        continue
                    own.add((info.st_dev, info.st_ino))
            self._own_files = frozenset(own)
        try:
            info = os.stat(path)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) in self._own_files

    def _import_database(
        self, path: Path, importer: Importer, key: str, stamp: FileStamp
    ) -> FileOutcome:
        run = DatabaseImport(
            self._store,
            self._routing,
            importer,
            path,
            key,
            stamp,
            self.records.get(key),
            self._clock(),
        )
        try:
            outcome, record = run.run()
        except (StoreError, *self._store.database_errors):  # type: ignore[misc]
            raise  # the store's trouble, not the file's: the command reports it
        except Exception as error:
            return _unreadable(path, importer, error, run.outcome)
        self.records[key] = record
        return outcome

    # ------------------------------------------------------------------ the three paths

    def _import_new(
        self,
        path: Path,
        importer: Importer,
        key: str,
        stamp: FileStamp,
        outcome: FileOutcome,
    ) -> None:
        imported_at = self._clock()
        pending = ImportFileRecord(
            path=key,
            importer=importer.name,
            size=stamp.size,
            mtime_ns=stamp.mtime_ns,
            cursor=None,
            foreign_id=None,
            session_id=None,
            state="importing",
            imported_at=imported_at,
        )
        owner: ImportedSession | None = None
        owner_id: str | None = None
        by_foreign_id: dict[str, str] = {}
        def restoring(session_id: str) -> None:
            # A backup's sessions are restored one by one: the file's row names the one under
            # way (in its cursor: the session row does not exist yet), so an import killed
            # half-way through it is undone by the next (INTERRUPTED).
            self._store.update_file(dataclasses.replace(pending, cursor=RESTORING + session_id))

        backup_sessions = 0
        already_here: list[str] = []
        first_already_here: str | None = None
        for imported in _readable(importer.read(path, None), outcome):
            if imported.snapshot is not None:
                restored = restore_snapshot(self._store, imported, before_restoring=restoring)
                backup_sessions += 1
                if restored.stored is not None:
                    outcome.notes.extend(restored.notes)
                    outcome.sessions.append(restored.stored)
                    owner_id = owner_id or restored.stored.session_id
                else:  # said after the others (a few by id, many as a count)
                    already_here.extend(restored.notes)
                    first_already_here = first_already_here or imported.snapshot.id
                owner = owner or imported
                outcome.warnings.update(imported.warnings)
                continue
            parent_id = None
            if imported.parent_foreign_id is not None:
                parent_id = by_foreign_id.get(
                    imported.parent_foreign_id
                ) or self._store.session_of_foreign_id(importer.name, imported.parent_foreign_id)
                known = parent_id and self._store.delegate_of_foreign_id(
                    parent_id, imported.foreign_id
                )
                if known:  # a subagent file given on its own, imported with its session
                    outcome.notes.append(f"already imported as {known}")
                    owner_id = owner_id or known
                    owner = owner or imported
                    continue
            first_of_file = owner is None
            if first_of_file and imported.parent_foreign_id is None:
                earlier = self._store.import_of_foreign_id(importer.name, imported.foreign_id)
                if earlier is not None:  # the same conversation, reached by another path
                    self._same_as(key, importer, stamp, imported.foreign_id, earlier, outcome)
                    return
            stored = store_new_conversation(
                self._store,
                imported,
                importer=importer.name,
                path=path,
                imported_at=imported_at,
                parent_session_id=parent_id,
                bookkeeping=pending if first_of_file else None,
                fallback_title=f"Imported from {outcome.label}",
            )
            outcome.warnings.update(imported.warnings)
            if first_of_file:
                owner = imported
            if stored is None:
                continue
            if imported.parent_foreign_id is not None and parent_id is None:
                outcome.notes.append(
                    f"{stored.session_id} is a subagent's session whose parent session "
                    f"({imported.parent_foreign_id}) is neither in this store nor in the "
                    "log; imported without a parent"
                )
            by_foreign_id[imported.foreign_id] = stored.session_id
            outcome.sessions.append(stored)
            if first_of_file:
                owner_id = stored.session_id
        if backup_sessions:
            owner_id = owner_id or first_already_here
            if len(already_here) > 3 and outcome.sessions:
                outcome.notes.append(
                    f"{len(already_here)} session(s) of this backup already in this store; "
                    "skipped"
                )
            elif outcome.sessions:
                outcome.notes[0:0] = already_here
        if outcome.sessions:
            outcome.status = FileStatus.IMPORTED
        elif backup_sessions:
            outcome.status = FileStatus.UNCHANGED
            outcome.detail = _backup_already_here(backup_sessions)
        elif owner_id is not None:
            outcome.status = FileStatus.UNCHANGED
            outcome.detail = f"already imported as {owner_id}"
            outcome.notes = [n for n in outcome.notes if not n.startswith("already imported as")]
        elif outcome.notes:
            outcome.status = FileStatus.UNCHANGED
            outcome.detail = "every session in it is already in this store"
        else:
            outcome.status = FileStatus.NO_CONVERSATION
            outcome.detail = "no conversation"
        outcome.session_id = owner_id
        if outcome.unreadable_records:
            # What could be read is stored; the file is forgotten, so the next import reads
            # it whole again and names the same lines until they are mended.
            self._forget_partly_read(key, outcome)
            return
        # Only a conversation keeps a cursor and foreign id: a file that held nothing is read
        # whole again once it changes, and a backup's sessions are matched by their ids.
        keeps_position = (
            owner is not None and owner.snapshot is None and outcome.status is FileStatus.IMPORTED
        )
        cursor = backup_cursor(backup_sessions) if backup_sessions else None
        if keeps_position and owner is not None:
            settled = _settled_id(self._store, owner_id, owner.open_tail) if owner_id else None
            cursor = _stored_cursor(owner.cursor, settled)
        self._remember(
            key,
            importer,
            stamp,
            cursor=cursor,
            foreign_id=owner.foreign_id if keeps_position and owner is not None else None,
            session_id=owner_id,
            imported_at=imported_at,
        )

    def _same_as(
        self,
        key: str,
        importer: Importer,
        stamp: FileStamp,
        foreign_id: str,
        earlier: tuple[str, str],
        outcome: FileOutcome,
    ) -> None:
        """A file holding a conversation already imported from another path (a copy, a moved
        config folder): reported, remembered, never stored twice. Its new turns, if any, come
        from the path first imported."""
        session_id, other_path = earlier
        outcome.status = FileStatus.UNCHANGED
        outcome.session_id = session_id
        outcome.detail = f"already imported as {session_id} (from {other_path})"
        self._remember(
            key,
            importer,
            stamp,
            cursor=None,
            foreign_id=foreign_id,
            session_id=session_id,
            imported_at=self._clock(),
        )

    def _append(
        self,
        path: Path,
        importer: Importer,
        key: str,
        stamp: FileStamp,
        record: ImportFileRecord,
        outcome: FileOutcome,
    ) -> None:
        assert record.session_id is not None
        now = self._clock()
        outcome.status = FileStatus.APPENDED
        outcome.session_id = record.session_id
        cursor, settled = _importer_cursor(record.cursor)
        appended = 0
        kept = self._store.last_message_id(record.session_id)
        self._store.mark_append(key, record.session_id, kept)
        try:
            read_again = 0
            sessions = repaired_sessions(importer.read(path, cursor), outcome)
            first = next(sessions, None)
            if first is not None and first.snapshot is None and first.parent_foreign_id is None:
                written = append_to_conversation(
                    self._store, record.session_id, first, appended_at=now
                )
                if settled is not None and written > 0:
                    # The messages still being written at the last import (its open tail)
                    # were just read again and written after them: the old copies go. A
                    # process dying before the bookkeeping moves on has the new ones undone
                    # by the next import, which reads them again from the same cursor.
                    read_again = self._store.discard_messages_after(
                        record.session_id, settled, kept
                    )
                appended += max(0, written - read_again)
                settled = _settled_id(self._store, record.session_id, first.open_tail)
                cursor = _stored_cursor(first.cursor or cursor, settled)
                outcome.warnings.update(first.warnings)
                first = None
            else:
                cursor = record.cursor
        except BaseException:
            self._store.discard_messages_after(record.session_id, kept)
            raise
        for imported in _chain(first, sessions):
            if imported.snapshot is not None:
                restored = restore_snapshot(self._store, imported)
                outcome.notes.extend(restored.notes)
                if restored.stored is not None:
                    outcome.sessions.append(restored.stored)
                    appended += restored.stored.messages
                cursor = imported.cursor or cursor
                outcome.warnings.update(imported.warnings)
                continue
            parent_id: str | None = None  # another session of its own, found in the new part
            if imported.parent_foreign_id is not None:
                parent_id = record.session_id
                if imported.parent_foreign_id != record.foreign_id:
                    parent_id = (
                        self._store.session_of_foreign_id(importer.name, imported.parent_foreign_id)
                        or record.session_id
                    )
                if self._store.delegate_of_foreign_id(parent_id, imported.foreign_id):
                    continue  # imported with the file the first time: left unread
            stored = store_new_conversation(
                self._store,
                imported,
                importer=importer.name,
                path=path,
                imported_at=now,
                parent_session_id=parent_id,
                fallback_title=f"Imported from {outcome.label}",
            )
            outcome.warnings.update(imported.warnings)
            if stored is not None:
                outcome.sessions.append(stored)
        outcome.sessions.insert(
            0, StoredSession(session_id=record.session_id, title=None, messages=appended)
        )
        if appended == 0 and len(outcome.sessions) == 1 and not read_again:
            outcome.status = FileStatus.UNCHANGED
            outcome.detail = _already(record) + " (no new turns)"
        elif read_again:
            outcome.notes.append(
                f"the last turn of {record.session_id}, still being written at the last "
                "import, was read again"
            )
        self._remember(
            key,
            importer,
            stamp,
            cursor=cursor,
            foreign_id=record.foreign_id,
            session_id=record.session_id,
            imported_at=record.imported_at,
        )

    def _reimport_changed(
        self,
        path: Path,
        importer: Importer,
        key: str,
        stamp: FileStamp,
        record: ImportFileRecord,
        outcome: FileOutcome,
    ) -> None:
        if record.foreign_id is not None:
            outcome.status = FileStatus.CHANGED
            outcome.session_id = record.session_id
            outcome.detail = (
                f"changed since it was imported as {record.session_id or 'a deleted session'} "
                "(rewritten, not appended to); skipped"
            )
            return
        # A backup file (its sessions carry their own ids) or a file that held nothing:
        # reading it again is safe.
        self._import_new(path, importer, key, stamp, outcome)

    def _forget_partly_read(self, key: str, outcome: FileOutcome) -> None:
        """A file with records that could not be read: not remembered as imported."""
        self._store.forget_file(key)
        self.records.pop(key, None)
        if outcome.status is FileStatus.NO_CONVERSATION:
            outcome.status = FileStatus.UNREADABLE
            outcome.detail = "no record in it could be read"
        elif outcome.status is FileStatus.UNCHANGED and not outcome.session_id:
            outcome.detail = "every session it could read is already in this store"

    def _remember(
        self,
        key: str,
        importer: Importer,
        stamp: FileStamp,
        *,
        cursor: str | None,
        foreign_id: str | None,
        session_id: str | None,
        imported_at: float,
    ) -> None:
        record = ImportFileRecord(
            path=key,
            importer=importer.name,
            size=stamp.size,
            mtime_ns=stamp.mtime_ns,
            cursor=cursor,
            foreign_id=foreign_id,
            session_id=session_id,
            state="done",
            imported_at=imported_at,
        )
        self._store.update_file(record)
        self.records[key] = record


def _readable(
    sessions: Iterator[ImportedSession] | Iterable[ImportedSession], outcome: FileOutcome
) -> Iterator[ImportedSession]:
    """The sessions an importer yields, their text repaired (:mod:`.repairs`); the records it
    says it could not read (raised at the end as :class:`UnreadableRecords`) are kept on
    ``outcome`` instead of failing the file."""
    try:
        yield from repaired_sessions(sessions, outcome)
    except UnreadableRecords as unread:
        outcome.unreadable_records.extend(unread.problems)


def _restamped(record: ImportFileRecord, stamp: FileStamp) -> ImportFileRecord:
    return dataclasses.replace(record, size=stamp.size, mtime_ns=stamp.mtime_ns)


def _chain(
    first: ImportedSession | None, rest: Iterator[ImportedSession]
) -> Iterator[ImportedSession]:
    if first is not None:
        yield first
    yield from rest


def _unchanged(path: Path, record: ImportFileRecord, label: str | None) -> FileOutcome:
    """The outcome of a file its bookkeeping says is unchanged (nothing is opened)."""
    empty = (
        record.session_id is None
        and record.foreign_id is None
        and backup_size(record.cursor) is None
    )
    return FileOutcome(
        path=path,
        status=FileStatus.NO_CONVERSATION if empty else FileStatus.UNCHANGED,
        importer=record.importer,
        label=label,
        session_id=record.session_id,
        detail=_already(record),
    )


def _backup_already_here(sessions: int) -> str:
    """What a re-read backup whose every session is already in the store says."""
    if sessions == 1:
        return "already imported: its one session is in this store"
    return f"already imported: all {sessions} sessions of this backup are in this store"


def _already(record: ImportFileRecord) -> str:
    sessions = backup_size(record.cursor)
    if sessions is not None:
        return _backup_already_here(sessions)
    if record.session_id is None:
        if record.foreign_id is None:
            return "already read: no conversation"
        return "imported before; its session has since been deleted"
    return f"already imported as {record.session_id}"


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)


def _unreadable(
    path: Path, importer: Importer, error: BaseException, outcome: FileOutcome | None = None
) -> FileOutcome:
    result = outcome or FileOutcome(path=path, status=FileStatus.UNREADABLE)
    result.status = FileStatus.UNREADABLE
    result.importer = importer.name
    verb = "cannot read" if isinstance(error, OSError | UnicodeError) else "cannot import"
    result.detail = f"{verb}: {_reason(error)}"
    return result


def _own_file(url: object) -> str | None:
    """The file of a ``sqlite:///…`` store URL (None for other backends)."""
    if not isinstance(url, str) or not url.startswith("sqlite:///"):
        return None
    return url[len("sqlite:///") :]
