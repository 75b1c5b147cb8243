"""What a command on a PostgreSQL store loads before it answers (issue 25: ``sessions list``,
``show`` and ``search`` within 1.25× SQLite's wall time): the ``postgres`` plugin alone, not
every plugin — seen through the installed
``hermes`` with Python's own import log (``PYTHONPROFILEIMPORTTIME``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hermes_store_postgres.testing import Cluster, fresh_database
from installed_hermes import hermes_command


def _imported(stderr: str) -> set[str]:
    """The modules an import log names."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_a_listing_loads_the_postgres_plugin_alone(
    tmp_path: Path, postgres_cluster: Cluster
) -> None:
    with fresh_database(postgres_cluster) as name:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("HERMES_")},
            "HERMES_HOME": str(tmp_path),
            "HERMES_STORE_URL": postgres_cluster.url(name),
            "PYTHONPROFILEIMPORTTIME": "1",
        }
        done = subprocess.run(
            [hermes_command(), "sessions", "list"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = _imported(done.stderr)
    assert {"psycopg", "hermes_store_postgres.plugin"} <= imported
    assert "stevedore" not in imported
    # No other plugin was imported to find the backend.
    assert not {m for m in imported if m.startswith("hermes_") and m.endswith(".plugin")} - {
        "hermes_store_postgres.plugin"
    }
