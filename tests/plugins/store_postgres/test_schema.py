"""The PostgreSQL schema: created on first use (with pg_trgm), versioned in its own table,
concurrent first opens migrate once, and a newer schema is refused."""

from __future__ import annotations

import threading

import psycopg
import pytest
from hermes_hookspecs import Message
from hermes_store_postgres.pair_keys import message_pair_keys, query_pair_keys
from hermes_store_postgres.schema import SCHEMA_VERSION, migrate
from hermes_store_postgres.testing import Cluster, fresh_database

from hermes_core.plugins import PluginHost
from hermes_core.search import session_search
from hermes_core.store.backends import open_url
from hermes_core.store.errors import StoreTooNew

SESSION = "20260101_000000_aaaaaa"
PHRASE_MESSAGES = (
    f"('{SESSION}', 'user', 'the deploy will roll back tonight', 2), "
    f"('{SESSION}', 'user', 'roll the deploy back', 3)"
)


def old_store(postgres_url: str, cluster: Cluster, version: int, messages: str) -> str:
    """Make the database a store at schema ``version`` holding one session with ``messages``
    (the ``VALUES`` rows of ``(session_id, role, content, timestamp)``); the database's name."""
    name = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as db:
        migrate(db, "test", target=version)
    cluster.sql(
        "INSERT INTO sessions (id, source, started_at, last_active_at) "
        f"VALUES ('{SESSION}', 'cli', 1, 1)",
        database=name,
    )
    cluster.sql(
        f"INSERT INTO messages (session_id, role, content, timestamp) VALUES {messages}",
        database=name,
    )
    return name


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
        assert sql("SELECT version FROM hermes_schema_version", database=name) == str(
            SCHEMA_VERSION
        )
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
            "gateway_inbox,gateway_routing,hermes_schema_version,import_files,messages,"
            "sessions,state_meta,system_prompts"
        )


