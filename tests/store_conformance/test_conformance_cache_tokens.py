"""Prompt-cache tokens: stored apart from input, checked on the way in, added up by an
import's totals, brought up to date by a foreign store's later read, and counted by the
insight rows (every token for activity and the largest sessions)."""

from __future__ import annotations

import pytest

from hermes_core.store.imports import ImportedTotals
from hermes_core.store.protocol import Store

T0 = 1_783_000_000.0


def test_a_session_keeps_its_cache_tokens(store: Store) -> None:
    made = store.create_session(
        "claude-code", input_tokens=242, cache_read_tokens=16_553_628, cache_write_tokens=237_121
    )
    for found in (store.get_session(made.id), *store.list_sessions(limit=5)):
        assert (found.input_tokens, found.cache_read_tokens, found.cache_write_tokens) == (
            242,
            16_553_628,
            237_121,
        )
    assert store.create_session("cli").cache_read_tokens == 0


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"cache_read_tokens": -1}, "cache_read_tokens -1"),
        ({"cache_write_tokens": 2.5}, "cache_write_tokens 2.5"),
        ({"cache_write_tokens": True}, "cache_write_tokens True"),
        ({"cache_read_tokens": None}, "cache_read_tokens None"),
    ],
)
def test_cache_tokens_must_be_non_negative_whole_numbers(
    store: Store, arguments: dict[str, object], named: str
) -> None:
    with pytest.raises(ValueError, match=named):
        store.create_session("cli", started_at=1.0, **arguments)
    assert store.list_sessions(limit=10) == []


def test_an_imports_totals_add_cache_tokens_and_a_refresh_replaces_them(store: Store) -> None:
    imports = store.imports
    session_id = imports.create_session(source="claude-code", started_at=50.0)
    for read, write in ((1_000, 200), (4_000, 0)):  # a first read, then an append
        imports.finish_session(
            session_id,
            ImportedTotals(
                title_proposal=None,
                ended_at=70.0,
                end_reason="imported",
                input_tokens=10,
                cache_read_tokens=read,
                cache_write_tokens=write,
            ),
        )
    found = store.get_session(session_id)
    assert (found.input_tokens, found.cache_read_tokens, found.cache_write_tokens) == (
        20,
        5_000,
        200,
    )
    imports.refresh_session(
        session_id, {"cache_read_tokens": 800, "cache_write_tokens": 9}, seen="[2]"
    )
    found = store.get_session(session_id)
    assert (found.cache_read_tokens, found.cache_write_tokens) == (800, 9)


def test_insight_rows_count_cache_tokens_apart_and_in_every_token(store: Store) -> None:
    cached = store.create_session(
        "claude-code",
        model="claude-opus-4-5",
        started_at=T0,
        input_tokens=2,
        cache_read_tokens=1_000,
        cache_write_tokens=100,
        output_tokens=3,
    )
    costed = store.create_session(
        "claude-code",
        model="claude-opus-4-5",
        started_at=T0 + 1,
        input_tokens=50,
        cache_read_tokens=7,
        cache_write_tokens=5,
        cost_actual_usd=1.0,
    )
    # Most input plus output, but fewer tokens in all than the cached one.
    plain = store.create_session("cli", started_at=T0 + 2, input_tokens=500, output_tokens=400)
    rows = store.insight_rows()
    [usage] = [row for row in rows.usage if row.source == "claude-code"]
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (1_007, 105)
    assert (usage.uncosted_cache_read_tokens, usage.uncosted_cache_write_tokens) == (1_000, 100)
    assert (usage.uncosted_input_tokens, usage.uncosted_output_tokens) == (2, 3)
    assert [row.id for row in rows.largest] == [cached.id, plain.id, costed.id]
    assert (rows.largest[0].cache_read_tokens, rows.largest[0].cache_write_tokens) == (1_000, 100)
    assert sum(row.tokens for row in rows.activity) == 1_105 + 62 + 900
