"""Storing one foreign conversation: a new session, or new turns appended to its session.

The importer's ``ImportedSession`` is read in two steps: its ``messages`` stream first (in
batches, each committed on its own), then the rest of its fields — an importer may fill the
title, end time, token usage, model and cursor while its messages are being read, since a
streaming reader only knows them at the end.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hookspecs import ImportedSession, Message

from hermes_core.store.imports import ImportedTotals, ImportFileRecord

from .batches import message_batches
from .outcomes import StoredSession

if TYPE_CHECKING:
    from hermes_core.store.protocol import ImportBookkeeping

END_REASON = "imported"


def provenance(importer: str, path: Path, foreign_id: str, imported_at: float) -> dict[str, Any]:
    """What ``metadata.imported_from`` records of an import."""
    return {
        "tool": importer,
        "path": str(path),
        "foreign_id": foreign_id,
        "imported_at": imported_at,
    }


def store_new_conversation(
    store: ImportBookkeeping,
    imported: ImportedSession,
    *,
    importer: str,
    path: Path,
    imported_at: float,
    parent_session_id: str | None = None,
    bookkeeping: ImportFileRecord | None = None,
    fallback_title: str | None = None,
) -> StoredSession | None:
    """Store ``imported`` as a new ended session (a delegate of ``parent_session_id`` when
    given); None when it holds no message ("no conversation": nothing is written). Without a
    title hint from the importer the session is titled ``fallback_title``."""
    messages = iter(imported.messages)
    first = _first_message(messages)
    if first is None:
        return None
    started = imported.started_at
    if started is None:
        started = first.timestamp if first.timestamp is not None else imported_at
    session_id = store.create_session(
        source=imported.source,
        started_at=started,
        parent_session_id=parent_session_id,
        parent_kind="delegate" if parent_session_id is not None else None,
        metadata={"imported_from": provenance(importer, path, imported.foreign_id, imported_at)},
        fields={
            "cwd": imported.cwd,
            "git_branch": imported.git_branch,
            "model": imported.model,
        },
        bookkeeping=bookkeeping,
    )
    written, last_timestamp = _store_messages(store, session_id, first, messages, started)
    title = store.finish_session(
        session_id,
        _totals(imported, last_timestamp, title=True, fallback_title=fallback_title),
    )
    return StoredSession(
        session_id=session_id,
        title=title,
        messages=written,
        delegate=parent_session_id is not None,
    )


def append_to_conversation(
    store: ImportBookkeeping,
    session_id: str,
    imported: ImportedSession,
    *,
    appended_at: float,
) -> int:
    """Append the turns of ``imported`` (read from a cursor) to ``session_id``; the end time,
    token totals and model follow. Returns how many messages were appended."""
    messages = iter(imported.messages)
    first = _first_message(messages)
    written, last_timestamp = 0, None
    if first is not None:
        start = first.timestamp if first.timestamp is not None else appended_at
        written, last_timestamp = _store_messages(store, session_id, first, messages, start)
    totals = _totals(imported, last_timestamp, title=False)
    store.finish_session(
        session_id,
        ImportedTotals(
            title_proposal=None,
            ended_at=totals.ended_at if written else None,
            end_reason=END_REASON if written else None,
            input_tokens=totals.input_tokens,
            output_tokens=totals.output_tokens,
            cache_read_tokens=totals.cache_read_tokens,
            cache_write_tokens=totals.cache_write_tokens,
            git_branch=totals.git_branch,
            model=totals.model,
            metadata_updates={"appended_at": appended_at} if written else None,
        ),
    )
    return written


def _first_message(messages: Iterator[Message]) -> Message | None:
    return next(messages, None)


def _store_messages(
    store: ImportBookkeeping,
    session_id: str,
    first: Message,
    rest: Iterator[Message],
    start: float,
) -> tuple[int, float | None]:
    """Write ``first`` and ``rest`` in batches; returns (count, newest timestamp)."""
    written = 0
    newest: float | None = None

    def everything() -> Iterator[Message]:
        yield first
        yield from rest

    for batch in message_batches(everything(), first_timestamp=start):
        written += store.append_messages(session_id, batch, default_timestamp=start)
        for message in batch:
            if message.timestamp is not None and (newest is None or message.timestamp > newest):
                newest = message.timestamp
    return written, newest


def _totals(
    imported: ImportedSession,
    newest: float | None,
    *,
    title: bool,
    fallback_title: str | None = None,
) -> ImportedTotals:
    ended = imported.ended_at
    if ended is None:
        ended = newest if newest is not None else time.time()
    return ImportedTotals(
        title_proposal=(imported.title_hint or fallback_title) if title else None,
        ended_at=ended,
        end_reason=END_REASON,
        input_tokens=imported.input_tokens,
        output_tokens=imported.output_tokens,
        cache_read_tokens=imported.cache_read_tokens,
        cache_write_tokens=imported.cache_write_tokens,
        cwd=imported.cwd,
        git_branch=imported.git_branch,
        model=imported.model,
        started_at=imported.started_at if title else None,
    )
