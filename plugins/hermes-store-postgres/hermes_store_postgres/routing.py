"""The routing table in PostgreSQL: ``hermes_core.store.protocol.RoutingTable`` — the gateway's
routed sessions and the raw ``gateway_routing`` rows — with the semantics of the SQLite one
(``hermes_core/store/routed_sessions.py``).

Every write is one transaction. A write that concerns one session key first takes a
transaction-scoped advisory lock on the key (``pg_advisory_xact_lock``), so two gateways (or
two workers) on one database decide a key's session one after the other: in
:meth:`PostgresRouting.claim_route` the second reads the first one's routing row and
adopts its session instead of creating another.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import ParentKind, Session, StoreEvents

from hermes_core.store.errors import SessionNotFound
from hermes_core.store.routed_sessions import (
    BOUNDARY_END_REASONS,
    HOME_CHANNEL_PREFIX,
    RECOVERABLE_END_REASONS,
    KeyedSession,
    RepairRow,
    Route,
    RouteOrigin,
    delivered_key,
)
from hermes_core.store.routing import RouteRecord

from . import writes

if TYPE_CHECKING:
    import psycopg

    Db = psycopg.Connection[tuple[Any, ...]]

_REAL_ACTIVITY = (
    "coalesce((SELECT m.timestamp FROM messages m WHERE m.session_id = s.id "
    "ORDER BY m.id DESC LIMIT 1), s.started_at)"
)
_ROUTE_COLUMNS = "session_key, session_id, platform, origin, updated_at, expires_at"
"""The columns of a row, in :class:`RouteRecord` order."""
_LOCK_CLASS = 0x4852  # "HR": the advisory-lock namespace of routing keys


class PostgresRouting:
    """``gateway_routing`` and the routed session rows of one PostgreSQL store."""

    def __init__(
        self,
        db: Db,
        get_session: Callable[[str], Session],
        events: StoreEvents | None,
    ) -> None:
        self._db = db
        self._get_session = get_session
        self._events = events

    # ------------------------------------------------------------------ reads

    def route(self, session_key: str) -> Route | None:
        """The routing row of ``session_key``, if any."""
        row = self._db.execute(
            f"SELECT {_ROUTE_COLUMNS} FROM gateway_routing WHERE session_key = %s",
            (session_key,),
        ).fetchone()
        return _route(row) if row else None

    def routes(self) -> list[Route]:
        """Every routing row, by key."""
        rows = self._db.execute(
            f'SELECT {_ROUTE_COLUMNS} FROM gateway_routing ORDER BY session_key COLLATE "C"'
        ).fetchall()
        return [_route(row) for row in rows]

    def record(self, session_key: str) -> RouteRecord | None:
        """The raw row of ``session_key`` (origin as stored JSON text), if any."""
        row = self._db.execute(
            f"SELECT {_ROUTE_COLUMNS} FROM gateway_routing WHERE session_key = %s",
            (session_key,),
        ).fetchone()
        return None if row is None else RouteRecord(*row)

    def records(self, platform: str | None = None) -> list[RouteRecord]:
        """Every raw row (of ``platform``), by key: what migrate copies."""
        where, params = ("WHERE platform = %s ", [platform]) if platform is not None else ("", [])
        rows = self._db.execute(
            f'SELECT {_ROUTE_COLUMNS} FROM gateway_routing {where}ORDER BY session_key COLLATE "C"',
            params,
        ).fetchall()
        return [RouteRecord(*row) for row in rows]

    def set_route(self, record: RouteRecord) -> None:
        """Insert or replace the raw row of ``record.session_key`` (one ``INSERT … ON
        CONFLICT DO UPDATE``: two writers of one key leave one row)."""
        self._db.execute(
            f"INSERT INTO gateway_routing ({_ROUTE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s) "
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
        deleted = self._db.execute(
            "DELETE FROM gateway_routing WHERE session_key = %s", (session_key,)
        ).rowcount
        return bool(deleted)

    def keyed_sessions(self, session_key: str) -> list[KeyedSession]:
        """The sessions carrying ``session_key`` that recovery may resume, newest activity
        first (ties: the one with messages, then the later start)."""
        rows = self._db.execute(
            f"SELECT s.id, s.started_at, s.ended_at, s.end_reason, s.message_count, "
            f"{_REAL_ACTIVITY} FROM sessions s WHERE s.session_key = %s "
            "AND (s.ended_at IS NULL OR s.end_reason = ANY(%s))",
            (session_key, sorted(RECOVERABLE_END_REASONS)),
        ).fetchall()
        found = [
            KeyedSession(str(r[0]), float(r[1]), r[2], r[3], int(r[4]), float(r[5])) for r in rows
        ]
        found.sort(key=lambda s: (s.real_activity, s.message_count > 0, s.started_at), reverse=True)
        return found

    def reset_boundary(self, session_key: str) -> float | None:
        """When the key was last reset on purpose (``/new``, ``/reset``, a reset policy)."""
        row = self._db.execute(
            "SELECT max(ended_at) FROM sessions WHERE session_key = %s AND end_reason = ANY(%s)",
            (session_key, sorted(BOUNDARY_END_REASONS)),
        ).fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def real_activity(self, session_id: str) -> float:
        """The time of the session's last message, else its start."""
        row = self._db.execute(
            f"SELECT {_REAL_ACTIVITY} FROM sessions s WHERE s.id = %s", (session_id,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {session_id}")
        return float(row[0])

    # ------------------------------------------------------------------ writes

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
        """Create a gateway session and point ``session_key`` at it, in one transaction;
        ``replaces`` = (session id, end reason) ends that session in it too."""
        moment = time.time() if now is None else now
        ended: str | None = None
        with self._db.transaction():
            _lock_key(self._db, session_key)
            if replaces is not None:
                old_id, reason = replaces
                changed = self._db.execute(
                    "UPDATE sessions SET ended_at = %s, end_reason = %s "
                    "WHERE id = %s AND ended_at IS NULL",
                    (moment, reason, old_id),
                ).rowcount
                ended = old_id if changed else None
            session_id = self._insert(session_key, origin, moment, title, model, parent)
        if self._events is not None and ended is not None and replaces is not None:
            self._events.session_ended(self._get_session(ended), replaces[1])
        created = self._get_session(session_id)
        if self._events is not None:
            self._events.session_started(created)
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
        """Insert-if-absent for a key's next session under the key's advisory lock: created
        when the routing row still points at ``expected``, else the winner's session."""
        moment = time.time() if now is None else now
        with self._db.transaction():
            _lock_key(self._db, session_key)
            row = self._db.execute(
                "SELECT session_id FROM gateway_routing WHERE session_key = %s", (session_key,)
            ).fetchone()
            winner = row[0] if row else None
            created = winner is None or winner == expected
            if created:
                session_id = self._insert(session_key, origin, moment, None, model, None)
            else:
                session_id = str(winner)
        session = self._get_session(session_id)
        if created and self._events is not None:
            self._events.session_started(session)
        return session, created

    def _insert(
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
        session_id = writes.insert_session(
            self._db,
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
        _upsert_route(self._db, session_key, session_id, origin, moment)
        return session_id

    def point(
        self, session_key: str, session_id: str, origin: RouteOrigin, *, now: float | None = None
    ) -> None:
        """Point ``session_key`` at an existing session, stamping the key and origin where
        they are missing and reopening a session a dead process left ended."""
        moment = time.time() if now is None else now
        with self._db.transaction():
            _lock_key(self._db, session_key)
            if not writes.session_exists(self._db, session_id):
                raise SessionNotFound(f"no session {session_id}")
            _stamp_origin(self._db, session_id, session_key, origin)
            self._db.execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL "
                "WHERE id = %s AND end_reason = ANY(%s)",
                (session_id, sorted(RECOVERABLE_END_REASONS)),
            )
            _upsert_route(self._db, session_key, session_id, origin, moment)

    def clear(self, session_key: str) -> None:
        """Forget the routing row of ``session_key`` (its sessions stay)."""
        self._db.execute("DELETE FROM gateway_routing WHERE session_key = %s", (session_key,))

    # ------------------------------------------------------------------ home channels

    def set_home(self, platform: str, chat_id: str, thread_id: str | None) -> None:
        """Remember ``chat_id`` (and thread) as the platform's home channel."""
        value = json.dumps({"chat_id": chat_id, "thread_id": thread_id})
        self._db.execute(
            "INSERT INTO state_meta(key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (HOME_CHANNEL_PREFIX + platform, value),
        )

    def home(self, platform: str) -> tuple[str, str | None] | None:
        """The platform's home channel: (chat id, thread id), or None when never set."""
        row = self._db.execute(
            "SELECT value FROM state_meta WHERE key = %s", (HOME_CHANNEL_PREFIX + platform,)
        ).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return str(data["chat_id"]), data.get("thread_id")

    # ------------------------------------------------------------------ re-sent messages

    def delivered(self, session_key: str, message_id: str) -> str | None:
        """The session a platform message id of this key was stored in, if it was."""
        row = self._db.execute(
            "SELECT value FROM state_meta WHERE key = %s", (delivered_key(session_key, message_id),)
        ).fetchone()
        if row is None:
            # The user turn carries the id in the same write (see the SQLite routing).
            row = self._db.execute(
                "SELECT m.session_id FROM sessions s JOIN messages m ON m.session_id = s.id "
                "WHERE s.session_key = %s AND m.role = 'user' AND m.platform_message_id = %s "
                "ORDER BY m.id DESC LIMIT 1",
                (session_key, message_id),
            ).fetchone()
        return None if row is None else str(row[0])

    def mark_delivered(self, session_key: str, message_id: str, session_id: str) -> bool:
        """Remember where a platform message id of this key was stored (insert-if-absent);
        whether it was new."""
        added = self._db.execute(
            "INSERT INTO state_meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
            (delivered_key(session_key, message_id), session_id),
        ).rowcount
        return bool(added)

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
        """The keyed sessions of ``sources`` that are not retired."""
        names = sorted(set(sources))
        if not names:
            return []
        return self._repair_rows(
            "s.session_key IS NOT NULL AND s.source = ANY(%s) "
            "AND coalesce(s.end_reason, '') != 'superseded_by_repair'",
            [names],
        )

    def _repair_rows(self, where: str, params: Sequence[object] = ()) -> list[RepairRow]:
        rows = self._db.execute(
            f"SELECT s.id, s.source, s.session_key, s.parent_session_id, s.started_at, "
            f"{_REAL_ACTIVITY}, s.message_count, s.user_id, s.end_reason "
            f'FROM sessions s WHERE {where} ORDER BY s.started_at, s.id COLLATE "C"',
            list(params),
        ).fetchall()
        return [
            RepairRow(str(r[0]), r[1], r[2], r[3], float(r[4]), float(r[5]), int(r[6]), r[7], r[8])
            for r in rows
        ]

    def adopt(
        self, orphan_id: str, donor_id: str, evidence: str, *, now: float | None = None
    ) -> str:
        """Re-attach ``orphan_id`` to the conversation of ``donor_id`` and retire the donor
        with ``superseded_by_repair``, in one transaction; returns the key."""
        moment = time.time() if now is None else now
        with self._db.transaction():
            donor = self._db.execute(
                "SELECT session_key, source, chat_id, chat_type, user_id, thread_id "
                "FROM sessions WHERE id = %s",
                (donor_id,),
            ).fetchone()
            if donor is None or donor[0] is None:
                raise SessionNotFound(f"no keyed session {donor_id}")
            key, source, chat_id, chat_type, user_id, thread_id = donor
            _lock_key(self._db, key)
            route = self._db.execute(
                "SELECT origin FROM gateway_routing WHERE session_key = %s", (key,)
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
            _stamp_origin(self._db, orphan_id, key, origin)
            found = self._db.execute(
                "SELECT metadata FROM sessions WHERE id = %s", (orphan_id,)
            ).fetchone()
            metadata = json.loads(found[0]) if found and found[0] else {}
            metadata["repaired_routing"] = {"from": donor_id, "evidence": evidence, "at": moment}
            self._db.execute(
                "UPDATE sessions SET metadata = %s WHERE id = %s",
                (json.dumps(metadata), orphan_id),
            )
            self._db.execute(
                "UPDATE sessions SET ended_at = coalesce(ended_at, %s), "
                "end_reason = 'superseded_by_repair' WHERE id = %s",
                (moment, donor_id),
            )
            _upsert_route(self._db, key, orphan_id, origin, moment)
        return str(key)


def _lock_key(db: Db, session_key: str) -> None:
    db.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_CLASS, session_key))


def _route(row: tuple[Any, ...]) -> Route:
    origin = json.loads(row[3]) if row[3] else {}
    return Route(row[0], row[1], row[2], origin, float(row[4]), row[5])


def _upsert_route(
    db: Db, session_key: str, session_id: str, origin: RouteOrigin, now: float
) -> None:
    db.execute(
        "INSERT INTO gateway_routing(session_key, session_id, platform, origin, updated_at) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session_key) DO UPDATE SET "
        "session_id = excluded.session_id, platform = excluded.platform, "
        "origin = excluded.origin, updated_at = excluded.updated_at",
        (session_key, session_id, origin.platform, json.dumps(origin.as_json()), now),
    )


def _stamp_origin(db: Db, session_id: str, session_key: str, origin: RouteOrigin) -> None:
    values = origin.session_fields(session_key)
    db.execute(
        "UPDATE sessions SET session_key = coalesce(session_key, %s), "
        "chat_id = coalesce(chat_id, %s), chat_type = coalesce(chat_type, %s), "
        "user_id = coalesce(user_id, %s), thread_id = coalesce(thread_id, %s) WHERE id = %s",
        (
            values["session_key"],
            values["chat_id"],
            values["chat_type"],
            values["user_id"],
            values["thread_id"],
            session_id,
        ),
    )
