"""Fixtures every test folder shares."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest_plugins = ["postgres_cluster", "disks"]
"""``postgres_cluster`` / ``postgres_url`` and the hostile disks (``small_disk``,
``make_immutable``) for every folder."""


@pytest.fixture(scope="session", autouse=True)
def _stop_postgres_at_the_end() -> Iterator[None]:
    """Stop the throwaway PostgreSQL cluster, if a test started one (``pg_ctl stop -m
    immediate``), when the test session ends."""
    yield
    from hermes_store_postgres.testing import stop_shared_cluster

    stop_shared_cluster()
