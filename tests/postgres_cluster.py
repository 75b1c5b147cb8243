"""PostgreSQL for tests: one throwaway cluster per test session (``initdb`` + ``pg_ctl`` into
a temporary folder, 127.0.0.1 only, an unprivileged user when run as root), one fresh database
per test (see ``hermes_store_postgres.testing``).

Where the binaries are missing the PostgreSQL cases skip with the reason; with ``CI=true``
they fail instead. ``tests/conftest.py`` stops the cluster at the end of the session.

``backend_store`` runs a test once per backend (SQLite, PostgreSQL): a module whose tests
use only the store protocol takes it as its ``store`` fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_store_postgres.testing import Cluster, cluster_or_skip, fresh_database

from hermes_core.store.protocol import Store


@pytest.fixture
def postgres_cluster() -> Cluster:
    """The session's running cluster (started on first use)."""
    return cluster_or_skip()


@pytest.fixture
def postgres_url(postgres_cluster: Cluster) -> Iterator[str]:
    """The URL of a fresh, empty database for this test, dropped afterwards."""
    with fresh_database(postgres_cluster) as name:
        yield postgres_cluster.url(name)


BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The ``store.url`` of an empty store, once per backend: ``state.db`` in ``tmp_path``
    (what ``SessionStore.open(tmp_path)`` opens), then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'state.db'}"
        return
    cluster = cluster_or_skip()
    with fresh_database(cluster) as name:
        yield cluster.url(name)


@pytest.fixture
def backend_store(backend_url: str) -> Iterator[Store]:
    """The store at :func:`backend_url`, opened as ``store.url`` opens it, closed afterwards."""
    from hermes_core.plugins import PluginHost
    from hermes_core.store.backends import open_url

    store = open_url(backend_url, host=PluginHost())
    try:
        yield store
    finally:
        store.close()


@pytest.fixture(params=BACKENDS)
def backend_home(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A Hermes home (``tmp_path/home``) whose store is, once per backend, its own
    ``state.db`` or a fresh PostgreSQL database its ``config.yaml`` names (``store.url``)."""
    home = tmp_path / "home"
    if request.param == "sqlite":
        yield home
        return
    cluster = cluster_or_skip()
    with fresh_database(cluster) as name:
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.yaml").write_text(
            f"store:\n  url: '{cluster.url(name)}'\n", encoding="utf-8"
        )
        yield home


def open_home_store(home: Path) -> Store:
    """The store of ``home`` as configured (``state.db`` or its ``store.url``)."""
    from hermes_core.plugins import PluginHost
    from hermes_core.store.backends import open_store

    return open_store(home, host=PluginHost())
