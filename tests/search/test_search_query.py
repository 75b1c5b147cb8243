"""Query preparation: sanitising, operator words, CJK runs — and random text never raises."""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from search_corpus import Corpus

from hermes_core.search import session_search
from hermes_core.search.arguments import KNOWN
from hermes_core.search.query import MAX_QUERY_CHARS, MAX_QUERY_TERMS, prepare, sanitised_fts
from hermes_core.store import SessionStore


def test_sanitised_form_quotes_each_chunk_as_a_phrase() -> None:
    assert sanitised_fts("foo-bar c++ a.b_c") == '"foo bar" "c" "a b c"'
    assert sanitised_fts('"unbalanced deploy*') == '"unbalanced" "deploy" *'
    assert sanitised_fts("🚀 !!! ...") == ""
    assert sanitised_fts("OR kubernetes AND") == '"kubernetes"'
    assert sanitised_fts("NOT") == '"NOT"'
    assert sanitised_fts("NOT java python-3") == '"python 3"'
    assert sanitised_fts("a. a, a!") == '"a"'


def test_very_long_queries_are_cut() -> None:
    assert len(prepare("word " * 1000).text.split()) == MAX_QUERY_TERMS
    assert len(prepare("x" * 100_000).text) == MAX_QUERY_CHARS


def test_sanitised_form_is_always_valid_fts5() -> None:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
    for text in ["foo-bar", 'a"b"c', "x:y", "(((", "NEAR(", "-x", "^", "*x", "x*y*"]:
        fts = sanitised_fts(text)
        if fts:
            connection.execute("SELECT rowid FROM t WHERE t MATCH ?", (fts,)).fetchall()


def test_prepared_query_separates_words_and_cjk_runs() -> None:
    query = prepare("  Deploy  量子纠缠 NOT java  東京 ")
    assert query.text == "Deploy 量子纠缠 NOT java 東京"
    assert query.cjk_runs == ("量子纠缠", "東京")
    assert query.words == ("deploy",)
    assert query.is_cjk and not query.is_empty
    assert prepare("!!! ???").is_empty


def test_words_fold_case_and_accents() -> None:
    assert prepare("Café ÜBER").words == ("cafe", "uber")


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(
        alphabet=st.one_of(
            st.characters(),
            st.sampled_from(list('"*()^:+-{}ORANDNOTNEAR 量子纠缠東京🚀kubernetes')),
        ),
        max_size=80,
    ),
    role_filter=st.sampled_from(["user,assistant", "tool", "user,assistant,tool"]),
    sort=st.sampled_from([None, "newest", "oldest"]),
)
def test_random_text_never_raises(
    store: SessionStore, corpus: Corpus, text: str, role_filter: str, sort: str | None
) -> None:
    payload = session_search(store, query=text, role_filter=role_filter, sort=sort)
    assert "error" not in payload
    assert payload["form"] in ("discovery", "browse")


json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=30),
    st.lists(st.text(max_size=10), max_size=3),
    st.sampled_from(["newest", "full", "tool", "user,assistant", "@session:x/y", "cli"]),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(arguments=st.dictionaries(st.sampled_from(sorted(KNOWN)), json_values, max_size=5))
def test_any_arguments_give_a_payload_or_an_error_never_an_exception(
    store: SessionStore, arguments: dict
) -> None:
    payload = session_search(store, **arguments)
    assert ("error" in payload) != ("form" in payload)
