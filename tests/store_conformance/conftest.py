"""The store conformance suite: the protocol of ``hermes_core.store.protocol.Store``, checked
against every backend, through nothing but that protocol.

``store_factory`` is parametrised by backend: ``sqlite`` (built in) plus every backend that
declares itself in the entry-point group :data:`CONFORMANCE_GROUP` — see README.md. Calling
``store_factory(events=...)`` opens the test's database (the same one on every call within a
test, so reopening checks what persisted) through the backend's ``hermes_register_store_backends``
registration, exactly as ``store.url`` would.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conformance_types import EventLog, StoreFactory

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url
from hermes_core.store.protocol import Store

CONFORMANCE_GROUP = "hermes_store_conformance"
"""Entry points ``<scheme> = "module:function"``; the function takes a temporary directory and
returns a context manager yielding the URL of a fresh, empty database (it may ``pytest.skip``
when its server cannot be had)."""

DatabaseFactory = Callable[[Path], contextlib.AbstractContextManager[str]]


@contextlib.contextmanager
def sqlite_database(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'conformance' / 'state.db'}"


def _declared_backends() -> dict[str, DatabaseFactory | None]:
    found: dict[str, DatabaseFactory | None] = {"sqlite": sqlite_database}
    import importlib_metadata

    for entry_point in importlib_metadata.entry_points(group=CONFORMANCE_GROUP):
        found.setdefault(entry_point.name, None)
    return found


def _factory_of(scheme: str) -> DatabaseFactory:
    if scheme == "sqlite":
        return sqlite_database
    import importlib_metadata

    [entry_point] = importlib_metadata.entry_points(group=CONFORMANCE_GROUP, name=scheme)
    loaded: DatabaseFactory = entry_point.load()
    return loaded


@pytest.fixture(params=sorted(_declared_backends()))
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens this test's database of the backend under test; every store it opened is closed
    when the test ends."""
    opened: list[Store] = []
    host = PluginHost()
    with _factory_of(request.param)(tmp_path) as url:

        def open_it(events: Any = None) -> Store:
            store = open_url(url, events=events, host=host)
            opened.append(store)
            return store

        try:
            yield open_it
        finally:
            for store in opened:
                store.close()


@pytest.fixture
def events() -> EventLog:
    return EventLog()


@pytest.fixture
def store(store_factory: StoreFactory, events: EventLog) -> Store:
    """The backend's store, opened with an :class:`EventLog`."""
    return store_factory(events)
