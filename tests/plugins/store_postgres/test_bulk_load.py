"""Bulk loads into a PostgreSQL store and the phrase pair keys (schemas 9 and 10): a restore into an
empty store builds the full-text indexes once at the end, a load cut short leaves a store the
next open finishes, and two pairs sharing a key never match each other's phrase."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hermes_hookspecs import Message
from hermes_store_postgres.pair_keys import pair_key
from hermes_store_postgres.schema import (
    FULLTEXT_INDEXES,
    FULLTEXT_VERSION,
    PAIR_INDEX,
    SCHEMA_VERSION,
    build_fulltext_indexes,
    defer_fulltext_indexes,
)
from hermes_store_postgres.testing import Cluster
from installed_hermes import run_hermes_in

from hermes_core.plugins import PluginHost
from hermes_core.search import session_search
from hermes_core.store import SessionStore
from hermes_core.store.backends import open_url


def _indexes(cluster: Cluster, database: str) -> set[str]:
    listed = cluster.sql(
        "SELECT string_agg(indexname, ',') FROM pg_indexes WHERE tablename = 'messages'",
        database=database,
    )
    return set(listed.split(","))


def _version(cluster: Cluster, database: str) -> int:
    return int(cluster.sql("SELECT version FROM hermes_schema_version", database=database))


def _pair_statistics(cluster: Cluster, database: str) -> tuple[str, str]:
    """The pair keys' statistics target and how many statistics rows they have (schemas 10 and
    11: ``ANALYZE`` gathers none)."""
    target = cluster.sql(
        "SELECT attstattarget FROM pg_attribute "
        "WHERE attrelid = 'messages'::regclass AND attname = 'pair_keys'",
        database=database,
    )
    rows = cluster.sql(
        "SELECT count(*) FROM pg_stats WHERE tablename = 'messages' AND attname = 'pair_keys'",
        database=database,
    )
    return target, rows


def test_a_restore_into_an_empty_store_indexes_everything_at_the_end(
    tmp_path: Path, postgres_url: str, postgres_cluster: Cluster
) -> None:
    source = tmp_path / "source"
    with SessionStore.open(source) as store:
        for number in range(3):
            session = store.create_session("cli", title=f"deploy {number}")
            store.append_messages(
                session.id,
                [
                    Message("user", f"please roll back the deploy {number}"),
                    Message("assistant", "rolling the deploy back now 量子纠缠"),
                ],
            )
    backup = tmp_path / "backup.jsonl"
    exported = run_hermes_in(source, "sessions", "export", str(backup), "--format", "jsonl")
    assert exported.returncode == 0, exported.stderr
    home = tmp_path / "pg-home"
    home.mkdir()
    (home / "config.yaml").write_text(f"store:\n  url: '{postgres_url}'\n", encoding="utf-8")
    restored = run_hermes_in(home, "sessions", "import", "--from", "jsonl", str(backup))
    assert restored.returncode == 0, restored.stderr
    name = postgres_url.rsplit("/", 1)[1]
    assert _version(postgres_cluster, name) == SCHEMA_VERSION
    assert set(FULLTEXT_INDEXES) <= _indexes(postgres_cluster, name)
    analysed = "SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = %r"
    assert postgres_cluster.sql(analysed % "messages", database=name) == "t"
    assert _pair_statistics(postgres_cluster, name) == ("0", "0")
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert session_search(store, query='"roll back"')["count"] == 3
        assert session_search(store, query='"back roll"')["count"] == 0
        assert session_search(store, query="量子纠缠")["count"] == 3
        # Live appends after the load are indexed on their way in.
        later = store.create_session("cli")
        store.append_message(later.id, Message("user", "roll back the canary"))
        assert session_search(store, query='"roll back"', limit=10)["count"] == 4
    finally:
        store.close()


def test_a_load_cut_short_is_finished_by_the_next_open(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = postgres_url.rsplit("/", 1)[1]
    store = open_url(postgres_url, host=PluginHost())
    try:
        session = store.create_session("cli")
        store.append_message(session.id, Message("user", "the deploy will roll back"))
    finally:
        store.close()
    with psycopg.connect(postgres_url, autocommit=True) as db:  # as a killed load leaves it
        assert defer_fulltext_indexes(db)
    assert _version(postgres_cluster, name) == FULLTEXT_VERSION - 1
    assert not set(FULLTEXT_INDEXES) & _indexes(postgres_cluster, name)
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert _version(postgres_cluster, name) == SCHEMA_VERSION
        assert set(FULLTEXT_INDEXES) <= _indexes(postgres_cluster, name)
        assert _pair_statistics(postgres_cluster, name)[0] == "0"  # the later migration too
        assert session_search(store, query='"will roll back"')["count"] == 1
    finally:
        store.close()


def test_a_bulk_load_that_fails_still_leaves_its_indexes_built(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = postgres_url.rsplit("/", 1)[1]
    store = open_url(postgres_url, host=PluginHost())
    try:
        imports = store.imports
        with pytest.raises(RuntimeError), imports.bulk_load():
            session_id = imports.create_session(source="cli", started_at=1.0)
            imports.append_messages(
                session_id, [Message("user", "roll back the deploy")], default_timestamp=1.0
            )
            assert _version(postgres_cluster, name) == FULLTEXT_VERSION - 1  # deferred
            raise RuntimeError("the backup file ends half-way")
        assert _version(postgres_cluster, name) == SCHEMA_VERSION
        assert set(FULLTEXT_INDEXES) <= _indexes(postgres_cluster, name)
        assert session_search(store, query='"roll back"')["count"] == 1
    finally:
        store.close()


def _deferred_store(postgres_url: str) -> None:
    """A store with a few messages whose full-text indexes a bulk load has dropped."""
    store = open_url(postgres_url, host=PluginHost())
    try:
        for number in range(3):
            session = store.create_session("cli")
            store.append_message(session.id, Message("user", f"the deploy {number} will roll back"))
    finally:
        store.close()
    with psycopg.connect(postgres_url, autocommit=True) as db:
        assert defer_fulltext_indexes(db)


def test_the_pair_index_is_built_on_a_spare_connection_beside_the_others(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = postgres_url.rsplit("/", 1)[1]
    _deferred_store(postgres_url)
    lent: list[int] = []

    @contextmanager
    def spare() -> Iterator[psycopg.Connection[Any]]:
        with psycopg.connect(postgres_url, autocommit=True) as other:
            lent.append(other.info.backend_pid)
            yield other

    with psycopg.connect(postgres_url, autocommit=True) as db:
        build_fulltext_indexes(db, spare)
        assert lent and lent[0] != db.info.backend_pid
    assert _version(postgres_cluster, name) == SCHEMA_VERSION
    assert set(FULLTEXT_INDEXES) <= _indexes(postgres_cluster, name)
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert session_search(store, query='"will roll back"')["count"] == 3
    finally:
        store.close()


def test_a_spare_connection_that_fails_leaves_the_build_to_the_main_one(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = postgres_url.rsplit("/", 1)[1]
    _deferred_store(postgres_url)
    missing = postgres_url.rsplit("/", 1)[0] + "/no_such_database"

    def spare() -> psycopg.Connection[Any]:
        return psycopg.connect(missing, autocommit=True)  # refused: the database is not there

    with psycopg.connect(postgres_url, autocommit=True) as db:
        build_fulltext_indexes(db, spare)
    assert _version(postgres_cluster, name) == SCHEMA_VERSION
    assert PAIR_INDEX in _indexes(postgres_cluster, name)
    assert set(FULLTEXT_INDEXES) <= _indexes(postgres_cluster, name)


def test_two_pairs_sharing_a_key_do_not_find_each_other(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    first_with_key: dict[int, str] = {}
    row: tuple[str, str] | None = None
    for i in range(1, 20_001):
        pair = f"w{i} x"
        key = pair_key(pair)
        if key in first_with_key:
            row = (first_with_key[key], pair)
            break
        first_with_key[key] = pair
    assert row is not None  # 20,000 pairs over 2**20 keys: some share one
    stored, other = str(row[0]), str(row[1])
    store = open_url(postgres_url, host=PluginHost())
    try:
        session = store.create_session("cli")
        store.append_message(session.id, Message("user", f"{stored} {other.split()[0]} y"))
        assert session_search(store, query=f'"{stored}"')["count"] == 1
        assert session_search(store, query=f'"{other}"')["count"] == 0
    finally:
        store.close()
