"""``stats``, ``optimize`` and ``repair`` on a PostgreSQL store, through the installed hermes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hermes_hookspecs import Message, ToolCall
from hermes_store_postgres.testing import Cluster
from installed_hermes import hermes_command

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url


def _hermes(home: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_STORE_URL": url}
    return subprocess.run(
        [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _fill(url: str) -> str:
    with open_url(url, host=PluginHost()) as store:
        session = store.create_session("cli", title="maintained")
        store.append_messages(
            session.id,
            [
                Message("user", "我们讨论了量子纠缠"),
                Message("assistant", "ok", tool_calls=(ToolCall("terminal", "{}", "c1"),)),
            ],
        )
        return session.id


def test_stats_and_optimize_report_postgresql_sizes(tmp_path: Path, postgres_url: str) -> None:
    _fill(postgres_url)
    stats = _hermes(tmp_path, postgres_url, "sessions", "stats")
    assert stats.returncode == 0, stats.stderr
    assert "Total sessions: 1" in stats.stdout and "Total messages: 2" in stats.stdout
    assert "Database size:" in stats.stdout
    optimized = _hermes(tmp_path, postgres_url, "sessions", "optimize")
    assert optimized.returncode == 0, optimized.stderr
    assert "Database size:" in optimized.stdout and "Bytes reclaimed:" in optimized.stdout


def test_repair_finds_and_rebuilds_what_drifted(
    tmp_path: Path, postgres_url: str, postgres_cluster: Cluster
) -> None:
    session_id = _fill(postgres_url)
    healthy = _hermes(tmp_path, postgres_url, "sessions", "repair", "--check-only")
    assert healthy.returncode == 0, healthy.stderr
    assert "no problems found" in healthy.stdout
    database = postgres_url.rsplit("/", 1)[1]
    postgres_cluster.sql(
        "UPDATE sessions SET message_count = 9, tool_call_count = 0", database=database
    )
    postgres_cluster.sql("UPDATE messages SET cjk_text = NULL, pair_keys = NULL", database=database)
    checked = _hermes(tmp_path, postgres_url, "sessions", "repair", "--check-only")
    assert checked.returncode == 1
    assert "3 problem(s)" in checked.stdout
    assert "2 message(s) without their phrase pair keys" in checked.stdout
    assert "1 session(s) with message counters out of step" in checked.stdout
    assert "1 message(s) with the CJK index column out of step" in checked.stdout
    repaired = _hermes(tmp_path, postgres_url, "sessions", "repair")
    assert repaired.returncode == 0, repaired.stderr
    assert "REINDEX TABLE" in repaired.stdout and "The store is healthy now." in repaired.stdout
    assert postgres_cluster.password not in repaired.stdout
    with open_url(postgres_url, host=PluginHost()) as store:
        session = store.get_session(session_id)
        assert (session.message_count, session.tool_call_count) == (2, 1)
        assert store.search_index.cjk_matches("量子纠缠", 10) != []
    keyless = "SELECT count(*) FROM messages WHERE pair_keys IS NULL"
    assert postgres_cluster.sql(keyless, database=database) == "0"


def test_the_size_split_counts_every_full_text_index(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    _fill(postgres_url)
    name = postgres_url.rsplit("/", 1)[1]
    indexes = int(
        postgres_cluster.sql(
            "SELECT pg_relation_size('idx_messages_words') + pg_relation_size('idx_messages_pair_hashes')"
            " + pg_relation_size('idx_messages_cjk')",
            database=name,
        )
    )
    with open_url(postgres_url, host=PluginHost()) as store:
        split = store.lifecycle.size_split()
        assert split.fulltext_bytes == indexes > 0
        assert split.messages_bytes + split.fulltext_bytes + split.other_bytes == (
            store.lifecycle.size_bytes()
        )
