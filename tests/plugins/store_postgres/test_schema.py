"""The PostgreSQL schema: created on first use (with pg_trgm), versioned in its own table,
concurrent first opens migrate once, and a newer schema is refused."""

from __future__ import annotations

import threading

import pytest
from hermes_store_postgres.testing import Cluster, fresh_database

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url
from hermes_core.store.errors import StoreTooNew


def test_a_new_database_gets_the_extension_the_tables_and_a_version(
    postgres_cluster: Cluster,
) -> None:
    with fresh_database(postgres_cluster, template="template0") as name:
        errors: list[BaseException] = []

        def open_and_close() -> None:
            try:
                open_url(postgres_cluster.url(name), host=PluginHost()).close()
            except BaseException as error:  # reported below
                errors.append(error)

        threads = [threading.Thread(target=open_and_close) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == []
        sql = postgres_cluster.sql
        assert sql("SELECT version FROM hermes_schema_version", database=name) == "1"
        assert sql("SELECT count(*) FROM hermes_schema_version", database=name) == "1"
        assert (
            sql("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'", database=name) == "1"
        )
        tables = sql(
            "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables "
            "WHERE schemaname = 'public'",
            database=name,
        )
        assert tables == (
            "gateway_routing,hermes_schema_version,import_files,messages,sessions,"
            "state_meta,system_prompts"
        )


def test_a_store_written_by_a_newer_version_is_refused(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    open_url(postgres_url, host=PluginHost()).close()
    name = postgres_url.rsplit("/", 1)[1]
    postgres_cluster.sql("UPDATE hermes_schema_version SET version = 99", database=name)
    with pytest.raises(StoreTooNew, match="schema v99"):
        open_url(postgres_url, host=PluginHost())
