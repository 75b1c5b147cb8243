"""The PostgreSQL search's own shortcuts give what the plain reading gives: the bounded road's
term counts (read from the ``tsvector`` in SQL) equal the words the highlighter marks in the
text, and the count probe's kept matches rank exactly as a fresh match would."""

from __future__ import annotations

import pytest
from hermes_hookspecs import Message
from hermes_store_postgres.fulltext import highlight, to_tsquery_text

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url

TEXTS = [
    "Deploy the deploy script; deployment deployed. deploy!",
    "nothing to see here",
    "Rollout: roll out the rollout, then ROLL back",
    "deploy rollout deploy-rollout deploy_rollout",
]


@pytest.mark.parametrize(
    "fts", ["deploy", "deploy*", "roll*", "deploy rollout", '"deploy rollout"', "deploy NOT script"]
)
def test_term_counts_match_the_highlighted_words(postgres_url: str, fts: str) -> None:
    store = open_url(postgres_url, host=PluginHost())
    try:
        session = store.create_session("cli")
        store.append_messages(session.id, [Message("user", text) for text in TEXTS])
        rows = store.search_index.newest_matches(
            fts, ["user"], None, oldest_first=False, limit=10, mark="\x01"
        )
        contents = {m.id: m.content for m in store.messages(session.id)}
        words = [(term,) for term in to_tsquery_text(fts).positive]  # each word on its own
        counted = {row[0]: row[3].count("\x01") for row in rows}
        marked = {
            message_id: highlight(contents[message_id], words, "\x01", "\x02").count("\x01")
            for message_id in counted
        }
        assert counted and counted == marked
    finally:
        store.close()


def test_the_probe_s_matches_rank_as_a_fresh_match_would(postgres_url: str) -> None:
    store = open_url(postgres_url, host=PluginHost())
    try:
        session = store.create_session("cli")
        store.append_messages(session.id, [Message("user", text) for text in TEXTS])
        index = store.search_index
        fresh = index.ranked_matches('"deploy rollout"', 10)
        assert not index.more_matches_than('"deploy rollout"', 100)
        assert index.ranked_matches('"deploy rollout"', 10) == fresh
        assert [row[0] for row in fresh] and len(fresh) == 1
    finally:
        store.close()


def test_the_planner_s_estimate_answers_only_for_frequent_single_words(postgres_url: str) -> None:
    """Frequent single words (and prefixes) are answered from the planner's statistics; a word
    the statistics do not list, and anything combined, is counted — so a rare word's answer is
    never the planner's guess for unlisted words (which here is 10 of the 2,000 messages)."""
    store = open_url(postgres_url, host=PluginHost())
    try:
        session = store.create_session("cli")
        texts = [f"everywhere filler{n % 7}" for n in range(2000)]
        texts[5] += " once"
        texts[9] += " twice"
        texts[11] += " twice"
        store.append_messages(session.id, [Message("user", text) for text in texts])
        store.lifecycle.optimize()  # VACUUM ANALYZE: the planner now has statistics
        index = store.search_index
        assert index.more_matches_than("everywhere", 100)
        assert index.more_matches_than("everyw*", 100)
        assert index.more_matches_than("filler3", 100)  # 286 matches
        assert not index.more_matches_than("filler3", 300)
        assert not index.more_matches_than("once", 1)
        assert index.more_matches_than("twice", 1)
        assert not index.more_matches_than("twice", 2)
        assert not index.more_matches_than("everywhere once", 1)  # combined: counted
        assert not index.more_matches_than("nowhere*", 0)
        assert [row[0] for row in index.ranked_matches("twice", 10)] == [
            row[0] for row in index.ranked_matches("twice", 10)
        ]
        assert len(index.ranked_matches("twice", 10)) == 2
    finally:
        store.close()


def test_a_phrase_s_newest_matches_are_the_newest_that_hold_it(postgres_url: str) -> None:
    """The bounded road's newest matches of a phrase come from the pair index's candidates
    checked newest first (oldest first when asked): what it hands back is exactly the
    ``limit`` newest (oldest) messages holding the phrase in the roles asked for — never a
    candidate holding every pair apart (``alpha beta … beta gamma``), never an older match
    before a newer one."""
    store = open_url(postgres_url, host=PluginHost())
    try:
        session = store.create_session("cli")
        texts = []
        for n in range(40):
            if n % 3 == 0:
                texts.append(f"note {n}: alpha beta gamma")
            elif n % 3 == 1:
                texts.append(f"decoy {n}: alpha beta then beta gamma")
            else:
                texts.append(f"other {n}: gamma alpha beta")
        roles = ["user" if n % 2 == 0 else "assistant" for n in range(40)]
        store.append_messages(
            session.id, [Message(role, text) for role, text in zip(roles, texts, strict=True)]
        )
        ids = [message.id for message in store.messages(session.id)]
        index = store.search_index

        def expected(wanted: set[str], oldest_first: bool, limit: int) -> list[int]:
            held = [
                ids[n]
                for n in range(40)
                if "alpha beta gamma" in texts[n] and roles[n] in wanted
            ]
            return (held if oldest_first else held[::-1])[:limit]

        for wanted in ({"user", "assistant"}, {"assistant"}):
            for oldest_first in (False, True):
                rows = index.newest_matches(
                    '"alpha beta gamma"',
                    sorted(wanted),
                    None,
                    oldest_first=oldest_first,
                    limit=4,
                    mark="\x01",
                )
                assert [row[0] for row in rows] == expected(wanted, oldest_first, 4)
                assert all(row[3].count("\x01") == 3 for row in rows)
    finally:
        store.close()
