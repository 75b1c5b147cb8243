"""session_search: the four forms, every result field, lineage, roles, sort, clamps."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hermes_hookspecs import Message
from hermes_store_postgres.testing import cluster_or_skip, fresh_database
from postgres_cluster import BACKENDS
from search_corpus import Corpus, build_corpus, open_corpus_store

from hermes_core.search import MATCH_END, MATCH_START, SESSION_SEARCH_TOOL, ranking, session_search
from hermes_core.search.arguments import KNOWN, MAX_LIMIT, MAX_WINDOW
from hermes_core.search.tool import run_search
from hermes_core.selection.filters import SessionFilter
from hermes_core.store import SessionStore
from hermes_core.store.protocol import Store


@pytest.fixture(scope="module", params=BACKENDS)
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    """The search corpus once per backend: ``state.db`` in the home, then a PostgreSQL
    database the home's ``config.yaml`` names."""
    home = tmp_path_factory.mktemp("search") / "home"
    if request.param == "sqlite":
        yield build_corpus(home)
        return
    cluster = cluster_or_skip()
    with fresh_database(cluster) as name:
        yield build_corpus(home, cluster.url(name))


@pytest.fixture
def store(corpus: Corpus) -> Iterator[Store]:
    with open_corpus_store(corpus) as opened:
        yield opened

RESULT_FIELDS = {
    "session_id",
    "title",
    "when",
    "source",
    "snippet",
    "detail",
    "bookend_start",
    "bookend_end",
    "messages",
    "match_message_id",
    "messages_before",
    "messages_after",
}


def ids(payload: dict) -> list[str]:
    assert "error" not in payload, payload
    return [result["session_id"] for result in payload["results"]]


def test_the_form_follows_from_the_arguments(store: SessionStore, corpus: Corpus) -> None:
    session = corpus.ids["auth"]
    anchor = corpus.messages["auth"][5]
    assert session_search(store, query="refactor")["form"] == "discovery"
    assert session_search(store, session_id=session, around_message_id=anchor)["form"] == "scroll"
    assert session_search(store, session_id=session)["form"] == "read"
    assert session_search(store)["form"] == "browse"


def test_discovery_results_carry_every_field(store: SessionStore, corpus: Corpus) -> None:
    payload = session_search(store, query="kubernetes OR JWT OR zebra", limit=3)
    assert payload["count"] == 3
    for result in payload["results"]:
        assert set(result) >= RESULT_FIELDS
        assert result["when"] and result["source"] == "cli"
        assert MATCH_START in result["snippet"] and MATCH_END in result["snippet"]
        anchor = [m for m in result["messages"] if m["match"]]
        assert [m["id"] for m in anchor] == [result["match_message_id"]]
    best, *others = payload["results"]
    assert best["detail"] == "full"
    assert 1 <= len(best["bookend_start"]) <= 3 and 1 <= len(best["bookend_end"]) <= 3
    assert all(m["role"] in ("user", "assistant") for m in best["bookend_start"])
    for other in others:
        assert other["detail"] == "compact"
        assert other["bookend_start"] == [] and other["bookend_end"] == []
        assert len(other["messages"]) == 1


def test_full_result_has_five_messages_each_side_of_the_match(
    store: SessionStore, corpus: Corpus
) -> None:
    payload = session_search(store, query="JWT")
    (result,) = payload["results"]
    assert result["session_id"] == corpus.ids["auth"]
    auth = corpus.messages["auth"]
    anchor = auth[21]
    assert result["match_message_id"] == anchor
    assert [m["id"] for m in result["messages"]] == auth[16:27]
    assert result["messages_before"] == 21 and result["messages_after"] == len(auth) - 22
    assert [m["id"] for m in result["bookend_start"]] == auth[:3]
    assert [m["id"] for m in result["bookend_end"]] == auth[-3:]
    assert "JWT" in result["snippet"]


def test_detail_full_hydrates_every_result(store: SessionStore) -> None:
    payload = session_search(store, query="kubernetes OR zebra OR JWT", detail="full")
    assert len(payload["results"]) == 3
    assert all(r["detail"] == "full" and r["bookend_start"] for r in payload["results"])


