"""Which session a chat is in: session keys (SPEC G1/G2) and the routing identity (G4/G5).

:class:`RoutingRules` turns an incoming event into its session key: the G1 forms, with
``group_sessions_per_user`` (default true) and ``thread_sessions_per_user`` (default false),
and platform identity aliases collapsing first (a WhatsApp LID and the phone number of the same
person are one identity once ``gateway.identity_aliases.whatsapp`` maps them).

:class:`Router` owns ``gateway_routing`` (through the store's ``routing`` facet, any
backend) and the
``sessions.json`` mirror. Every event is resolved against the store, never a cache: the chat
goes on in the session of its key with the most recent *real* activity (its last message), so a
stale routing row never wins; nothing older than the key's last intentional reset (``/new``,
``/reset``, a reset policy) is resumed; a routing row that is missing or points elsewhere is
rewritten then (the repair of a routing write that once failed). A chat's first session is
claimed with insert-if-absent (:meth:`RoutingTable.claim_route`): when two gateways on one
database see the same new chat at once, one creates the session and the other adopts it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hermes_hookspecs import PlatformEvent, Session, build_session_key

from hermes_core.store.routed_sessions import KeyedSession, RouteOrigin

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.store.protocol import Store

    from .mirror import SessionsMirror


@dataclass(frozen=True, slots=True)
class RoutingRules:
    """How events become session keys."""

    group_sessions_per_user: bool = True
    thread_sessions_per_user: bool = False
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """platform → {alias: canonical identifier}."""

    @classmethod
    def from_config(cls, config: Config) -> RoutingRules:
        """The rules ``config.yaml`` asks for."""
        raw = config["gateway.identity_aliases"] or {}
        aliases = {str(platform): dict(mapping or {}) for platform, mapping in raw.items()}
        return cls(
            group_sessions_per_user=bool(config["group_sessions_per_user"]),
            thread_sessions_per_user=bool(config["thread_sessions_per_user"]),
            aliases=aliases,
        )

    def canonical(self, platform: str, identifier: str | None) -> str | None:
        """The one identity an alias stands for (followed through chains, cycles stop)."""
        if identifier is None:
            return None
        mapping = self.aliases.get(platform, {})
        seen = {identifier}
        while identifier in mapping and mapping[identifier] not in seen:
            identifier = mapping[identifier]
            seen.add(identifier)
        return identifier

    def origin(self, event: PlatformEvent) -> RouteOrigin:
        """The event's place on its platform, identities made canonical."""
        chat_id = event.chat_id
        if event.chat_type == "dm":
            # A DM is keyed by the other person: their aliases collapse too (WhatsApp).
            chat_id = self.canonical(event.platform, chat_id) or chat_id
        return RouteOrigin(
            platform=event.platform,
            chat_id=chat_id,
            chat_type=event.chat_type,
            user_id=self.canonical(event.platform, event.user_id),
            thread_id=event.thread_id,
            user_name=event.user_name,
            chat_name=event.chat_name,
        )

    def key_for(self, event: PlatformEvent) -> str:
        """The session key of the event's conversation (SPEC G1)."""
        origin = self.origin(event)
        return build_session_key(
            origin.platform,
            event.chat_type,
            origin.chat_id,
            origin.user_id,
            origin.thread_id,
            group_sessions_per_user=self.group_sessions_per_user,
            thread_sessions_per_user=self.thread_sessions_per_user,
        )


@dataclass(frozen=True, slots=True)
class Resolution:
    """The session an event goes to."""

    session: Session
    created: bool = False
    """True when the chat had no session to continue (its first message, or after a reset)."""
    repaired: bool = False
    """True when the routing row was missing or pointed at another session and was rewritten."""


class Router:
    """Resolves session keys to sessions and keeps ``gateway_routing`` and its mirror."""

    def __init__(
        self,
        store: Store,
        *,
        mirror: SessionsMirror | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.table = store.routing
        self._mirror = mirror
        self._clock = clock

    def current(self, session_key: str) -> KeyedSession | None:
        """The session the key's chat continues, without creating or repairing anything."""
        boundary = self.table.reset_boundary(session_key)
        candidates = self.table.keyed_sessions(session_key)
        route = self.table.route(session_key)
        routed_id = route.session_id if route is not None else None
        if routed_id is not None and all(c.session_id != routed_id for c in candidates):
            routed = self._routed_unkeyed(routed_id)
            if routed is not None:
                candidates.append(routed)
                candidates.sort(
                    key=lambda s: (s.real_activity, s.message_count > 0, s.started_at),
                    reverse=True,
                )
        for candidate in candidates:
            if boundary is None or max(candidate.real_activity, candidate.started_at) >= boundary:
                return candidate
        return None

    def _routed_unkeyed(self, session_id: str) -> KeyedSession | None:
        """A session a routing row points at although it does not carry the key (written by
        an older version): it competes on its real activity like the others."""
        try:
            session = self.store.get_session(session_id)
        except LookupError:
            return None
        if session.session_key is not None:
            return None  # carries another key, or was ended for good: not this chat's
        probe = KeyedSession(
            session.id,
            session.started_at,
            session.ended_at,
            session.end_reason,
            session.message_count,
            self.table.real_activity(session.id),
        )
        return probe if probe.resumable else None

    def resolve(
        self, session_key: str, origin: RouteOrigin, *, model: str | None = None
    ) -> Resolution:
        """The session the chat goes on in, creating it (with its routing row, in one
        transaction) when there is none, and rewriting a missing or stale routing row."""
        # The routing row is read BEFORE the key's sessions: a session another gateway creates
        # in between is then seen by claim_route as a row that moved on (adopted), never
        # taken for the row this gateway expected (which would start a second session).
        route = self.table.route(session_key)
        found = self.current(session_key)
        if found is None:
            claimed, created = self.table.claim_route(
                session_key,
                origin,
                expected=route.session_id if route is not None else None,
                model=model,
                now=self._clock(),
            )
            self._write_mirror()
            return Resolution(claimed, created=created)
        session = self.store.get_session(found.session_id)
        stale = route is None or route.session_id != found.session_id
        if stale or session.session_key is None or not session.is_active:
            self.table.point(session_key, found.session_id, origin, now=self._clock())
            self._write_mirror()
            session = self.store.get_session(found.session_id)
        return Resolution(session, repaired=stale)

    def start_new(
        self,
        session_key: str,
        origin: RouteOrigin,
        *,
        previous: str | None,
        reason: str,
        title: str | None = None,
        model: str | None = None,
    ) -> Session:
        """End ``previous`` with ``reason`` and start the key's next session, linked to it as
        its ``reset`` child, in one transaction (``/new``, ``/reset``, a reset policy)."""
        created = self.table.create_routed_session(
            session_key,
            origin,
            title=title,
            model=model,
            replaces=(previous, reason) if previous else None,
            parent=(previous, "reset") if previous else None,
            now=self._clock(),
        )
        self._write_mirror()
        return created

    def follow(self, session_key: str, session_id: str, origin: RouteOrigin) -> None:
        """Point the key at a session the turn engine created (a ``/branch`` child, a
        compression continuation) and stamp the key on it."""
        self.table.point(session_key, session_id, origin, now=self._clock())
        self._write_mirror()

    def forget(self, session_key: str) -> None:
        """Drop the key's routing row (a one-shot conversation's): its sessions stay, and a
        later event with the same key finds them by the key they carry."""
        self.table.clear(session_key)
        self._write_mirror()

    def _write_mirror(self) -> None:
        if self._mirror is not None:
            self._mirror.write(self.table.routes())
