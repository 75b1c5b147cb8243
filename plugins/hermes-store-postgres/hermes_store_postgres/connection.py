"""Reaching the database: checking a ``postgresql://`` URL, the connection pool, turning
every way of failing to connect into one line (never showing the password), and finding out
whether the server lets this store write at all.

Connections run in autocommit mode; the store opens a transaction (``connection.transaction()``)
around every write that takes more than one statement. They are
:class:`~.translating.StoreConnection`: what the server, its disk or the connection fails with
reaches callers as the store's error classes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from hermes_hookspecs import UserFacingError

from hermes_core.store.backends import redacted
from hermes_core.store.errors import InvalidStoreUrl, StoreReadOnly

from .failures import read_only_error

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

    from .translating import StoreConnection

CONNECT_TIMEOUT_SECONDS = 10
POOL_MAX_SIZE = 4
"""Connections the pool shared by a process's stores holds at most (see
:class:`StoreConnections`)."""
SCHEMES = ("postgresql", "postgres")


def checked_url(url: str) -> str:
    """``url`` as libpq takes it (``postgresql+psycopg://`` → ``postgresql://``); a URL with
    a typo raises :class:`InvalidStoreUrl` naming what is wrong."""
    shown = redacted(url)
    scheme, separator, rest = url.partition("://")
    base = scheme.split("+", 1)[0].lower()
    if not separator or base not in SCHEMES:
        raise InvalidStoreUrl(f"store.url {shown!r}: expected postgresql://user@host/database")
    libpq = f"postgresql://{rest}"
    try:
        parts = urlsplit(libpq)
        port = parts.port
    except ValueError as error:
        raise InvalidStoreUrl(f"store.url {shown!r}: {error}") from error
    if parts.fragment:
        raise InvalidStoreUrl(f"store.url {shown!r}: a PostgreSQL URL takes no #fragment")
    if not parts.path.strip("/"):
        raise InvalidStoreUrl(
            f"store.url {shown!r}: name the database, e.g. postgresql://host/hermes"
        )
    if "/" in parts.path.strip("/"):
        raise InvalidStoreUrl(f"store.url {shown!r}: a database name has no '/'")
    if port == 0:
        raise InvalidStoreUrl(f"store.url {shown!r}: port 0 is not a port")
    return libpq


def describe_connect_error(url: str, error: Exception) -> str:
    """One line for a failed connection: what went wrong, where, never the password."""
    parts = urlsplit(url)
    where = f"{parts.hostname or 'localhost'}:{parts.port or 5432}"
    database = parts.path.strip("/")
    text = " ".join(str(error).split())
    password = parts.password
    if password:
        text = text.replace(password, "***")
    lowered = text.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        reason = f"the server at {where} refused the user name or password"
    elif "does not exist" in lowered and "database" in lowered:
        reason = f"there is no database {database!r} on {where} (create it first)"
    elif "connection refused" in lowered or "could not connect" in lowered:
        reason = f"cannot reach a PostgreSQL server at {where} (is it running?)"
    elif "timeout" in lowered or "timed out" in lowered:
        reason = f"no answer from {where} within {CONNECT_TIMEOUT_SECONDS}s"
    elif "could not translate host name" in lowered or "name or service not known" in lowered:
        reason = f"unknown host {parts.hostname!r}"
    else:
        reason = text or type(error).__name__
    return f"store.url {redacted(url)!r}: {reason}"


def connect(url: str, where: str) -> StoreConnection[Any]:
    """One autocommit :class:`~.translating.StoreConnection` to ``url`` (its failures name
    the store as ``where``); a bad server, user, password or database raises one line
    (``UserFacingError``, never the password). psycopg is imported here, when a URL asks for
    PostgreSQL, not when the plugin is found."""
    import psycopg

    from .translating import FailureTranslation, StoreConnection

    try:
        connection: StoreConnection[Any] = StoreConnection.connect(
            url, connect_timeout=CONNECT_TIMEOUT_SECONDS, autocommit=True
        )
    except psycopg.Error as error:
        raise UserFacingError(describe_connect_error(url, error)) from None
    connection.failures = FailureTranslation(where, urlsplit(url).password)
    return connection


class StoreConnections:
    """The store's connections: its own (:attr:`main`, made when the store opens) and, for
    the threads that must not wait on it (the automatic-title worker), connections borrowed
    from a pool (``psycopg_pool``) that every store of this process on the same URL shares: a
    gateway opens one store per worker thread, and they draw their occasional extra
    connections from one pool rather than each keeping its own. The pool opens on the first
    borrow and closes with the last store using it, so a command that only reads never pays
    for its thread or its connections."""

    def __init__(self, url: str, where: str) -> None:
        self._url = url
        self._where = where
        self._shares = False
        self._closed = False
        self._lock = threading.Lock()
        self.main: StoreConnection[Any] = connect(url, where)
        """The connection of the thread that opened the store."""

    @contextmanager
    def borrowed(self) -> Iterator[StoreConnection[Any]]:
        """A pooled connection for the length of the block, given back afterwards."""
        with self._lock:
            if self._closed:
                from hermes_core.store.errors import StoreUnavailable

                raise StoreUnavailable(f"{self._where}: the store is closed")
            if not self._shares:
                _SHARED_POOLS.take(self._url, self._where)
                self._shares = True
        with _SHARED_POOLS.pool(self._url).connection() as connection:
            yield connection

    def close(self) -> None:
        """Let go of the shared pool (closed with its last store) and close the main
        connection; quietly, even when the server is gone; twice does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            shares, self._shares = self._shares, False
        if shares:
            _SHARED_POOLS.release(self._url)
        self.main.close()


class _SharedPools:
    """The pools of this process, one per URL, each with how many stores use it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: dict[str, tuple[ConnectionPool[StoreConnection[Any]], int]] = {}

    def take(self, url: str, where: str) -> None:
        with self._lock:
            found = self._pools.get(url)
            pool = found[0] if found else open_pool(url, where)
            self._pools[url] = (pool, (found[1] if found else 0) + 1)

    def pool(self, url: str) -> ConnectionPool[StoreConnection[Any]]:
        with self._lock:
            return self._pools[url][0]

    def release(self, url: str) -> None:
        with self._lock:
            pool, users = self._pools[url]
            if users > 1:
                self._pools[url] = (pool, users - 1)
                return
            del self._pools[url]
        pool.close()


_SHARED_POOLS = _SharedPools()


def open_pool(
    url: str, where: str, *, max_size: int = POOL_MAX_SIZE
) -> ConnectionPool[StoreConnection[Any]]:
    """A pool of autocommit connections to ``url`` whose first connection is made now, so a
    bad server, user, password or database is reported at once, as one line (``UserFacingError``).

    Its connections are :class:`~.translating.StoreConnection`: their failures name the store
    as ``where`` (``store.url '…'``, password hidden)."""
    from psycopg_pool import ConnectionPool, PoolTimeout

    from .translating import FailureTranslation, StoreConnection

    failures = FailureTranslation(where, urlsplit(url).password)

    def configure(connection: StoreConnection[Any]) -> None:
        connection.autocommit = True
        connection.failures = failures

    # Connect once by hand first: the pool would hide the server's reason behind a timeout.
    connect(url, where).close()
    pool = ConnectionPool(
        url,
        connection_class=StoreConnection[Any],
        min_size=1,
        max_size=max_size,
        kwargs={"connect_timeout": CONNECT_TIMEOUT_SECONDS},
        configure=configure,
        open=False,
        name="hermes-store",
    )
    try:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS * 2)
    except PoolTimeout as error:
        pool.close()
        raise UserFacingError(describe_connect_error(url, error)) from None
    return pool


def write_refusal(db: psycopg.Connection[Any], where: str) -> StoreReadOnly | None:
    """Why the server will refuse every write of this connection, or None when it takes them:
    a hot standby (``pg_is_in_recovery()``), or transactions that are read-only by default
    (``default_transaction_read_only``, set for the server, the database or the role). Asked
    once, when the store opens; a role that may not write a table is refused at each write."""
    row = db.execute(
        "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'"
    ).fetchone()
    if row is None:
        return None
    return _refusal(where, standby=bool(row[0]), read_only=bool(row[1]))


def _refusal(where: str, *, standby: bool, read_only: bool) -> StoreReadOnly | None:
    if standby:
        return read_only_error(where, "the server is a hot standby")
    if read_only:
        return read_only_error(where, "default_transaction_read_only is on")
    return None


def first_look(db: psycopg.Connection[Any], where: str) -> tuple[StoreReadOnly | None, int | None]:
    """What opening a store must know, in one round trip for a store that exists: why the
    server refuses this connection's writes (see :func:`write_refusal`) and the schema version
    (``None``: the database holds no version table, so :func:`.schema.migrate` looks for
    itself)."""
    import psycopg

    try:
        row = db.execute(
            "SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on', "
            "(SELECT version FROM hermes_schema_version)"
        ).fetchone()
    except psycopg.errors.UndefinedTable:  # a database Hermes has not written to yet
        return write_refusal(db, where), None
    if row is None:
        return None, None
    return _refusal(where, standby=bool(row[0]), read_only=bool(row[1])), (
        None if row[2] is None else int(row[2])
    )
