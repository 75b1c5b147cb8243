"""Which id an imported session gets: its own when it can keep it, else a new one, reported.

A backup or another tool's database gives each session an id. It is kept when it matches the
store's id grammar (:data:`hermes_core.store.ids.SESSION_ID_PATTERN`) and is free here; an id
taken by another session, or one that is not a session id at all (``../../x``, ``..``, an id
holding a NUL or markup — ids name files and are typed on command lines), is replaced by a new
one, and the import says so in a ``note:`` line (:func:`renamed_note`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from hermes_core.store.ids import ID_GRAMMAR, looks_like_session_id, new_session_id, shown_id

if TYPE_CHECKING:
    from hermes_core.store.protocol import ImportBookkeeping

TAKEN = "that id is taken in this store"
NOT_AN_ID = f"that is not a session id ({ID_GRAMMAR})"


class IdChoice(NamedTuple):
    """The id to create the session with, and why it is not the file's own (None: it is)."""

    session_id: str
    replaced_because: str | None


def choose_id(store: ImportBookkeeping, wanted: str, *, started_at: float) -> IdChoice:
    """``wanted`` when it is a session id free in ``store``; else a new id for a session
    started at ``started_at``, with the reason (:data:`TAKEN` or :data:`NOT_AN_ID`)."""
    if looks_like_session_id(wanted):
        if not store.session_exists(wanted):
            return IdChoice(wanted, None)
        why = TAKEN
    else:
        why = NOT_AN_ID
    fresh = _new_id(started_at)
    while store.session_exists(fresh):
        fresh = _new_id(started_at)
    return IdChoice(fresh, why)


def _new_id(started_at: float) -> str:
    try:
        return new_session_id(now=started_at)
    except (OverflowError, OSError, ValueError):  # a start time no clock can show
        return new_session_id()


def renamed_note(wanted: str, why: str, session_id: str, *, verb: str = "imported") -> str:
    """``session <wanted>: <why>; imported as <session_id>``."""
    return f"session {shown_id(wanted)}: {why}; {verb} as {session_id}"
