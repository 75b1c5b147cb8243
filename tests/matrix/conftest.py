"""One real Synapse homeserver for the Matrix tests (started once, stopped at the end)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from synapse_homeserver import Synapse


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    """A running Synapse on 127.0.0.1 (skips with the reason when it cannot be installed,
    fails with ``CI=true``)."""
    with Synapse(tmp_path_factory.mktemp("synapse")) as server:
        yield server