def test_one_result_per_lineage_anchored_at_its_best_hit(
    store: SessionStore, corpus: Corpus
) -> None:
    payload = session_search(store, query="kubernetes", limit=10)
    lineage = {corpus.ids["project"], corpus.ids["project2"], corpus.ids["branch"]}
    found = [r for r in payload["results"] if r["session_id"] in lineage]
    assert len(found) == 1
    (result,) = found
    assert result["lineage_id"] == corpus.ids["project"]
    # The continuation says kubernetes three times in a short message: the best hit.
    assert result["session_id"] == corpus.ids["project2"]
    assert result["match_message_id"] == corpus.messages["project2"][0]


def test_a_query_naming_a_title_surfaces_that_session_first(
    store: SessionStore, corpus: Corpus
) -> None:
    payload = session_search(store, query="quarterly budget")
    assert ids(payload)[0] == corpus.ids["title_only"]
    result = payload["results"][0]
    assert result["matched"] == "title"
    assert result["snippet"].startswith("title: ") and ">>>budget<<<" in result["snippet"]
    assert result["match_message_id"] == corpus.messages["title_only"][0]
    named = session_search(store, query="auth refactor plan")
    assert ids(named)[0] == corpus.ids["auth"]


def test_a_common_word_in_a_title_does_not_name_it(store: SessionStore) -> None:
    payload = session_search(store, query="plan")
    assert all(r["matched"] == "content" for r in payload["results"])


def test_archived_sessions_are_searchable(store: SessionStore, corpus: Corpus) -> None:
    payload = session_search(store, query="zebra")
    assert ids(payload) == [corpus.ids["archived"]]
    assert payload["results"][0]["archived"] is True


def test_role_filter_reaches_tool_output_only_when_asked(
    store: SessionStore, corpus: Corpus
) -> None:
    assert ids(session_search(store, query="segfault")) == []
    with_tool = session_search(store, query="segfault", role_filter="user,assistant,tool")
    assert ids(with_tool) == [corpus.ids["tooling"]]
    tool_only = session_search(store, query="segfault OR build", role_filter="tool")
    assert ids(tool_only) == [corpus.ids["tooling"]]
    anchor = tool_only["results"][0]["messages"]
    assert next(m for m in anchor if m["match"])["role"] == "tool"
    assert next(m for m in anchor if m["match"])["tool_name"] == "terminal"
    # "build" is in a user and an assistant message too, but only tool output was searched.
    assert tool_only["results"][0]["match_message_id"] == corpus.messages["tooling"][2]


def test_role_filter_rejects_unknown_roles(store: SessionStore) -> None:
    assert "error" in session_search(store, query="x", role_filter="robot")


def test_sort_newest_and_oldest_order_by_time(store: SessionStore, corpus: Corpus) -> None:
    query = "kubernetes OR zebra OR JWT OR python"
    newest = ids(session_search(store, query=query, sort="newest", limit=10))
    oldest = ids(session_search(store, query=query, sort="oldest", limit=10))
    # The compression continuation and the branch were written just now.
    assert newest[0] == corpus.ids["project2"] and newest[1] == corpus.ids["phrases"]
    assert oldest[0] == corpus.ids["auth"]
    assert set(newest) == set(oldest)


def test_limit_and_window_are_clamped(store: SessionStore, corpus: Corpus) -> None:
    assert session_search(store, query="kubernetes OR zebra", limit=0)["count"] == 1
    many = session_search(store, query="the OR a OR kubernetes OR python OR zebra", limit=1000)
    assert 1 < many["count"] <= MAX_LIMIT
    long = corpus.messages["long"]
    tiny = session_search(
        store, session_id=corpus.ids["long"], around_message_id=long[50], window=0
    )
    assert [m["id"] for m in tiny["messages"]] == long[49:52]
    huge = session_search(
        store, session_id=corpus.ids["long"], around_message_id=long[50], window=10_000
    )
    assert [m["id"] for m in huge["messages"]] == long[50 - MAX_WINDOW : 51 + MAX_WINDOW]


