"""Loading one :class:`SessionRecord` at a time, as exporters receive them.

Only the record being handed out is in memory: messages are read from the store when the
record is built, and nothing is kept once the exporter moves on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from hermes_hookspecs import Message, Session, SessionRecord

from hermes_core.store.errors import SessionNotFound
from hermes_core.store.protocol import Store


def _messages(store: Store, session_id: str, user_prompts_only: bool) -> Iterable[Message]:
    for message in store.iter_messages(session_id):
        if not user_prompts_only or message.role == "user":
            yield message


def load_record(
    store: Store, session_id: str, *, user_prompts_only: bool = False
) -> SessionRecord:
    """One session with its messages (only the user's, with ``user_prompts_only``) and the
    ids of its delegate children."""
    session = store.get_session(session_id)
    return SessionRecord(
        session=session,
        messages=list(_messages(store, session_id, user_prompts_only)),
        children=store.delegate_children(session_id),
    )


def load_lineage_record(
    store: Store, lineage: Sequence[str], *, user_prompts_only: bool = False
) -> SessionRecord:
    """A compression lineage (ids oldest first) as one record: the first session with the
    lineage's end, activity and totals, every segment's messages in order, every segment's
    delegates as children, and ``lineage`` set."""
    sessions = _still_there(store, lineage)
    if len(sessions) == 1:
        return load_record(store, sessions[0].id, user_prompts_only=user_prompts_only)
    lineage = [session.id for session in sessions]
    messages: list[Message] = []
    children: list[str] = []
    for session in sessions:
        messages.extend(_messages(store, session.id, user_prompts_only))
        children.extend(store.delegate_children(session.id))
    return SessionRecord(
        session=_joined(sessions),
        messages=messages,
        children=tuple(children),
        lineage=tuple(lineage),
    )


def _still_there(store: Store, lineage: Sequence[str]) -> list[Session]:
    """The sessions of ``lineage`` that still exist: another process (a prune, a delete) may
    have removed some since the selection was read. Raises :class:`SessionNotFound` when
    none is left."""
    sessions: list[Session] = []
    for session_id in lineage:
        try:
            sessions.append(store.get_session(session_id))
        except SessionNotFound:
            continue
    if not sessions:
        raise SessionNotFound(f"no session {lineage[0]}")
    return sessions


def _joined(sessions: Sequence[Session]) -> Session:
    first, last = sessions[0], sessions[-1]
    actual = [s.cost_actual_usd for s in sessions if s.cost_actual_usd is not None]
    estimated = [s.cost_estimated_usd for s in sessions if s.cost_estimated_usd is not None]
    return dataclasses.replace(
        first,
        ended_at=last.ended_at,
        end_reason=last.end_reason,
        last_active_at=max(
            (s.last_active_at for s in sessions if s.last_active_at is not None),
            default=first.last_active_at,
        ),
        message_count=sum(s.message_count for s in sessions),
        tool_call_count=sum(s.tool_call_count for s in sessions),
        input_tokens=sum(s.input_tokens for s in sessions),
        output_tokens=sum(s.output_tokens for s in sessions),
        cache_read_tokens=sum(s.cache_read_tokens for s in sessions),
        cache_write_tokens=sum(s.cache_write_tokens for s in sessions),
        cost_actual_usd=sum(actual) if actual else None,
        cost_estimated_usd=sum(estimated) if estimated else None,
        pinned=any(s.pinned for s in sessions),
    )