def test_a_store_written_by_a_newer_version_is_refused(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    open_url(postgres_url, host=PluginHost()).close()
    name = postgres_url.rsplit("/", 1)[1]
    postgres_cluster.sql("UPDATE hermes_schema_version SET version = 99", database=name)
    with pytest.raises(StoreTooNew, match="schema v99"):
        open_url(postgres_url, host=PluginHost())


def test_a_version_1_store_gets_the_phrase_pair_index_and_its_phrases_are_still_found(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = old_store(postgres_url, postgres_cluster, 1, PHRASE_MESSAGES)
    store = open_url(postgres_url, host=PluginHost())
    try:
        sql = postgres_cluster.sql
        assert sql("SELECT version FROM hermes_schema_version", database=name) == str(
            SCHEMA_VERSION
        )
        assert (
            sql(
                "SELECT count(*) FROM pg_indexes WHERE indexname = 'idx_messages_pair_hashes'",
                database=name,
            )
            == "1"
        )
        expected = query_pair_keys(
            ["back tonight", "deploy will", "roll back", "the deploy", "will roll"]
        )
        assert sql("SELECT pair_keys FROM messages ORDER BY id LIMIT 1", database=name) == (
            "{" + ",".join(map(str, expected)) + "}"
        )
        found = session_search(store, query='"roll back"')
        assert [r["match_message_id"] for r in found["results"]] == [1]
        assert session_search(store, query='"back roll"')["count"] == 0
        # Appended after the upgrade: indexed on the way in.
        later = store.create_session("cli")
        store.append_message(later.id, Message("user", "please roll back the canary"))
        assert {r["session_id"] for r in session_search(store, query='"roll back"')["results"]} == {
            "20260101_000000_aaaaaa",
            later.id,
        }
    finally:
        store.close()


def test_a_version_2_store_writes_its_pair_index_through_and_keeps_finding_phrases(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = old_store(postgres_url, postgres_cluster, 2, PHRASE_MESSAGES)
    sql = postgres_cluster.sql
    sql("CREATE EXTENSION pgstattuple", database=name)
    pending = "SELECT pending_tuples FROM pgstatginindex('idx_messages_pairs')"
    assert sql(pending, database=name) == "2"  # waiting in the pending list
    options = "SELECT coalesce(reloptions::text, '') FROM pg_class WHERE relname = %r"
    assert "fastupdate" not in sql(options % "idx_messages_pairs", database=name)
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert sql("SELECT version FROM hermes_schema_version", database=name) == str(
            SCHEMA_VERSION
        )
        pending = "SELECT pending_tuples FROM pgstatginindex('idx_messages_pair_hashes')"
        assert sql(options % "idx_messages_pair_hashes", database=name) == "{fastupdate=off}"
        assert sql(pending, database=name) == "0"
        assert sql(options % "idx_messages_words", database=name) == ""
        # Found through the pair keys and each candidate's positions.
        assert [
            r["match_message_id"] for r in session_search(store, query='"roll back"')["results"]
        ] == [1]
        assert session_search(store, query='"back roll"')["count"] == 0
        assert session_search(store, query='"will roll back"')["count"] == 1
        assert session_search(store, query='"deploy roll back"')["count"] == 0
        later = store.create_session("cli")
        store.append_message(later.id, Message("user", "please roll back the canary"))
        assert sql(pending, database=name) == "0"  # written straight into the index
        assert {r["session_id"] for r in session_search(store, query='"roll back"')["results"]} == {
            "20260101_000000_aaaaaa",
            later.id,
        }
    finally:
        store.close()


def test_a_version_3_store_gets_the_conversation_word_index_and_roles_still_filter(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = old_store(
        postgres_url,
        postgres_cluster,
        3,
        "('20260101_000000_aaaaaa', 'user', 'why is the deploy slow', 2), "
        "('20260101_000000_aaaaaa', 'tool', 'INFO deploy step 3 of 9', 3), "
        "('20260101_000000_aaaaaa', 'assistant', 'the info says step 3 hangs', 4)",
    )
    sql = postgres_cluster.sql
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert sql("SELECT version FROM hermes_schema_version", database=name) == str(
            SCHEMA_VERSION
        )
        assert sql(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'idx_messages_conversation_words'",
            database=name,
        ).endswith("WHERE (role = ANY (ARRAY['user'::text, 'assistant'::text]))")

        def found(query: str, **arguments: object) -> list[int]:
            results = session_search(store, query=query, **arguments)["results"]
            return sorted(r["match_message_id"] for r in results)

        assert found("info") == [3]  # the conversation only, by default
        assert found("info", role_filter="tool") == [2]
        assert found("deploy") == [1]
        later = store.create_session("cli")
        store.append_message(later.id, Message("assistant", "more info on the deploy"))
        assert len(found("info")) == 2
    finally:
        store.close()


def test_a_version_4_store_folds_accents_once_upgraded(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = old_store(
        postgres_url,
        postgres_cluster,
        4,
        "('20260101_000000_aaaaaa', 'user', 'my Résumé for the café', 2), "
        "('20260101_000000_aaaaaa', 'tool', 'Zürich weather', 3)",
    )
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert postgres_cluster.sql(
            "SELECT version FROM hermes_schema_version", database=name
        ) == str(SCHEMA_VERSION)
        for index in (
            "idx_messages_words", "idx_messages_pair_hashes", "idx_messages_conversation_words"
        ):
            assert postgres_cluster.sql(
                f"SELECT count(*) FROM pg_indexes WHERE indexname = '{index}'", database=name
            ) == "1"
        payload = session_search(store, query="resume cafe")
        assert [r["match_message_id"] for r in payload["results"]] == [1]
        assert session_search(store, query='"resume for"')["count"] == 1
        assert session_search(store, query="zurich", role_filter="tool")["count"] == 1
    finally:
        store.close()


def test_a_version_5_store_indexes_its_long_tool_output_whole_once_upgraded(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    long_output = "headword " + "ok " * 20_000 + "buriedword tail"
    name = old_store(
        postgres_url,
        postgres_cluster,
        5,
        f"('{SESSION}', 'user', 'run the build', 2), "
        f"('{SESSION}', 'tool', '{long_output}', 3)",
    )
    assert postgres_cluster.sql(
        "SELECT count(*) FROM messages WHERE search_words @@ 'buriedword'::tsquery",
        database=name,
    ) == "0"  # past version 5's head of tool output
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert postgres_cluster.sql(
            "SELECT version FROM hermes_schema_version", database=name
        ) == str(SCHEMA_VERSION)
        for word in ("buriedword", "headword"):
            [hit] = session_search(store, query=word, role_filter="tool")["results"]
            assert hit["match_message_id"] == 2
        assert store.stats().indexed_in_part == 0
    finally:
        store.close()


def test_a_tool_output_of_more_distinct_words_than_a_tsvector_holds_is_stored(
    postgres_url: str,
) -> None:
    """A ``tsvector`` holds at most 1 MB: 150,000 distinct words do not fit whole, so the head
    that fits is indexed, and the message is stored all the same."""
    words = " ".join(f"w{n:06d}x{n * 7919 % 1_000_003:07d}" for n in range(150_000))
    store = open_url(postgres_url, host=PluginHost())
    try:
        session = store.create_session("cli")
        store.append_message(session.id, Message("tool", words, tool_name="dump"))
        assert store.messages(session.id)[0].content == words
        [hit] = session_search(store, query="w000000x0000000", role_filter="tool")["results"]
        assert hit["session_id"] == session.id
    finally:
        store.close()


def test_a_version_6_store_gets_the_cache_token_columns_and_keeps_its_totals(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = old_store(postgres_url, postgres_cluster, 6, f"('{SESSION}', 'user', 'hello', 2)")
    postgres_cluster.sql(
        f"UPDATE sessions SET input_tokens = 16790991, output_tokens = 49467 WHERE id = '{SESSION}'",
        database=name,
    )
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert postgres_cluster.sql(
            "SELECT version FROM hermes_schema_version", database=name
        ) == str(SCHEMA_VERSION)
        old = store.get_session(SESSION)
        # What was counted before stays where it was: the upgrade cannot tell cache apart.
        assert (old.input_tokens, old.cache_read_tokens, old.cache_write_tokens) == (
            16790991, 0, 0,
        )  # fmt: skip
        later = store.create_session("cli", cache_read_tokens=7, cache_write_tokens=3)
        assert (later.cache_read_tokens, later.cache_write_tokens) == (7, 3)
    finally:
        store.close()


def test_a_version_7_store_gets_the_gateway_inbox(
    postgres_url: str, postgres_cluster: Cluster
) -> None:
    name = old_store(postgres_url, postgres_cluster, 7, f"('{SESSION}', 'user', 'hello', 2)")
    sql = postgres_cluster.sql
    assert sql("SELECT to_regclass('gateway_inbox') IS NULL", database=name) == "t"
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert sql("SELECT version FROM hermes_schema_version", database=name) == str(
            SCHEMA_VERSION
        )
        admitted = store.routing.inbox_add("agent:main:telegram:dm:1", "telegram", "9", "{}")
        assert admitted.entry is not None
        assert [e.id for e in store.routing.inbox_pending()] == [admitted.entry.id]
        assert [m.content for m in store.messages(SESSION)] == ["hello"]
    finally:
        store.close()


@pytest.mark.parametrize("version", [9, 10])
def test_a_version_9_or_10_store_gets_the_client_s_pair_keys_and_no_statistics_of_them(
    postgres_url: str, postgres_cluster: Cluster, version: int
) -> None:
    """Schema 11: the keys the server computed (and, before 10, gathered statistics of at every
    ANALYZE) become a column the client writes; the upgrade stores them for every message."""
    texts = [f"the deploy will roll back {n}" for n in range(50)] + ["İstanbul foo\u212abar x"]  # Kelvin sign
    rows = ", ".join(f"('{SESSION}', 'user', '{text}', 2)" for text in texts)
    name = old_store(postgres_url, postgres_cluster, version, rows)
    sql = postgres_cluster.sql
    sql("ANALYZE messages", database=name)
    store = open_url(postgres_url, host=PluginHost())
    try:
        assert sql("SELECT version FROM hermes_schema_version", database=name) == str(
            SCHEMA_VERSION
        )
        with psycopg.connect(postgres_url) as db:
            stored = db.execute("SELECT content, pair_keys FROM messages ORDER BY id").fetchall()
        assert [row[1] for row in stored] == [message_pair_keys(row[0]) for row in stored]
        assert len(stored) == len(texts) and all(row[1] for row in stored)
        for gone in (
            "SELECT count(*) FROM pg_proc WHERE proname IN ('hermes_pair_keys', "
            "'hermes_phrase_keys')",
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'idx_messages_pair_keys'",
        ):
            assert sql(gone, database=name) == "0"
        sql("ANALYZE messages", database=name)
        assert sql(
            "SELECT count(*) FROM pg_stats WHERE tablename = 'messages' AND attname = 'pair_keys'",
            database=name,
        ) == "0"
        assert session_search(store, query='"will roll back"')["count"] == 1  # one session
        # PostgreSQL lowercases İ and the Kelvin sign to ASCII: so do the keys.
        assert session_search(store, query='"istanbul fookbar x"')["count"] == 1
    finally:
        store.close()
