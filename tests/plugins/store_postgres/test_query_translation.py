"""The FTS5 query forms of SPEC Q2 as ``tsquery`` text, and what is refused (then retried by
the engine in its sanitised form, which is always accepted)."""

from __future__ import annotations

import pytest
from hermes_store_postgres.fulltext import highlight, snippet, to_tsquery_text

from hermes_core.search.query import prepare
from hermes_core.store.errors import QueryRejected


@pytest.mark.parametrize(
    ("fts", "tsquery"),
    [
        ("docker", "'docker'"),
        ("Docker compose", "('docker' & 'compose')"),
        ("docker AND compose", "('docker' & 'compose')"),
        ('"compose up"', "('compose' <-> 'up')"),
        ("docker OR rollout", "('docker' | 'rollout')"),
        ("a OR b c", "('a' | ('b' & 'c'))"),
        ("docker NOT kubernetes", "('docker' & !'kubernetes')"),
        ("a NOT b c", "('a' & !('b' & 'c'))"),  # side by side binds tighter than NOT
        ("a b NOT c", "(('a' & 'b') & !'c')"),
        ("kube *", "'kube':*"),
        ("deploy 🚀", "'deploy'"),  # a phrase of no words drops out, as in FTS5
        ('deploy OR " "', "'deploy'"),
        ('deploy AND " "', ""),  # … and matches nothing where it is required
        ("kube*", "'kube':*"),
        ('"compose u" *', "('compose' <-> 'u':*)"),
        ("(a OR b) c", "(('a' | 'b') & 'c')"),
        ('"foo_bar"', "('foo' <-> 'bar')"),
        ("量子纠缠", "'量子纠缠'"),
    ],
)
def test_each_query_form_becomes_its_tsquery(fts: str, tsquery: str) -> None:
    assert to_tsquery_text(fts).tsquery == tsquery


@pytest.mark.parametrize(
    ("fts", "pairs"),
    [
        ("docker compose", ()),
        ('"compose up"', ("compose up",)),
        ('"Docker compose up" rollout', ("docker compose", "compose up")),
        ('"compose u" *', ()),  # a prefix is no whole word
        ('"a b c*" *', ("a b",)),
        ('"compose up" OR rollout', ()),  # one branch of an OR is not required
        ('("a b" OR c) "d e"', ("d e",)),
        ('docker NOT "compose up"', ()),
        ('"café au lait"', ("cafe au", "au lait")),  # accents folded first
        ('"smørrebrød au lait"', ("au lait",)),  # ASCII words only (ø is no accent)
    ],
)
def test_the_word_pairs_every_match_must_hold(fts: str, pairs: tuple[str, ...]) -> None:
    assert to_tsquery_text(fts).pairs == pairs


@pytest.mark.parametrize(
    "fts",
    ['docker" AND (', "foo-bar", "c++", "a.b_c", "NOT docker", "docker OR", "(a b", "a)",
     "title:docker", "NEAR(a b)", "", "*", "'; DROP TABLE messages; --"],
)  # fmt: skip
def test_what_fts5_refuses_is_refused_and_its_sanitised_form_is_accepted(fts: str) -> None:
    with pytest.raises(QueryRejected):
        to_tsquery_text(fts)
    fallback = prepare(fts).fallback
    if fallback:
        translated = to_tsquery_text(fallback).tsquery
        assert all(part.isalnum() or part in "'&()<->:*! |" for part in translated)


def test_words_after_not_are_not_marked() -> None:
    terms = to_tsquery_text("docker NOT kubernetes")
    assert terms.positive == (("docker", False),)
    assert highlight("Docker on kubernetes", terms.phrases, "[", "]") == "[Docker] on kubernetes"


def test_a_snippet_marks_prefix_matches_and_cuts_with_an_ellipsis() -> None:
    text = " ".join(f"w{i}" for i in range(50)) + " kubernetes rollout " + "tail " * 40
    terms = to_tsquery_text("kube*").phrases
    cut = snippet(text, terms, ">>>", "<<<", "…", 10)
    assert cut is not None and cut.startswith("…") and cut.endswith("…")
    assert ">>>kubernetes<<<" in cut
    assert snippet("nothing here", terms, ">>>", "<<<", "…", 10) is None
