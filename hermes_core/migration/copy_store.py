"""``migrate_store``: copy a whole session store into another, through the store protocol
alone, so any backend migrates to any other (``state.db`` → PostgreSQL, and back).

What is copied: every session with every field (ids, titles and where they came from, times,
end reasons, lineage and delegate links, pins, archive flags, usage, workspace, metadata,
model settings, system prompt), every message with every field, the gateway routing rows,
the gateway inbox (messages a gateway acknowledged and has not turned yet: the target's
gateway answers them), the import bookkeeping, and every ``state_meta`` key
(:meth:`Store.list_state`) except those that describe the source store itself
(:data:`SOURCE_ONLY_STATE_KEYS`) and the inbox rows' claims (held by gateways of the source). Message ids are
renumbered by the target (each store numbers its own rows); their order is kept, and the
marks of an unfinished import append (``import_append:…``, which name the last message kept)
are renumbered with them.

How: parents before children (the links must point at copied rows), each session's row
first, then its messages in batches of ``batch`` (one transaction each). An interruption
leaves at most one session half-copied; running again skips every session already whole in
the target (same :func:`session_digest`), and deletes and copies again one that is not.
The copy runs as one bulk load of the target (``target.imports.bulk_load()``): a
PostgreSQL target holding few messages builds its full-text indexes once at the end. At the
end every count and every session's digest is compared; a difference raises
:class:`MigrationError`. A target holding sessions the source does not have is refused
before anything is written. Plugins hear nothing: the sessions were started (and ended)
before, in the source.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core.lifecycle import state
from hermes_core.store.errors import SessionNotFound, StoreError
from hermes_core.store.imports import APPEND_MARK_PREFIX
from hermes_core.store.inbox import CLAIM_PREFIX

if TYPE_CHECKING:
    from hermes_hookspecs import Message, Session

    from hermes_core.store.inbox import InboxEntry
    from hermes_core.store.protocol import Store

SOURCE_ONLY_STATE_KEYS = frozenset({state.LOCK, state.LAST_VACUUM})
"""The ``state_meta`` keys that stay behind: the clean-up lock belongs to a process working on
the source, and the last VACUUM compacted the source's own file. Every other key travels."""
_MESSAGE_DERIVED = frozenset({"message_count", "tool_call_count"})
"""Session counters the target derives from the messages it is given."""
_GIVEN_SEPARATELY = frozenset({
    "id", "source", "started_at", "title", "system_prompt", "model_config", "metadata",
    "parent_session_id", "parent_kind",
})  # fmt: skip


class MigrationError(StoreError):
    """The copy could not be made or does not match its source; the message says how."""


