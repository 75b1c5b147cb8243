"""Importing another tool's whole database: an importer with ``file_kind = "database"``.

Such a file (a Hermes Agent ``state.db``) holds many sessions and changes in place, so its size
says little: a database whose files (the main file and its ``-wal``) were not written since its
last import is left unopened; otherwise ``read(path, cursor)`` yields every session of the
database as a ``snapshot``, with all of its messages the first time and, from a
cursor, only the messages that follow it (``continues``). Per yielded session:

* not here yet → stored with its own id when that id is a session id free in this store, else
  a new id (reported: :mod:`.kept_ids`); its title kept, a clash getting a visible `` (2)`` suffix (reported); its parent
  linked when the parent is here (a parent yielded later is linked at the end of the run);
* here already → the new messages are appended, and the end, tokens and cost follow the
  foreign row when they changed; nothing is written when nothing changed;
* imported once and deleted here since → left deleted.

A run is all or nothing: the file's bookkeeping row says ``importing`` while it runs, and a
run that fails (a corrupt page met half-way) or dies is undone — at once, or by the next run —
so a half-read database never leaves half of its sessions behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import ImportedRoute, ImportedSession, Importer, Message, ParentKind, Session

from hermes_core.store.database_imports import ImportedEntry, append_mark_key
from hermes_core.store.ids import shown_id
from hermes_core.store.imports import ImportedTotals, ImportFileRecord
from hermes_core.store.routing import RouteRecord

from .batches import message_batches
from .conversations import END_REASON
from .files import FileStamp
from .kept_ids import choose_id, renamed_note
from .outcomes import FileOutcome, FileStatus, StoredSession
from .repairs import repaired_sessions

if TYPE_CHECKING:
    from hermes_core.store.protocol import ImportBookkeeping, RoutingTable

_KEPT_FIELDS = (
    "user_id", "model", "cwd", "git_branch", "git_repo_root", "chat_id", "chat_type",
    "thread_id", "session_key", "billing_provider", "cost_actual_usd", "cost_estimated_usd",
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "ended_at",
    "end_reason",
)  # fmt: skip


def is_database_importer(importer: Importer) -> bool:
    """Whether ``importer`` reads databases (``file_kind = "database"``), not logs."""
    return getattr(importer, "file_kind", "log") == "database"


def database_stamp(path: Path) -> FileStamp:
    """The stamp of a database with its ``-wal``: the sizes added up and the newest
    modification time, so any write to either (a commit, a checkpoint) changes it. Taken
    before the file is read: a write during the read shows next time."""
    main = os.stat(path)
    size, mtime_ns = main.st_size, main.st_mtime_ns
    try:
        wal = os.stat(str(path) + "-wal")
    except FileNotFoundError:
        return FileStamp(size=size, mtime_ns=mtime_ns)
    return FileStamp(size=size + wal.st_size, mtime_ns=max(mtime_ns, wal.st_mtime_ns))


def database_untouched(stamp: FileStamp, record: ImportFileRecord | None) -> bool:
    """Whether nothing was written to the database since its last complete import."""
    return (
        record is not None
        and record.state == "done"
        and (record.size, record.mtime_ns) == (stamp.size, stamp.mtime_ns)
    )


def unchanged_database(path: Path, record: ImportFileRecord, label: str | None) -> FileOutcome:
    """The outcome of a database not written to since its import (nothing is opened)."""
    return FileOutcome(
        path=path,
        status=FileStatus.UNCHANGED,
        importer=record.importer,
        label=label,
        session_id=record.session_id,
        detail="already imported: no new sessions or messages",
    )


def fingerprint(snapshot: Session) -> str:
    """What a later read compares to tell whether the foreign row's end or totals moved."""
    return json.dumps(
        [
            snapshot.ended_at,
            snapshot.end_reason,
            snapshot.input_tokens,
            snapshot.output_tokens,
            snapshot.cost_actual_usd,
            snapshot.cost_estimated_usd,
            snapshot.billing_provider,
            snapshot.cache_read_tokens,
            snapshot.cache_write_tokens,
        ],
        separators=(",", ":"),
    )


@dataclass(slots=True)
class _Pending:
    """A child stored before its parent was seen in this run."""

    session_id: str
    foreign_id: str
    parent_foreign_id: str
    kind: ParentKind


