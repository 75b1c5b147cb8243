"""Routed sessions: the gateway's routing identity in ``gateway_routing`` (SPEC G4, G5) together
with the session rows it points at, as typed reads and writes.

A routed session is created together with its routing row in ONE transaction, so a crash can
never leave a gateway session without its identity. Reads give the recovery logic
(``hermes_core.gateway.routing``) what it ranks: each session of a key with its real activity
(its last message, else its start) and the reset boundaries of the key.

:class:`RoutingRows` holds every read and write of the facet (the protocol's
:class:`~hermes_core.store.protocol.RoutingTable`) once, in SQL both SQLite and PostgreSQL
take, over a backend's few primitives: run a statement, one write transaction, a per-key lock
inside it, inserting a session row. :class:`RoutingStore` is the SQLite facet
(``SessionStore.routing``); the PostgreSQL one lives in the ``hermes-store-postgres`` plugin.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from hermes_hookspecs import ParentKind, Session, StoreEvents

from . import session_writes
from .connection import write_transaction
from .errors import SessionNotFound
from .inbox import InboxRows
from .routing import RouteRecord
from .statements import SqliteSql

if TYPE_CHECKING:
    from .store import SessionStore

RECOVERABLE_END_REASONS = frozenset({"startup_orphan_reap"})
"""Ended rows a restarted gateway may still resume: closed only because a process died."""
BOUNDARY_END_REASONS = frozenset({"new_session", "reset"})
"""An intentional reset: nothing of the key older than it is ever resumed."""
HOME_CHANNEL_PREFIX = "gateway.home:"
DELIVERED_PREFIX = "gateway.delivered:"
"""``state_meta`` keys of platform message ids already stored: prefix, key length, key, id."""


@dataclass(frozen=True, slots=True)
class RouteOrigin:
    """Where a routed conversation lives on its platform."""

    platform: str
    chat_id: str
    chat_type: str
    user_id: str | None = None
    thread_id: str | None = None
    user_name: str | None = None
    chat_name: str | None = None

    def as_json(self) -> dict[str, str]:
        """The non-empty fields, as stored in ``gateway_routing.origin``."""
        values = {
            "chat_id": self.chat_id,
            "chat_type": self.chat_type,
            "user_id": self.user_id,
            "thread_id": self.thread_id,
            "user_name": self.user_name,
            "chat_name": self.chat_name,
        }
        return {name: value for name, value in values.items() if value is not None}

    def session_fields(self, session_key: str) -> dict[str, Any]:
        """The session columns that carry this origin."""
        return {
            "session_key": session_key,
            "chat_id": self.chat_id,
            "chat_type": self.chat_type,
            "user_id": self.user_id,
            "thread_id": self.thread_id,
        }


@dataclass(frozen=True, slots=True)
class Route:
    """One row of ``gateway_routing``."""

    session_key: str
    session_id: str | None
    platform: str
    origin: dict[str, str] = field(default_factory=dict)
    updated_at: float = 0.0
    expires_at: float | None = None


@dataclass(frozen=True, slots=True)
class KeyedSession:
    """A session of a routing key, with what recovery ranks it by."""

    session_id: str
    started_at: float
    ended_at: float | None
    end_reason: str | None
    message_count: int
    real_activity: float
    """The time of its last message, else its start: what "most recent real activity" means."""

    @property
    def resumable(self) -> bool:
        return self.ended_at is None or self.end_reason in RECOVERABLE_END_REASONS


@dataclass(frozen=True, slots=True)
class RepairRow:
    """A session as repair-routing sees it."""

    session_id: str
    source: str
    session_key: str | None
    parent_session_id: str | None
    started_at: float
    real_activity: float
    message_count: int
    user_id: str | None
    end_reason: str | None


_RECORD_COLUMNS = "session_key, session_id, platform, origin, updated_at, expires_at"
_REAL_ACTIVITY = (
    "coalesce((SELECT m.timestamp FROM messages m WHERE m.session_id = s.id "
    "ORDER BY m.id DESC LIMIT 1), s.started_at)"
)
_UPSERT_ROUTE = (
    "INSERT INTO gateway_routing(session_key, session_id, platform, origin, updated_at) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET "
    "session_id = excluded.session_id, platform = excluded.platform, "
    "origin = excluded.origin, updated_at = excluded.updated_at"
)
_STAMP_ORIGIN = (
    "UPDATE sessions SET session_key = coalesce(session_key, ?), "
    "chat_id = coalesce(chat_id, ?), chat_type = coalesce(chat_type, ?), "
    "user_id = coalesce(user_id, ?), thread_id = coalesce(thread_id, ?) WHERE id = ?"
)


class ResultRows(Protocol):
    """What a statement gives back, on either backend (a DB-API cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


class RoutingRows(InboxRows, ABC):
    """Every operation of the routing facet, over a backend's primitives.

    Statements are written with ``?`` placeholders, ``IN (?, …)`` lists and
    ``INSERT … ON CONFLICT``, which SQLite and PostgreSQL both take (a backend whose driver
    wants ``%s`` rewrites the marks in :meth:`_execute`; no statement here holds a literal
    ``?`` or ``%``). Writes run in :meth:`_transaction`; the ones about one routing key first
    take :meth:`_lock_key`, so two gateways deciding the same key's session go one after the
    other. The gateway inbox (:class:`~.inbox.InboxRows`) runs over the same primitives."""

    _binary_order: ClassVar[str] = ""
    """Appended to an ``ORDER BY`` of text so keys sort by their bytes (SQLite's default)."""

    @abstractmethod
    def _execute(self, sql: str, params: Sequence[object] = ()) -> ResultRows:
        """Run one statement (``?`` placeholders)."""

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[object]:
        """One write transaction: committed at the end, rolled back on an error."""

    @abstractmethod
    def _lock_key(self, session_key: str) -> None:
        """Inside :meth:`_transaction`: hold ``session_key`` until the transaction ends."""

    @abstractmethod
    def _insert_session(self, **columns: Any) -> str:
        """Insert a session row with the backend's ``insert_session`` (``columns``: its keyword
        arguments), inside the transaction; its id."""

    @abstractmethod
    def _session(self, session_id: str) -> Session:
        """The session ``session_id`` as the store reads it."""

    @abstractmethod
    def _events(self) -> StoreEvents | None:
        """Where session events go now, if anywhere."""

    # ------------------------------------------------------------------ reads

    def route(self, session_key: str) -> Route | None:
        """The routing row of ``session_key``, if any."""
        row = self._execute(
            f"SELECT {_RECORD_COLUMNS} FROM gateway_routing WHERE session_key = ?", (session_key,)
        ).fetchone()
        return _route(row) if row else None

    def routes(self) -> list[Route]:
        """Every routing row, by key."""
        rows = self._execute(
            f"SELECT {_RECORD_COLUMNS} FROM gateway_routing "
            f"ORDER BY session_key{self._binary_order}"
        ).fetchall()
        return [_route(row) for row in rows]

    def keyed_sessions(self, session_key: str) -> list[KeyedSession]:
        """The sessions carrying ``session_key`` that recovery may resume, newest activity
        first (ties: the one with messages, then the later start)."""
        reasons = sorted(RECOVERABLE_END_REASONS)
        rows = self._execute(
            f"SELECT s.id, s.started_at, s.ended_at, s.end_reason, s.message_count, "
            f"{_REAL_ACTIVITY} FROM sessions s WHERE s.session_key = ? "
            f"AND (s.ended_at IS NULL OR s.end_reason IN ({_marks(reasons)}))",
            (session_key, *reasons),
        ).fetchall()
        found = [
            KeyedSession(str(r[0]), float(r[1]), r[2], r[3], int(r[4]), float(r[5])) for r in rows
        ]
        found.sort(key=lambda s: (s.real_activity, s.message_count > 0, s.started_at), reverse=True)
        return found

    def reset_boundary(self, session_key: str) -> float | None:
        """When the key was last reset on purpose (``/new``, ``/reset``, a reset policy)."""
        reasons = sorted(BOUNDARY_END_REASONS)
        row = self._execute(
            "SELECT max(ended_at) FROM sessions WHERE session_key = ? "
            f"AND end_reason IN ({_marks(reasons)})",
            (session_key, *reasons),
        ).fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def real_activity(self, session_id: str) -> float:
        """The time of the session's last message, else its start."""
        row = self._execute(
            f"SELECT {_REAL_ACTIVITY} FROM sessions s WHERE s.id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return float(row[0])

    def record(self, session_key: str) -> RouteRecord | None:
        """The raw row of ``session_key`` (origin as stored JSON text), if any."""
        row = self._execute(
            f"SELECT {_RECORD_COLUMNS} FROM gateway_routing WHERE session_key = ?", (session_key,)
        ).fetchone()
        return None if row is None else RouteRecord(*row)

    def records(self, platform: str | None = None) -> list[RouteRecord]:
        """Every raw row (of ``platform``), by key: what migrate copies."""
        where, params = ("WHERE platform = ? ", [platform]) if platform is not None else ("", [])
        rows = self._execute(
            f"SELECT {_RECORD_COLUMNS} FROM gateway_routing {where}"
            f"ORDER BY session_key{self._binary_order}",
            params,
        ).fetchall()
        return [RouteRecord(*row) for row in rows]

    # ------------------------------------------------------------------ writes

    def set_route(self, record: RouteRecord) -> None:
        """Insert or replace the raw row of ``record.session_key`` (migrate, imports)."""
        with self._transaction():
            self._execute(
                f"INSERT INTO gateway_routing ({_RECORD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session_key) DO UPDATE SET session_id = excluded.session_id, "
                "platform = excluded.platform, origin = excluded.origin, "
                "updated_at = excluded.updated_at, expires_at = excluded.expires_at",
                (
                    record.session_key,
                    record.session_id,
                    record.platform,
                    record.origin,
                    record.updated_at,
                    record.expires_at,
                ),
            )

    def delete_route(self, session_key: str) -> bool:
        """Forget ``session_key``; whether there was such a row."""
        with self._transaction():
            deleted = self._execute(
                "DELETE FROM gateway_routing WHERE session_key = ?", (session_key,)
            ).rowcount
        return bool(deleted)

    def create_routed_session(
        self,
        session_key: str,
        origin: RouteOrigin,
        *,
        title: str | None = None,
        model: str | None = None,
        replaces: tuple[str, str] | None = None,
        parent: tuple[str, ParentKind] | None = None,
        now: float | None = None,
    ) -> Session:
        """Create a gateway session (8-hex id) and point ``session_key`` at it, in one
        transaction. ``replaces`` = (session id, end reason) ends that session in the same
        transaction (``/new``, ``/reset``, an automatic reset); ``parent`` links the new one."""
        moment = time.time() if now is None else now
        ended: str | None = None
        with self._transaction():
            self._lock_key(session_key)
            if replaces is not None:
                old_id, reason = replaces
                changed = self._execute(
                    "UPDATE sessions SET ended_at = ?, end_reason = ? "
                    "WHERE id = ? AND ended_at IS NULL",
                    (moment, reason, old_id),
                ).rowcount
                ended = old_id if changed else None
            session_id = self._routed_session(session_key, origin, moment, title, model, parent)
        events = self._events()
        if events is not None and ended is not None and replaces is not None:
            events.session_ended(self._session(ended), replaces[1])
        created = self._session(session_id)
        if events is not None:
            events.session_started(created)
        return created

    def claim_route(
        self,
        session_key: str,
        origin: RouteOrigin,
        *,
        expected: str | None,
        model: str | None = None,
        now: float | None = None,
    ) -> tuple[Session, bool]:
        """Insert-if-absent for a key's next session, atomic across processes: when the
        key's routing row still points at ``expected`` (None: there is no row, or it points
        at nothing), create a routed session and point the key at it, in one transaction
        holding the key; otherwise another gateway won the race and its session is adopted.
        Returns the session and whether it was created here."""
        moment = time.time() if now is None else now
        with self._transaction():
            self._lock_key(session_key)
            row = self._execute(
                "SELECT session_id FROM gateway_routing WHERE session_key = ?", (session_key,)
            ).fetchone()
            winner = row[0] if row else None
            created = winner is None or winner == expected
            if created:
                session_id = self._routed_session(session_key, origin, moment, None, model, None)
            else:
                session_id = str(winner)
        session = self._session(session_id)
        events = self._events()
        if created and events is not None:
            events.session_started(session)
        return session, created

    def _routed_session(
        self,
        session_key: str,
        origin: RouteOrigin,
        moment: float,
        title: str | None,
        model: str | None,
        parent: tuple[str, ParentKind] | None,
    ) -> str:
        fields = origin.session_fields(session_key)
        if model is not None:
            fields["model"] = model
        session_id = self._insert_session(
            source=origin.platform,
            session_id=None,
            gateway=True,
            started=moment,
            title=title,
            system_prompt=None,
            model_config=None,
            metadata=None,
            parent_session_id=parent[0] if parent else None,
            parent_kind=parent[1] if parent else None,
            fields=fields,
        )
        self._upsert_route(session_key, session_id, origin, moment)
        return session_id

    def point(
        self, session_key: str, session_id: str, origin: RouteOrigin, *, now: float | None = None
    ) -> None:
        """Point ``session_key`` at an existing session and stamp the key and origin on the
        session where they are missing (the repair of a routing write that once failed),
        reopening it when a dead process left it ended."""
        moment = time.time() if now is None else now
        reasons = sorted(RECOVERABLE_END_REASONS)
        with self._transaction():
            self._lock_key(session_key)
            if self._execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
                raise SessionNotFound(f"no session {session_id}")
            self._stamp_origin(session_id, session_key, origin)
            self._execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ? "
                f"AND end_reason IN ({_marks(reasons)})",
                (session_id, *reasons),
            )
            self._upsert_route(session_key, session_id, origin, moment)

    def clear(self, session_key: str) -> None:
        """Forget the routing row of ``session_key`` (its sessions stay)."""
        with self._transaction():
            self._execute("DELETE FROM gateway_routing WHERE session_key = ?", (session_key,))

    def _upsert_route(
        self, session_key: str, session_id: str, origin: RouteOrigin, now: float
    ) -> None:
        self._execute(
            _UPSERT_ROUTE,
            (session_key, session_id, origin.platform, json.dumps(origin.as_json()), now),
        )

    def _stamp_origin(self, session_id: str, session_key: str, origin: RouteOrigin) -> None:
        values = origin.session_fields(session_key)
        self._execute(
            _STAMP_ORIGIN,
            (
                values["session_key"],
                values["chat_id"],
                values["chat_type"],
                values["user_id"],
                values["thread_id"],
                session_id,
            ),
        )

    # ------------------------------------------------------------------ re-sent messages

    def delivered(self, session_key: str, message_id: str) -> str | None:
        """The session a platform message id of this key was stored in, if it was."""
        row = self._execute(
            "SELECT value FROM state_meta WHERE key = ?", (delivered_key(session_key, message_id),)
        ).fetchone()
        if row is None:
            # The user turn carries the id in the same write: found even when the process
            # died between storing the turn and remembering the id.
            row = self._execute(
                "SELECT m.session_id FROM sessions s JOIN messages m ON m.session_id = s.id "
                "WHERE s.session_key = ? AND m.role = 'user' AND m.platform_message_id = ? "
                "ORDER BY m.id DESC LIMIT 1",
                (session_key, message_id),
            ).fetchone()
        return None if row is None else str(row[0])

    def mark_delivered(self, session_key: str, message_id: str, session_id: str) -> bool:
        """Remember that the platform message ``message_id`` of this key was stored in
        ``session_id`` (insert-if-absent); whether it was new."""
        with self._transaction():
            added = self._execute(
                "INSERT INTO state_meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (delivered_key(session_key, message_id), session_id),
            ).rowcount
        return bool(added)

    # ------------------------------------------------------------------ home channels

    def set_home(self, platform: str, chat_id: str, thread_id: str | None) -> None:
        """Remember ``chat_id`` (and thread) as the platform's home channel (``/sethome``)."""
        value = json.dumps({"chat_id": chat_id, "thread_id": thread_id})
        with self._transaction():
            self._execute(
                "INSERT INTO state_meta(key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (HOME_CHANNEL_PREFIX + platform, value),
            )

    def home(self, platform: str) -> tuple[str, str | None] | None:
        """The platform's home channel: (chat id, thread id), or None when never set."""
        row = self._execute(
            "SELECT value FROM state_meta WHERE key = ?", (HOME_CHANNEL_PREFIX + platform,)
        ).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return str(data["chat_id"]), data.get("thread_id")

    # ------------------------------------------------------------------ repair-routing

    def orphan_candidates(self) -> list[RepairRow]:
        """Sessions with messages and no routing identity, of an origin that has keyed rows;
        ``/branch`` and delegate children and imported logs are not orphans."""
        return self._repair_rows(
            "s.session_key IS NULL AND s.message_count > 0 "
            "AND coalesce(s.parent_kind, '') NOT IN ('branch', 'delegate') "
            "AND coalesce(s.end_reason, '') NOT IN ('imported', 'superseded_by_repair') "
            "AND s.source IN (SELECT source FROM sessions WHERE session_key IS NOT NULL)"
        )

    def keyed_rows(self, sources: Iterable[str]) -> list[RepairRow]:
        """The keyed (routed at some point) sessions of ``sources`` that are not retired."""
        names = sorted(set(sources))
        if not names:
            return []
        return self._repair_rows(
            f"s.session_key IS NOT NULL AND s.source IN ({_marks(names)}) "
            "AND coalesce(s.end_reason, '') != 'superseded_by_repair'",
            names,
        )

    def _repair_rows(self, where: str, params: Sequence[object] = ()) -> list[RepairRow]:
        rows = self._execute(
            f"SELECT s.id, s.source, s.session_key, s.parent_session_id, s.started_at, "
            f"{_REAL_ACTIVITY}, s.message_count, s.user_id, s.end_reason "
            f"FROM sessions s WHERE {where} ORDER BY s.started_at, s.id{self._binary_order}",
            list(params),
        ).fetchall()
        return [
            RepairRow(str(r[0]), r[1], r[2], r[3], float(r[4]), float(r[5]), int(r[6]), r[7], r[8])
            for r in rows
        ]

    def adopt(
        self, orphan_id: str, donor_id: str, evidence: str, *, now: float | None = None
    ) -> str:
        """Re-attach ``orphan_id`` to the conversation of ``donor_id``: the donor's key and
        origin are stamped on the orphan (values it already has are kept), the key is pointed
        at it and the donor is retired with ``superseded_by_repair``; one transaction.
        Returns the key."""
        moment = time.time() if now is None else now
        with self._transaction():
            donor = self._execute(
                "SELECT session_key, source, chat_id, chat_type, user_id, thread_id "
                "FROM sessions WHERE id = ?",
                (donor_id,),
            ).fetchone()
            if donor is None or donor[0] is None:
                raise SessionNotFound(f"no keyed session {donor_id}")
            key, source, chat_id, chat_type, user_id, thread_id = donor
            self._lock_key(key)
            route = self._execute(
                "SELECT origin FROM gateway_routing WHERE session_key = ?", (key,)
            ).fetchone()
            stored: dict[str, str] = json.loads(route[0]) if route and route[0] else {}
            origin = RouteOrigin(
                platform=source,
                chat_id=chat_id or stored.get("chat_id", ""),
                chat_type=chat_type or stored.get("chat_type", "dm"),
                user_id=user_id or stored.get("user_id"),
                thread_id=thread_id or stored.get("thread_id"),
                user_name=stored.get("user_name"),
                chat_name=stored.get("chat_name"),
            )
            self._stamp_origin(orphan_id, key, origin)
            found = self._execute("SELECT metadata FROM sessions WHERE id = ?", (orphan_id,))
            metadata_row = found.fetchone()
            metadata = json.loads(metadata_row[0]) if metadata_row and metadata_row[0] else {}
            metadata["repaired_routing"] = {"from": donor_id, "evidence": evidence, "at": moment}
            self._execute(
                "UPDATE sessions SET metadata = ? WHERE id = ?", (json.dumps(metadata), orphan_id)
            )
            self._execute(
                "UPDATE sessions SET ended_at = coalesce(ended_at, ?), "
                "end_reason = 'superseded_by_repair' WHERE id = ?",
                (moment, donor_id),
            )
            self._upsert_route(key, orphan_id, origin, moment)
        return str(key)


class RoutingStore(RoutingRows):
    """``gateway_routing`` and the routed session rows, over one :class:`SessionStore`: the
    SQLite :class:`~hermes_core.store.protocol.RoutingTable` (``SessionStore.routing``). Every
    write is one ``BEGIN IMMEDIATE`` transaction, which no other writer interleaves with."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store
        self._db = store.connection

    def _execute(self, sql: str, params: Sequence[object] = ()) -> ResultRows:
        return self._db.execute(sql, tuple(params))

    def _transaction(self) -> AbstractContextManager[object]:
        return write_transaction(self._db)

    def _lock_key(self, session_key: str) -> None:
        """Nothing to take: ``BEGIN IMMEDIATE`` already keeps every other writer out."""

    def _insert_session(self, **columns: Any) -> str:
        return session_writes.insert_session(SqliteSql(self._db), **columns)

    def _session(self, session_id: str) -> Session:
        return self._store.get_session(session_id)

    def _events(self) -> StoreEvents | None:
        return self._store.events


def delivered_key(session_key: str, message_id: str) -> str:
    """The ``state_meta`` key remembering a platform message id of ``session_key``."""
    return f"{DELIVERED_PREFIX}{len(session_key)}:{session_key}:{message_id}"


def _route(row: tuple[Any, ...]) -> Route:
    origin = json.loads(row[3]) if row[3] else {}
    return Route(row[0], row[1], row[2], origin, float(row[4]), row[5])