@pytest.mark.parametrize(
    "arguments",
    [
        {"query": "x", "limit": "many"},
        {"query": "x", "sort": "sideways"},
        {"query": "x", "detail": "everything"},
        {"query": 42},
        {"around_message_id": 3},
        {"session_id": "nope-not-a-session"},
        {"session_id": "x", "around_message_id": "abc"},
        {"session_id": "x", "around_message_id": 10**30},
        {"query": "x", "limit": float("nan")},
        {"query": "x", "limit": True},
        {"query": "x", "role_filter": 7},
        {"mode": "discovery"},
    ],
)
def test_bad_arguments_come_back_as_an_error_message(store: SessionStore, arguments) -> None:
    payload = session_search(store, **arguments)
    assert set(payload) == {"error"} and payload["error"]


def test_fts5_syntax_phrase_or_not_prefix(store: SessionStore, corpus: Corpus) -> None:
    phrases = corpus.ids["phrases"]
    assert phrases in ids(session_search(store, query='"java is verbose"'))
    assert ids(session_search(store, query='"verbose java"')) == []
    either = ids(session_search(store, query="zebra OR segfault", role_filter="user,tool"))
    assert set(either) == {corpus.ids["archived"], corpus.ids["tooling"]}
    not_java = session_search(store, query="python NOT java", detail="full")
    assert ids(not_java) == [phrases]
    assert not_java["results"][0]["match_message_id"] == corpus.messages["phrases"][2]
    prefix = session_search(store, query="deploy*", limit=10)
    lineages = {result["lineage_id"] for result in prefix["results"]}
    assert {phrases, corpus.ids["project"]} <= lineages
    both = session_search(store, query="python java")  # AND by default
    assert ids(both) == [phrases]
    assert both["results"][0]["match_message_id"] == corpus.messages["phrases"][0]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("foo-bar", "hostile"),
        ("c++", "hostile"),
        ("a.b_c", "hostile"),
        ("docker-compose", "hostile"),
        ('"unbalanced quote kubernetes', None),
        ("kubernetes)", "project2"),
        ("(kubernetes", "project2"),
        ("NOT", None),
        ("AND", None),
        ("OR kubernetes", "project2"),
        ("kubernetes AND", "project2"),
        ("*", None),
        ("-", None),
        ("foo:bar", "hostile"),
        ("🚀", None),
        ("🚀🚀 zebra 🚀", "archived"),
        ("'", None),
        ("^", None),
        ("NEAR(", None),
        ("{kubernetes", "project2"),
        ("!" * 2048, None),
        ("(*&^%$#@!~`'\"[]{};:,.<>/?\\|+=-_" * 70, None),
        ("\x00\x01\x1f", None),
        ("a" * 100_000, None),
        ("kubernetes " * 1500, "project2"),
        ("(" * 2000, None),
        ('"' * 3001, None),
        ("x* " * 1000, None),
        ("NEAR(" * 500, None),
        ("量" * 5000, None),
        ("\u200b\u202e", None),
    ],
)
def test_hostile_queries_never_raise(
    store: SessionStore, corpus: Corpus, query: str, expected: str | None
) -> None:
    payload = session_search(store, query=query)
    assert "error" not in payload
    assert payload["form"] in ("discovery", "browse")
    json.dumps(payload)
    if expected is not None:
        assert corpus.ids[expected] in ids(payload)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("纠缠", "chinese"),  # 2 characters, Chinese
        ("量子纠", "chinese"),  # 3 characters
        ("量子纠缠", "chinese"),
        ("東京", "japanese"),  # 2 characters, Japanese
        ("ラーメ", "japanese"),  # 3 characters, katakana
        ("食べ", "japanese"),
        ("低温 实验", "chinese"),  # two runs, both required
    ],
)
def test_cjk_queries_find_the_sessions_containing_them(
    store: SessionStore, corpus: Corpus, query: str, expected: str
) -> None:
    payload = session_search(store, query=query)
    assert ids(payload) == [corpus.ids[expected]]
    assert payload["ranking"] == "cjk"
    result = payload["results"][0]
    assert MATCH_START in result["snippet"]
    anchor = next(m for m in result["messages"] if m["match"])
    assert all(part in anchor["content"] for part in query.split())