@dataclass(slots=True)
class DatabaseImport:
    """One import of one database file (see the module docstring)."""

    store: ImportBookkeeping
    routing: RoutingTable | None
    """Where routing rows go; None for a store without a routing table."""
    importer: Importer
    path: Path
    key: str
    """The bookkeeping key of the file (its absolute path)."""
    stamp: FileStamp
    previous: ImportFileRecord | None
    started: float
    outcome: FileOutcome = field(init=False)
    _known: dict[str, ImportedEntry] = field(init=False, default_factory=dict)
    _pending: list[_Pending] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.outcome = FileOutcome(
            path=self.path,
            status=FileStatus.IMPORTED,
            importer=self.importer.name,
            label=getattr(self.importer, "label", self.importer.name),
        )

    def run(self) -> tuple[FileOutcome, ImportFileRecord]:
        """Import the file; returns the outcome and the file's new bookkeeping row. Any error
        leaves the store as it was before the run and is raised."""
        previous = self.previous
        cursor = previous.cursor if previous is not None else None
        if previous is not None and previous.state == "importing":
            self.store.discard_run(self.key, self.importer.name, previous.imported_at)
        self.store.clear_append_marks(self.key)  # left by a run that ended "done"
        marker = ImportFileRecord(
            path=self.key,
            importer=self.importer.name,
            size=self.stamp.size,
            mtime_ns=self.stamp.mtime_ns,
            cursor=cursor,
            foreign_id=None,
            session_id=previous.session_id if previous is not None else None,
            state="importing",
            imported_at=self.started,
        )
        self.store.update_file(marker)
        try:
            cursor = self._read_all(cursor)
        except BaseException:
            self.outcome.sessions.clear()
            self.outcome.appended.clear()
            self.outcome.notes.clear()
            self.outcome.routes_added = 0
            self.store.discard_run(self.key, self.importer.name, self.started)
            if previous is not None and previous.state == "done":
                self.store.update_file(previous)
            else:
                self.store.forget_file(self.key)
            raise
        self._link_late_parents()
        outcome = self.outcome
        first = next((stored.session_id for stored in outcome.top_level), None)
        outcome.session_id = first or marker.session_id
        if outcome.sessions:
            outcome.status = FileStatus.IMPORTED
        elif outcome.appended:
            outcome.status = FileStatus.APPENDED
        elif self._known:
            outcome.status = FileStatus.UNCHANGED
            outcome.detail = "already imported: no new sessions or messages"
        else:
            outcome.status = FileStatus.NO_CONVERSATION
            outcome.detail = "no conversation"
        done = ImportFileRecord(
            path=self.key,
            importer=self.importer.name,
            size=self.stamp.size,
            mtime_ns=self.stamp.mtime_ns,
            cursor=cursor,
            foreign_id=None,
            session_id=outcome.session_id,
            state="done",
            imported_at=previous.imported_at
            if previous is not None and previous.state == "done"
            else self.started,
        )
        self.store.update_file(done)
        self.store.clear_append_marks(self.key)  # after "done": a crash between keeps both
        return outcome, done

    # ------------------------------------------------------------------ per session

    def _read_all(self, cursor: str | None) -> str | None:
        self._known = self.store.imported_sessions(self.importer.name)
        deleted_here = 0
        for imported in repaired_sessions(self.importer.read(self.path, cursor), self.outcome):
            snapshot = imported.snapshot
            if snapshot is None:
                raise ValueError(f"{self.importer.name}: a database importer yields snapshots")
            known_as = self._known_as(imported.foreign_id)
            entry = self._known.get(known_as)
            if entry is not None:
                if imported.continues:
                    self._append(entry, imported, snapshot, known_as)
                    self._add_routes(imported, entry.session_id)
                elif self._catch_up(entry, imported, snapshot, known_as):
                    self._add_routes(imported, entry.session_id)
                else:  # another conversation under the same id: a session of its own
                    stored = self._store_new(
                        imported, snapshot, known_as=_of_this_file(imported.foreign_id, self.key)
                    )
                    if stored is not None:
                        self.outcome.notes.append(
                            f"session {shown_id(imported.foreign_id)} differs from the one "
                            f"imported before as {entry.session_id} (another store using the "
                            "same id, or a conversation continued in both places): imported "
                            f"as {stored.session_id}"
                        )
                        self._add_routes(imported, stored.session_id)
            elif imported.continues:
                deleted_here += 1  # imported once, deleted here since: left deleted
            else:
                stored = self._store_new(imported, snapshot)
                if stored is not None:
                    self._add_routes(imported, stored.session_id)
            self.outcome.warnings.update(imported.warnings)
            cursor = imported.cursor or cursor
        if deleted_here:
            self.outcome.notes.append(
                f"{deleted_here} session(s) imported before and deleted here since: left deleted"
            )
        return cursor

    def _known_as(self, foreign_id: str) -> str:
        """The key ``foreign_id`` is known by in this store: its own, or the one of a session
        imported from this very file under an id another store's session had first."""
        own = _of_this_file(foreign_id, self.key)
        return own if own in self._known else foreign_id

    def _catch_up(
        self, entry: ImportedEntry, imported: ImportedSession, snapshot: Session, known_as: str
    ) -> bool:
        """A session imported before, read whole from this file (a copy of the store, or the
        store moved to another path): the messages past those already here are appended.
        False when the two conversations differ (another store reusing the id, or one
        continued on both sides): nothing is written to the session here, and
        ``imported.messages`` can still be read."""
        incoming = list(imported.messages)
        here = self.store.message_texts(entry.session_id)
        texts = [(message.role, message.content) for message in incoming]
        if texts[: len(here)] == here:
            imported.messages = iter(incoming[len(here) :])
            self._append(entry, imported, snapshot, known_as)
            return True
        if here[: len(texts)] == texts:
            imported.messages = iter(())
            self._append(entry, imported, snapshot, known_as)  # nothing new: totals may be
            return True
        imported.messages = iter(incoming)
        return False

    def _store_new(
        self, imported: ImportedSession, snapshot: Session, *, known_as: str | None = None
    ) -> StoredSession | None:
        """Store ``imported`` as a new session (its own id when free here). ``known_as``: the
        foreign id it is remembered by, when not its own (see :func:`_of_this_file`)."""
        messages = iter(imported.messages)
        first = next(messages, None)
        if first is None:
            self.outcome.warnings["session without messages (not imported)"] += 1
            return None
        foreign_id = known_as or imported.foreign_id
        chosen = choose_id(self.store, snapshot.id, started_at=snapshot.started_at)
        parent_id: str | None = None
        parent_kind = snapshot.parent_kind
        if snapshot.parent_session_id is not None:
            parent = self._known.get(self._known_as(snapshot.parent_session_id))
            parent_id = parent.session_id if parent is not None else None
            parent_kind = parent_kind or "branch"
        fields: dict[str, object] = {name: getattr(snapshot, name) for name in _KEPT_FIELDS}
        fields["pinned"] = int(snapshot.pinned)
        fields["archived"] = int(snapshot.archived)
        fields["last_active_at"] = snapshot.last_active_at or snapshot.started_at
        metadata: dict[str, Any] = dict(snapshot.metadata)
        metadata["imported_from"] = {
            "tool": self.importer.name,
            "path": self.key,
            "foreign_id": foreign_id,
            "imported_at": self.started,
            "seen": fingerprint(snapshot),
        }
        session_id = self.store.create_session(
            source=snapshot.source,
            started_at=snapshot.started_at,
            session_id=chosen.session_id,
            parent_session_id=parent_id,
            parent_kind=parent_kind if parent_id is not None else None,
            metadata=metadata,
            model_config=snapshot.model_config,
            system_prompt=snapshot.system_prompt,
            fields=fields,
        )
        if chosen.replaced_because is not None:
            self.outcome.notes.append(
                renamed_note(snapshot.id, chosen.replaced_because, session_id)
            )
        if snapshot.parent_session_id is not None and parent_id is None:
            assert parent_kind is not None
            self._pending.append(
                _Pending(session_id, foreign_id, snapshot.parent_session_id, parent_kind)
            )
        written, newest = self._write(session_id, first, messages, snapshot.started_at)
        # Open there: stored ended at its last message, as every import is (SPEC I5).
        ended = None if snapshot.ended_at is not None else (newest or snapshot.started_at)
        title = self.store.finish_session(
            session_id,
            ImportedTotals(
                title_proposal=snapshot.title,
                ended_at=ended,
                end_reason=END_REASON if ended is not None else None,
            ),
            title_source=snapshot.title_source or "import",
        )
        if snapshot.title is not None and title != snapshot.title:
            self.outcome.notes.append(
                f"session {session_id}: the title '{snapshot.title}' is used by another "
                f"session; imported as '{title}'"
            )
        self._known[foreign_id] = ImportedEntry(session_id, fingerprint(snapshot))
        stored = StoredSession(
            session_id=session_id,
            title=title,
            messages=written,
            delegate=parent_kind == "delegate" and snapshot.parent_session_id is not None,
            restored=session_id == snapshot.id,
        )
        self.outcome.sessions.append(stored)
        return stored

    def _append(
        self, entry: ImportedEntry, imported: ImportedSession, snapshot: Session, known_as: str
    ) -> None:
        session_id = entry.session_id
        messages = iter(imported.messages)
        first = next(messages, None)
        written, newest = 0, None
        if first is not None:
            mark = append_mark_key(self.key, session_id)
            kept = self.store.last_message_id(session_id)
            self.store.mark_append(mark, session_id, kept)
            # The mark stays until the run is done: a run that fails later undoes this append.
            written, newest = self._write(session_id, first, messages, snapshot.started_at)
            self.outcome.appended.append(
                StoredSession(session_id=session_id, title=None, messages=written)
            )
        seen = fingerprint(snapshot)
        if written or seen != entry.seen:
            fields: dict[str, Any] = {
                "input_tokens": snapshot.input_tokens,
                "output_tokens": snapshot.output_tokens,
                "cache_read_tokens": snapshot.cache_read_tokens,
                "cache_write_tokens": snapshot.cache_write_tokens,
                "cost_actual_usd": snapshot.cost_actual_usd,
                "cost_estimated_usd": snapshot.cost_estimated_usd,
                "billing_provider": snapshot.billing_provider,
            }
            if snapshot.ended_at is not None:
                fields["ended_at"], fields["end_reason"] = snapshot.ended_at, snapshot.end_reason
            elif newest is not None:
                fields["ended_at"], fields["end_reason"] = newest, END_REASON
            self.store.refresh_session(session_id, fields, seen=seen, last_active_at=newest)
            self._known[known_as] = ImportedEntry(session_id, seen)

    def _write(
        self, session_id: str, first: Message, rest: Iterator[Message], start: float
    ) -> tuple[int, float | None]:
        written, newest = 0, None

        def everything() -> Iterator[Message]:
            yield first
            yield from rest

        for batch in message_batches(everything(), first_timestamp=start):
            written += self.store.append_messages(session_id, batch, default_timestamp=start)
            for message in batch:
                if message.timestamp is not None and (newest is None or message.timestamp > newest):
                    newest = message.timestamp
        return written, newest

    def _add_routes(self, imported: ImportedSession, session_id: str) -> None:
        """Route the chats of ``imported.routes`` to ``session_id``, unless this store routes
        them already (its own gateway's entry wins and is never overwritten)."""
        if self.routing is None:
            return
        for route in imported.routes:
            existing = self.routing.record(route.session_key)
            if existing is None:
                self.routing.set_route(_route_record(route, session_id))
                self.outcome.routes_added += 1
            elif existing.session_id != session_id:
                self.outcome.notes.append(
                    f"chat {route.session_key}: this store already routes it to another "
                    "session; kept that"
                )

    def _link_late_parents(self) -> None:
        for pending in self._pending:
            parent = self._known.get(self._known_as(pending.parent_foreign_id))
            if parent is not None:
                self.store.link_parent(pending.session_id, parent.session_id, pending.kind)
            else:
                self.outcome.notes.append(
                    f"session {pending.session_id}: its parent {pending.parent_foreign_id} is "
                    "not in this store; imported without that link"
                )


def _of_this_file(foreign_id: str, key: str) -> str:
    """The foreign id a session is remembered by when another store's session was imported
    under the same id first: the id and the file it comes from, so each store's next import
    finds its own session."""
    return f"{foreign_id} in {key}"


def _route_record(route: ImportedRoute, session_id: str) -> RouteRecord:
    return RouteRecord(
        session_key=route.session_key,
        session_id=session_id,
        platform=route.platform,
        origin=json.dumps(dict(route.origin)) if route.origin is not None else None,
        updated_at=route.updated_at,
        expires_at=route.expires_at,
    )
