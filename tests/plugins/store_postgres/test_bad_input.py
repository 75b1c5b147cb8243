"""What a person sees when ``store.url`` names a PostgreSQL store that cannot be used: one
line, exit 1, the password never shown, nothing written — through the installed ``hermes``."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest
from hermes_store_postgres.testing import Cluster, fresh_database
from installed_hermes import hermes_command

SECRET = "s3cret-never-shown"


def _hermes(home: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_STORE_URL": url}
    return subprocess.run(
        [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _assert_one_line(result: subprocess.CompletedProcess[str], expected: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("hermes: store.url"), lines
    assert expected in lines[0], lines
    assert SECRET not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def _tables(cluster: Cluster, database: str) -> str:
    return cluster.sql(
        "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database=database
    )


def test_an_unreachable_server_is_one_line(tmp_path: Path) -> None:
    url = f"postgresql://hermes:{SECRET}@127.0.0.1:{_closed_port()}/hermes"
    _assert_one_line(_hermes(tmp_path, url, "sessions", "list"), "cannot reach a PostgreSQL server")
    assert not (tmp_path / "state.db").exists()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"postgresql://ana:{SECRET}@127.0.0.1:54x2/hermes", "Port could not be cast"),
        (f"postgresql://ana:{SECRET}@127.0.0.1:5432/", "name the database"),
        (f"postgresql://ana:{SECRET}@127.0.0.1/hermes/extra", "a database name has no '/'"),
        (f"postgresql://ana:{SECRET}@127.0.0.1/hermes#x", "takes no #fragment"),
    ],
)
def test_a_url_with_a_typo_is_one_line(tmp_path: Path, url: str, expected: str) -> None:
    _assert_one_line(_hermes(tmp_path, url, "sessions", "list"), expected)
    assert list(tmp_path.iterdir()) == []


def test_a_wrong_password_is_one_line_and_writes_nothing(
    tmp_path: Path, postgres_cluster: Cluster
) -> None:
    with fresh_database(postgres_cluster) as name:
        url = postgres_cluster.url(name, password=SECRET)
        _assert_one_line(
            _hermes(tmp_path, url, "sessions", "list"), "refused the user name or password"
        )
        assert _tables(postgres_cluster, name) == "0"


def test_a_missing_database_is_one_line(tmp_path: Path, postgres_cluster: Cluster) -> None:
    # The right password, so the server gets as far as looking for the database.
    url = postgres_cluster.url("no_such_database")
    result = _hermes(tmp_path, url, "sessions", "list")
    _assert_one_line(result, "there is no database 'no_such_database'")
    assert postgres_cluster.password not in result.stdout + result.stderr


def test_a_database_without_pg_trgm_that_cannot_get_it_is_one_line(
    tmp_path: Path, postgres_cluster: Cluster
) -> None:
    with fresh_database(postgres_cluster, template="template0") as name:
        postgres_cluster.sql(
            f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'plain') "
            f"THEN CREATE ROLE plain LOGIN PASSWORD '{SECRET}'; END IF; END $$"
        )
        url = postgres_cluster.url(name, user="plain", password=SECRET)
        result = _hermes(tmp_path, url, "sessions", "list")
        _assert_one_line(result, "the pg_trgm extension is missing and cannot be created")
        assert _tables(postgres_cluster, name) == "0"


def test_a_database_that_is_not_utf8_is_one_line_and_writes_nothing(
    tmp_path: Path, postgres_cluster: Cluster
) -> None:
    name = "latin1_store"
    postgres_cluster.sql(f"DROP DATABASE IF EXISTS {name}")
    postgres_cluster.sql(
        f"CREATE DATABASE {name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' "
        "TEMPLATE template0"
    )
    try:
        result = _hermes(tmp_path, postgres_cluster.url(name), "sessions", "list")
        _assert_one_line(result, "the database's encoding is LATIN1")
        assert _tables(postgres_cluster, name) == "0"
    finally:
        postgres_cluster.sql(f"DROP DATABASE {name}")


def test_a_good_url_works_end_to_end(tmp_path: Path, postgres_url: str) -> None:
    created = _hermes(tmp_path, postgres_url, "sessions", "list")
    assert created.returncode == 0, created.stderr
    assert not (tmp_path / "state.db").exists()
