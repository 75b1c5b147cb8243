"""Errors raised by the session store. Each carries a message fit for one line of output."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every error the store raises on purpose."""


class StoreUnavailable(StoreError):
    """The store file cannot be opened or read (corrupt, unreadable, locked for too long)."""


class NotASessionStore(StoreUnavailable):
    """The file is an SQLite database of another program (Hermes Agent's ``state.db``, say):
    it is left exactly as it was — never migrated, never switched to WAL, never repaired."""


class StoreTooNew(StoreUnavailable):
    """The store was written by a newer version of Hermes sessions."""


class StoreDamaged(StoreUnavailable):
    """The file is damaged (SQLite says "malformed" or "not a database"): ``hermes sessions
    repair`` salvages what is still readable."""


class StoreFull(StoreError):
    """The disk holding the store is full: the write was rolled back, nothing was written.
    Not damage — repair is no help; free some space."""


class StoreReadOnly(StoreError):
    """The store (its file, folder or mount) cannot be written: reading still works, the
    write was refused and nothing was written."""


class SessionNotFound(StoreError):
    """No session matches an id, prefix or title."""


class AmbiguousSessionId(StoreError):
    """A prefix matches more than one session."""

    def __init__(self, reference: str, matches: list[str]) -> None:
        shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
        super().__init__(
            f"'{reference}' matches {len(matches)} sessions ({shown}); give more characters"
        )
        self.matches = matches


class InvalidTitle(StoreError):
    """A title is empty, too long or already used."""


class TitleInUse(InvalidTitle):
    """Another session already has this title."""


class QueryRejected(StoreError):
    """The full-text index refused a query's text (a syntax it does not accept)."""


class InvalidStoreUrl(StoreError):
    """``store.url`` is malformed, or names a backend that is not installed."""