def test_cjk_query_missing_one_part_finds_nothing(store: SessionStore) -> None:
    assert ids(session_search(store, query="东京 纠缠")) == []
    assert ids(session_search(store, query="纠缠 kubernetes")) == []


def test_bounded_ranking_is_used_above_the_full_rank_limit(
    store: SessionStore, corpus: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ranking, "FULL_RANK_MAX", 0)
    payload = session_search(store, query="kubernetes", limit=5)
    assert payload["ranking"] == "bounded"
    assert ids(payload)[0] == corpus.ids["project2"]  # highest term frequency, short message


def test_scroll_boundary_message_appears_in_both_windows(
    store: SessionStore, corpus: Corpus
) -> None:
    session = corpus.ids["long"]
    long = corpus.messages["long"]
    first = session_search(store, session_id=session, around_message_id=long[10], window=3)
    assert [m["id"] for m in first["messages"]] == long[7:14]
    assert first["messages_before"] == 10 and first["messages_after"] == 89
    forward = session_search(
        store, session_id=session, around_message_id=first["messages"][-1]["id"], window=3
    )
    assert forward["messages"][0]["id"] == long[10]
    assert first["messages"][-1]["id"] in [m["id"] for m in forward["messages"]]
    back = session_search(
        store, session_id=session, around_message_id=first["messages"][0]["id"], window=3
    )
    assert back["messages"][-1]["id"] == long[10]
    assert "bookend_start" not in first and "snippet" not in first


def test_scroll_counts_reveal_the_start_and_end(store: SessionStore, corpus: Corpus) -> None:
    session = corpus.ids["long"]
    long = corpus.messages["long"]
    start = session_search(store, session_id=session, around_message_id=long[1])
    assert start["messages_before"] == 1 < start["window"]
    assert start["messages"][0]["id"] == long[0]
    end = session_search(store, session_id=session, around_message_id=long[-2])
    assert end["messages_after"] == 1 < end["window"]
    assert end["messages"][-1]["id"] == long[-1]


def test_scroll_refuses_a_message_of_another_session(store: SessionStore, corpus: Corpus) -> None:
    payload = session_search(
        store, session_id=corpus.ids["long"], around_message_id=corpus.messages["auth"][0]
    )
    assert "not in session" in payload["error"]


def test_read_returns_a_small_session_whole(store: SessionStore, corpus: Corpus) -> None:
    payload = session_search(store, session_id=corpus.ids["tooling"])
    assert payload["complete"] is True
    assert [m["id"] for m in payload["messages"]] == corpus.messages["tooling"]
    assert payload["messages"][1]["tool_calls"] == ["terminal"]


def test_read_gives_head_and_tail_of_a_big_session_with_a_scroll_hint(
    store: SessionStore, corpus: Corpus
) -> None:
    payload = session_search(store, session_id=corpus.ids["long"])
    long = corpus.messages["long"]
    assert payload["complete"] is False
    assert [m["id"] for m in payload["messages"]] == long[:10]
    assert [m["id"] for m in payload["tail_messages"]] == long[-10:]
    assert payload["omitted_messages"] == 80
    assert "around_message_id" in payload["hint"]


def test_read_resolves_session_links_and_prefixes(store: SessionStore, corpus: Corpus) -> None:
    session = corpus.ids["tooling"]
    linked = session_search(store, session_id=f"@session:work/{session}")
    assert linked["session_id"] == session and linked["profile"] == "work"
    by_title = session_search(store, session_id="Auth refactor plan")
    assert by_title["session_id"] == corpus.ids["auth"]


