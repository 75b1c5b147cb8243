"""The store conformance suite: the protocol of ``hermes_core.store.protocol.Store``, checked
against every backend, through nothing but that protocol.

``store_factory`` is parametrised by backend (``backend``): ``sqlite`` (built in) plus every
backend that declares itself in the entry-point group :data:`CONFORMANCE_GROUP` — see
README.md. Calling ``store_factory(events=...)`` opens the test's database (the same one on
every call within a test, so reopening checks what persisted) through the backend's
``hermes_register_store_backends`` registration, exactly as ``store.url`` would.
``read_only()`` makes that database one stores may only read, each backend its own way
(:data:`READ_ONLY_GROUP`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
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

READ_ONLY_GROUP = "hermes_store_conformance_read_only"
"""Optional entry points ``<scheme> = "module:function"``; the function takes the URL of a
database the suite has filled (and closed every store of) and returns a context manager during
which stores opened on it may only be read there (it may ``pytest.skip`` when that cannot be
had). Without one, the read-only tests skip for that backend."""

DatabaseFactory = Callable[[Path], contextlib.AbstractContextManager[str]]
ReadOnlySwitch = Callable[[str], contextlib.AbstractContextManager[None]]


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


@contextlib.contextmanager
def sqlite_read_only(url: str) -> Iterator[None]:
    """``state.db`` made immutable (``chattr +i``: not even root may write it), as on a
    read-only mount; needs root (skips with the reason, fails under ``CI=true``)."""
    from hermes_core.store.backends import sqlite_path

    path = sqlite_path(url)
    if os.geteuid() != 0:
        _unavailable("chattr +i needs root")
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        _unavailable(f"chattr +i is not supported here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: this test must run)")
    pytest.skip(reason)


def _read_only_switch_of(scheme: str) -> ReadOnlySwitch | None:
    if scheme == "sqlite":
        return sqlite_read_only
    import importlib_metadata

    found = list(importlib_metadata.entry_points(group=READ_ONLY_GROUP, name=scheme))
    if not found:
        return None
    loaded: ReadOnlySwitch = found[0].load()
    return loaded


@pytest.fixture(params=sorted(_declared_backends()))
def backend(request: pytest.FixtureRequest) -> str:
    """The scheme of the backend under test (``sqlite``, ``postgresql``…)."""
    scheme: str = request.param
    return scheme


@pytest.fixture
def database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """The URL of this test's database of the backend under test (removed afterwards)."""
    with _factory_of(backend)(tmp_path) as url:
        yield url


@pytest.fixture
def store_factory(database_url: str) -> Iterator[StoreFactory]:
    """Opens this test's database of the backend under test; every store it opened is closed
    when the test ends."""
    opened: list[Store] = []
    host = PluginHost()

    def open_it(events: Any = None) -> Store:
        store = open_url(database_url, events=events, host=host)
        opened.append(store)
        return store

    try:
        yield open_it
    finally:
        for store in opened:
            store.close()


@pytest.fixture
def read_only(
    backend: str, database_url: str
) -> Callable[[], contextlib.AbstractContextManager[None]]:
    """``with read_only():`` — stores opened on this test's database inside the block may
    only be read (see :data:`READ_ONLY_GROUP`); close every store before entering it."""
    switch = _read_only_switch_of(backend)
    if switch is None:
        pytest.skip(f"the {backend} backend declares no {READ_ONLY_GROUP} entry point")
    return lambda: switch(database_url)


@pytest.fixture
def events() -> EventLog:
    return EventLog()


@pytest.fixture
def store(store_factory: StoreFactory, events: EventLog) -> Store:
    """The backend's store, opened with an :class:`EventLog`."""
    return store_factory(events)
