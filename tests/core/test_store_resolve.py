"""Turning an id, a prefix or a title into a session (SPEC S3, S6, R2)."""

from __future__ import annotations

import time

import pytest

from hermes_core.store import AmbiguousSessionId, SessionNotFound, SessionStore, StoreError
from hermes_core.store.protocol import Store

MOMENT = time.mktime((2025, 6, 7, 8, 9, 10, 0, 0, -1))


@pytest.fixture
def store(backend_store: Store) -> Store:
    """Every test runs on each backend (SQLite, PostgreSQL)."""
    return backend_store


def test_exact_id_resolves_to_itself(store: SessionStore) -> None:
    session = store.create_session(session_id="20250607_080910_aaaaaa")
    store.create_session(session_id="20250607_080910_aaaaab")
    assert store.resolve("20250607_080910_aaaaaa") == session.id
    assert store.resolve("  20250607_080910_aaaaaa\n") == session.id


def test_exact_id_wins_over_a_longer_id_it_prefixes(store: SessionStore) -> None:
    short = store.create_session(session_id="20250607_080910_abcdef")
    store.create_session(session_id="20250607_080910_abcdef01")
    assert store.resolve(short.id) == short.id


def test_unique_prefix_resolves(store: SessionStore) -> None:
    a = store.create_session(session_id="20250607_080910_aa1111")
    b = store.create_session(session_id="20250607_080910_bb2222")
    assert store.resolve("20250607_080910_a") == a.id
    assert store.resolve("20250607_080910_bb") == b.id


def test_ambiguous_prefix_lists_the_matches(store: SessionStore) -> None:
    ids = [f"20250607_080910_ab{n:04x}" for n in range(3)]
    for session_id in ids:
        store.create_session(session_id=session_id)
    store.create_session(session_id="20250607_080910_cd0000")
    with pytest.raises(AmbiguousSessionId) as caught:
        store.resolve("20250607_080910_ab")
    assert caught.value.matches == ids
    message = str(caught.value)
    assert "3 sessions" in message
    assert all(session_id in message for session_id in ids)
    assert isinstance(caught.value, StoreError)


def test_ambiguous_prefix_reports_every_match_but_shows_a_few(store: SessionStore) -> None:
    ids = [store.create_session(started_at=MOMENT).id for _ in range(8)]
    with pytest.raises(AmbiguousSessionId) as caught:
        store.resolve("20250607")
    assert sorted(caught.value.matches) == sorted(ids)
    assert "8 sessions" in str(caught.value)


@pytest.mark.parametrize("reference", ["20990101_000000_ffffff", "2099", "nothing like it", "   "])
def test_unknown_reference_is_session_not_found(store: SessionStore, reference: str) -> None:
    store.create_session(started_at=MOMENT, title="something")
    with pytest.raises(SessionNotFound):
        store.resolve(reference)


def test_title_resolves_to_its_session(store: SessionStore) -> None:
    session = store.create_session(title="Débogage 🚀 解析器")
    store.create_session(title="another")
    assert store.resolve("Débogage 🚀 解析器") == session.id
    assert store.resolve("  Débogage\u200b 🚀 解析器 ") == session.id


def test_title_resolves_to_the_newest_of_its_lineage(store: SessionStore) -> None:
    original = store.create_session(title="my project")
    second = store.continue_after_compression(original.id)
    third = store.continue_after_compression(second.id)
    assert (second.title, third.title) == ("my project #2", "my project #3")
    assert store.resolve("my project") == third.id


def test_numbered_title_resolves_to_exactly_that_session(store: SessionStore) -> None:
    original = store.create_session(title="my project")
    second = store.continue_after_compression(original.id)
    third = store.continue_after_compression(second.id)
    assert store.resolve("my project #2") == second.id
    assert store.resolve("my project #3") == third.id


def test_lineage_of_another_title_is_not_mixed_in(store: SessionStore) -> None:
    mine = store.create_session(title="my project")
    other = store.create_session(title="my project extra")
    store.continue_after_compression(other.id)
    assert store.resolve("my project") == mine.id


def test_lineage_resolves_when_the_original_was_deleted(store: SessionStore) -> None:
    original = store.create_session(title="my project")
    second = store.continue_after_compression(original.id)
    store.delete_session(original.id)
    assert store.resolve("my project") == second.id


def test_title_that_prefixes_many_ids_resolves_as_a_title(store: SessionStore) -> None:
    titled = store.create_session(started_at=MOMENT, title="2025")
    store.create_session(started_at=MOMENT)
    assert store.resolve("2025") == titled.id


def test_percent_and_underscore_in_a_title_are_literal(store: SessionStore) -> None:
    wildcard_bait = store.create_session(title="100abc-done")
    literal = store.create_session(title="100%_done")
    assert store.resolve("100%_done") == literal.id
    assert store.resolve("100abc-done") == wildcard_bait.id
    with pytest.raises(SessionNotFound):
        store.resolve("100%done")
    with pytest.raises(SessionNotFound):
        store.resolve("1__abc-done")


def test_percent_and_underscore_in_a_lineage_title_are_literal(store: SessionStore) -> None:
    literal = store.create_session(title="50%_off")
    bait = store.create_session(title="50xyoff")
    bait_child = store.continue_after_compression(bait.id)
    assert bait_child.title == "50xyoff #2"
    assert store.resolve("50%_off") == literal.id
    literal_child = store.continue_after_compression(literal.id)
    assert literal_child.title == "50%_off #2"
    assert store.resolve("50%_off") == literal_child.id
    assert store.resolve("50xyoff") == bait_child.id


def test_percent_and_underscore_in_a_prefix_are_literal(store: SessionStore) -> None:
    store.create_session(session_id="20250607_080910_aaaaaa")
    store.create_session(session_id="20250607_080910_bbbbbb")
    for pattern in ("2025%", "%", "_", "2025060_", "20250607%aaaaaa", "20250607_080910_a_"):
        with pytest.raises(SessionNotFound):
            store.resolve(pattern)


def test_lineage_follows_parent_links_not_look_alike_titles(store: SessionStore) -> None:
    original = store.create_session(title="Fix issue")
    unrelated = store.create_session(title="Fix issue #3")  # a person's title, not a lineage
    second = store.continue_after_compression(original.id)
    assert second.title == "Fix issue #4"
    assert store.resolve("Fix issue") == second.id
    assert store.resolve("Fix issue #3") == unrelated.id