def test_browse_lists_recent_sessions_newest_first_without_archived_or_delegates(
    store: SessionStore, corpus: Corpus
) -> None:
    payload = session_search(store, limit=50)
    shown = [row["session_id"] for row in payload["sessions"]]
    assert corpus.ids["archived"] not in shown and corpus.ids["delegate"] not in shown
    actives = [row["last_active"] for row in payload["sessions"]]
    assert actives == sorted(actives, reverse=True)
    japanese = next(r for r in payload["sessions"] if r["session_id"] == corpus.ids["japanese"])
    assert japanese["preview"] == "東京でラーメンを食べました" and japanese["source"] == "telegram"
    assert len(session_search(store)["sessions"]) == 10


def test_source_narrows_discovery_and_browse(store: SessionStore, corpus: Corpus) -> None:
    assert ids(session_search(store, query="ラーメン OR 東京", source="telegram")) == [
        corpus.ids["japanese"]
    ]
    assert ids(session_search(store, query="東京", source="cli")) == []
    rows = session_search(store, source="telegram")["sessions"]
    assert [r["session_id"] for r in rows] == [corpus.ids["japanese"]]


def test_a_hosts_selection_narrows_discovery_and_browse_but_not_read(
    store: Store, corpus: Corpus
) -> None:
    """``run_search(..., within=)``: the MCP server's cwd/time filters, pushed into the query
    (not applied to the results afterwards), together with the tool's own ``source``."""
    recent = SessionFilter(after=time.time() - 5.5 * 86_400)
    everywhere = ids(run_search(store, {"query": "zebra OR parser"}))
    assert corpus.ids["archived"] in everywhere and corpus.ids["tooling"] in everywhere
    assert ids(run_search(store, {"query": "zebra OR parser"}, within=recent)) == [
        corpus.ids["tooling"]
    ]
    assert ids(run_search(store, {"query": "Auth refactor plan"}, within=recent)) == []
    assert ids(run_search(store, {"query": "parser", "source": "telegram"}, within=recent)) == []
    browsed = run_search(store, {"limit": 50}, within=SessionFilter(before=time.time() - 7.5 * 86_400))
    assert {row["session_id"] for row in browsed["sessions"]} == {
        corpus.ids["auth"], corpus.ids["title_only"], corpus.ids["project"]
    }
    read = run_search(store, {"session_id": corpus.ids["auth"]}, within=recent)
    assert read["session_id"] == corpus.ids["auth"]


def test_tool_definition_describes_when_and_how(store: SessionStore) -> None:
    definition = SESSION_SEARCH_TOOL
    assert definition["name"] == "session_search"
    assert "past conversation" in definition["description"]
    assert "remember when" in definition["description"]
    assert set(definition["parameters"]["properties"]) == KNOWN
    assert definition["parameters"]["type"] == "object"
    json.dumps(definition)


def test_session_search_without_a_store_uses_hermes_home(
    corpus: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(corpus.home))
    assert ids(session_search(query="zebra")) == [corpus.ids["archived"]]


def test_session_search_accepts_a_plain_connection(corpus: Corpus, tmp_path: Path) -> None:
    if corpus.url is not None:
        pytest.skip("a plain sqlite3 connection exists for SQLite stores only")
    with SessionStore.open(corpus.home) as store:
        payload = session_search(store.connection, query="JWT")
    assert ids(payload) == [corpus.ids["auth"]]


def test_a_cjk_query_naming_a_title_surfaces_that_session(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path / "home") as store:
        named = store.create_session("cli", title="量子纠缠实验")
        store.append_messages(named.id, [Message("user", "hello"), Message("assistant", "hi")])
        other = store.create_session("cli")
        store.append_messages(other.id, [Message("user", "量子纠缠 is in this message")])
        payload = session_search(store, query="量子纠缠")
    assert ids(payload) == [named.id, other.id]
    assert payload["results"][0]["matched"] == "title"
    assert payload["results"][0]["snippet"] == "title: >>>量子纠缠<<<实验"


def test_an_unreadable_store_is_an_error_message_not_an_exception(tmp_path: Path) -> None:
    import sqlite3

    connection = sqlite3.connect(tmp_path / "not-a-store.db")  # no tables at all
    payload = session_search(connection, query="anything")
    assert "cannot be read" in payload["error"]
    assert "cannot be read" in session_search(connection)["error"]
