"""PostgreSQL for tests: one throwaway cluster per test session (``initdb`` + ``pg_ctl`` into
a temporary folder, 127.0.0.1 only, an unprivileged user when run as root), one fresh database
per test (see ``hermes_store_postgres.testing``).

Where the binaries are missing the PostgreSQL cases skip with the reason; with ``CI=true``
they fail instead. ``tests/conftest.py`` stops the cluster at the end of the session.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hermes_store_postgres.testing import Cluster, cluster_or_skip, fresh_database


@pytest.fixture
def postgres_cluster() -> Cluster:
    """The session's running cluster (started on first use)."""
    return cluster_or_skip()


@pytest.fixture
def postgres_url(postgres_cluster: Cluster) -> Iterator[str]:
    """The URL of a fresh, empty database for this test, dropped afterwards."""
    with fresh_database(postgres_cluster) as name:
        yield postgres_cluster.url(name)
