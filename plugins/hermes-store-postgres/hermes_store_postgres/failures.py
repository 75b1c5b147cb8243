"""What a psycopg error means for the user, as one of the store's error classes (DESIGN §9).

Raw ``psycopg`` errors never leave the plugin when they say something about the server, its
disk or the connection: :func:`store_error` reads the error's SQLSTATE (never its words) and
returns the store's class for it, with a message fit for one line that names the store by its
``store.url`` with the password hidden. Everything else — a constraint the store relies on
(``UniqueViolation``, ``ForeignKeyViolation``), a lock timeout (``LockNotAvailable``), a
cancelled statement (``QueryCanceled``), a missing privilege (``InsufficientPrivilege``), a
mistake in a statement — is left to the callers, which handle some of them on purpose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.store.errors import (
    StoreDamaged,
    StoreError,
    StoreFull,
    StoreReadOnly,
    StoreUnavailable,
)

if TYPE_CHECKING:
    import psycopg

DISK_FULL = "53100"
READ_ONLY_TRANSACTION = "25006"
DAMAGED = frozenset({"XX001", "XX002"})  # data_corrupted, index_corrupted
SHUTTING_DOWN = frozenset({"57P01", "57P02", "57P03", "57P04", "57P05"})
"""admin_shutdown (also ``pg_terminate_backend``), crash_shutdown, cannot_connect_now,
database_dropped, idle_session_timeout: the server ended this connection. Not ``57014``
(query_canceled): a statement timeout is the caller's business."""
OUT_OF_RESOURCES = "53"
"""Class 53 but ``53100``: insufficient_resources, out_of_memory, too_many_connections,
configuration_limit_exceeded."""
CONNECTION_EXCEPTION = "08"
SYSTEM_ERROR = "58"
"""Class 58: the server could not read or write its own files (io_error, undefined_file…)."""
INTERNAL_ERROR = "XX000"


def one_line(error: BaseException, password: str | None = None) -> str:
    """The error's text on one line, the password (if it appears) hidden."""
    text = " ".join(str(error).split())
    if password:
        text = text.replace(password, "***")
    return text or type(error).__name__


def full_error(where: str) -> StoreFull:
    """The server's disk is full (``where``: ``store.url '…'``)."""
    return StoreFull(f"the PostgreSQL server's disk is full ({where}); nothing was written")


def read_only_error(where: str, reason: str | None = None) -> StoreReadOnly:
    """The database refuses writes (``reason``: why, when it is known)."""
    because = f": {reason}" if reason else ""
    return StoreReadOnly(
        f"the PostgreSQL database is read-only ({where}{because}); nothing was written"
    )


def store_error(error: psycopg.Error, where: str, password: str | None = None) -> StoreError | None:
    """The store's error for ``error``, raised on the store at ``where`` (``store.url '…'``,
    password hidden), or None when ``error`` is not the server's, its disk's or the
    connection's doing (the caller then re-raises it as it is)."""
    import psycopg  # loaded already: it raised ``error``

    state = error.sqlstate
    detail = one_line(error, password)
    if state == DISK_FULL:
        return full_error(where)
    if state == READ_ONLY_TRANSACTION:
        return read_only_error(where)
    if state in DAMAGED:
        return StoreDamaged(f"the PostgreSQL server reports damaged data ({where}): {detail}")
    if state is not None and state.startswith(OUT_OF_RESOURCES):
        return StoreUnavailable(f"the PostgreSQL server is out of resources ({where}): {detail}")
    if state in SHUTTING_DOWN or (state or "").startswith(CONNECTION_EXCEPTION):
        return StoreUnavailable(
            f"the connection to the PostgreSQL server was lost ({where}): {detail}"
        )
    if state is not None and (state.startswith(SYSTEM_ERROR) or state == INTERNAL_ERROR):
        return StoreUnavailable(f"the PostgreSQL server failed ({where}): {detail}")
    if state is None and isinstance(error, psycopg.OperationalError):
        # Said by psycopg itself, not the server: the connection is closed, lost, or broke
        # while a result was being read.
        return StoreUnavailable(
            f"the connection to the PostgreSQL server was lost ({where}): {detail}"
        )
    return None