@dataclass(frozen=True, slots=True)
class MigrationProgress:
    """Where a migration is: sessions looked at out of all, and what happened to them."""

    done: int
    total: int
    copied: int
    skipped: int
    messages: int


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What a finished (and verified) migration did."""

    sessions: int
    messages: int
    copied: int
    """Sessions written by this run."""
    skipped: int
    """Sessions already whole in the target (an earlier, interrupted run copied them)."""
    redone: int
    """Sessions found half-copied in the target, deleted and copied again."""
    routes: int
    import_files: int


def _message_record(message: Message) -> list[Any]:
    return [
        message.role,
        message.content,
        [[c.name, c.arguments, c.id] for c in message.tool_calls],
        message.tool_call_id,
        message.tool_name,
        message.reasoning,
        message.timestamp,
        message.token_count,
        message.platform_message_id,
    ]


def session_digest(store: Store, session_id: str) -> str:
    """SHA-256 over every field of the session and of each of its messages, in order (message
    ids left out: they are the store's own numbering)."""
    session = store.get_session(session_id)
    digest = hashlib.sha256()
    fields = dataclasses.asdict(session)
    digest.update(json.dumps(fields, sort_keys=True, default=str).encode())
    for message in store.iter_messages(session_id):
        digest.update(b"\n")
        digest.update(json.dumps(_message_record(message), default=str).encode())
    return digest.hexdigest()


def _creatable_fields(session: Session) -> dict[str, Any]:
    from hermes_core.store.validation import CREATABLE_FIELDS

    values = dataclasses.asdict(session)
    return {
        name: values[name]
        for name in CREATABLE_FIELDS
        if name not in _GIVEN_SEPARATELY and name not in _MESSAGE_DERIVED
    }


def _copy_checked(source: Store, target: Store, session_id: str, batch: int) -> int:
    """:func:`_copy_session`, with the target's refusal of a value (a message an older Hermes
    stored with a role no store accepts now) as one :class:`MigrationError` line; the copy
    goes on from this session when the cause is fixed and the command run again."""
    try:
        return _copy_session(source, target, session_id, batch)
    except ValueError as error:
        raise MigrationError(
            f"session {session_id}: the target store refuses it: {error}"
        ) from None


def _copy_session(source: Store, target: Store, session_id: str, batch: int) -> int:
    """Write one session and its messages into ``target``; returns the messages copied."""
    session = source.get_session(session_id)
    target.create_session(
        session.source,
        session_id=session.id,
        title=session.title,
        started_at=session.started_at,
        system_prompt=session.system_prompt,
        model_config=session.model_config,
        metadata=session.metadata or None,
        parent_session_id=session.parent_session_id,
        parent_kind=session.parent_kind,
        **_creatable_fields(session),
    )
    copied = 0
    pending: list[Message] = []
    for message in source.iter_messages(session_id, batch=batch):
        pending.append(dataclasses.replace(message, id=None, session_id=None))
        if len(pending) >= batch:
            copied += target.imports.append_messages(
                session_id, pending, default_timestamp=session.started_at
            )
            pending = []
    if pending:
        copied += target.imports.append_messages(
            session_id, pending, default_timestamp=session.started_at
        )
    return copied


def _check_ids(source_ids: list[str]) -> None:
    """A store made before ids were checked may hold ids every store now refuses (``../x``):
    refused before anything is written, with the way to give those sessions new ids."""
    from hermes_core.store.ids import looks_like_session_id, shown_id

    outside = [session_id for session_id in source_ids if not looks_like_session_id(session_id)]
    if outside:
        raise MigrationError(
            f"{len(outside)} session(s) have an id no store accepts any more (first: "
            f"{shown_id(outside[0])}): export them with 'hermes sessions export --format jsonl', "
            "delete them and import the file (they get new ids), then migrate again; "
            "nothing was written"
        )


def _check_target(source_ids: set[str], target: Store) -> None:
    foreign = [s.id for s in target.iter_selected() if s.id not in source_ids]
    if foreign:
        shown = ", ".join(foreign[:3]) + (" …" if len(foreign) > 3 else "")
        raise MigrationError(
            f"the target store already holds {len(foreign)} session(s) the source does not "
            f"have ({shown}); migrate into an empty store (nothing was written)"
        )


def migrate_store(
    source: Store,
    target: Store,
    *,
    batch: int = 500,
    on_progress: Callable[[MigrationProgress], None] | None = None,
) -> MigrationReport:
    """Copy everything of ``source`` into ``target`` and verify it (see the module doc)."""
    from hermes_core.selection.filters import SessionFilter

    order = list(source.iter_parents_first(SessionFilter()))
    _check_ids(order)
    _check_target(set(order), target)
    copied = skipped = redone = messages = 0
    with target.imports.bulk_load():  # the indexes of a new store are built at its end
        for done, session_id in enumerate(order, start=1):
            try:
                existing: str | None = session_digest(target, session_id)
            except SessionNotFound:
                existing = None
            if existing is not None and existing == session_digest(source, session_id):
                skipped += 1
            else:
                if existing is not None:
                    # Half-copied by an interrupted run (or its parent was redone): start over.
                    # Its delegates go too and are copied again when their turn comes.
                    target.delete_sessions([session_id])
                    redone += 1
                messages += _copy_checked(source, target, session_id, batch)
                copied += 1
            if on_progress is not None:
                on_progress(MigrationProgress(done, len(order), copied, skipped, messages))
        # Delegates deleted with a redone parent after their own turn are copied again now.
        for session_id in order:
            try:
                target.get_session(session_id)
            except SessionNotFound:
                messages += _copy_checked(source, target, session_id, batch)
    routes = source.routing.records()
    for route in routes:
        target.routing.set_route(route)
    inbox = source.routing.inbox_pending()
    for entry in inbox:
        # A row copied before (a second run), or whose turn the target holds, adds nothing.
        target.routing.inbox_add(
            entry.session_key, entry.platform, entry.message_id, entry.event,
            now=entry.received_at,
        )  # fmt: skip
    files = source.imports.load_files()
    for record in files.values():
        target.imports.update_file(record)
    target.write_state(_travelling_state(source, target))
    _verify(source, target, order, len(routes), len(files))
    _verify_inbox(inbox, target)
    total_messages = source.stats().total_messages
    return MigrationReport(len(order), total_messages, copied, skipped, redone, len(routes),
                           len(files))  # fmt: skip


def _travelling_state(source: Store, target: Store) -> dict[str, str]:
    """Every ``state_meta`` key of ``source`` but :data:`SOURCE_ONLY_STATE_KEYS`, with the
    import append marks renumbered into the target's message ids."""
    travelling = {
        key: value
        for key, value in source.list_state().items()
        if key not in SOURCE_ONLY_STATE_KEYS and not key.startswith(CLAIM_PREFIX)
    }
    for key, value in travelling.items():
        if key.startswith(APPEND_MARK_PREFIX):
            travelling[key] = _renumbered_mark(source, target, value)
    return travelling


def _renumbered_mark(source: Store, target: Store, value: str) -> str:
    """An append mark (``{"session_id", "last_id"}``) naming the target's message at the place
    of the source's ``last_id``; unchanged when it cannot be read or its session is gone."""
    try:
        mark = json.loads(value)
        session_id, last_id = str(mark["session_id"]), int(mark["last_id"])
        kept = sum(1 for m in source.iter_messages(session_id) if (m.id or 0) <= last_id)
        target_ids = [m.id or 0 for m in target.iter_messages(session_id)]
    except (ValueError, KeyError, TypeError, SessionNotFound):
        return value
    mark["last_id"] = target_ids[kept - 1] if 0 < kept <= len(target_ids) else 0
    return json.dumps(mark)


def _verify_inbox(inbox: list[InboxEntry], target: Store) -> None:
    """Every inbox row of the source is in the target's inbox, or its turn in the target."""
    there = {(e.session_key, e.message_id) for e in target.routing.inbox_pending()}
    for entry in inbox:
        if (entry.session_key, entry.message_id) in there:
            continue
        if target.routing.delivered(entry.session_key, entry.message_id) is None:
            raise MigrationError(
                f"verification failed: the gateway inbox row of {entry.session_key} "
                f"(message {entry.message_id}) is not in the target"
            )


def _verify(source: Store, target: Store, order: list[str], routes: int, files: int) -> None:
    """Counts, then every session's digest, must be the same on both sides."""
    mine, theirs = source.stats(), target.stats()
    for what, expected, found in (
        ("sessions", mine.total_sessions, theirs.total_sessions),
        ("messages", mine.total_messages, theirs.total_messages),
        ("routing rows", routes, len(target.routing.records())),
        ("import records", files, len(target.imports.load_files())),
    ):
        if expected != found:
            raise MigrationError(
                f"verification failed: {found} {what} in the target, {expected} in the source"
            )
    for session_id in order:
        if session_digest(source, session_id) != session_digest(target, session_id):
            raise MigrationError(
                f"verification failed: session {session_id} differs in the target "
                "(run the migration again to copy it anew)"
            )
