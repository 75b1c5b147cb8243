"""The summary's ``Skipped input:`` line reads as English whatever the counts: a reason is a
singular phrase, and its head noun takes the plural after any count but one."""

from __future__ import annotations

from collections import Counter

import pytest

from hermes_core.importing.outcomes import ImportSummary, counted


@pytest.mark.parametrize(
    ("reason", "plural"),
    [
        ("unknown record type", "unknown record types"),
        ("message undone by a rewind in Hermes Agent", "messages undone by a rewind in Hermes Agent"),
        ("hidden message", "hidden messages"),
        ("session_meta row", "session_meta rows"),
        ("message with an unknown role", "messages with an unknown role"),
        ("session without messages (not imported)", "sessions without messages (not imported)"),
        ("gateway_routing table of an unknown shape (not imported)",
         "gateway_routing tables of an unknown shape (not imported)"),
        ("unreadable gateway routing row", "unreadable gateway routing rows"),
        ("unreadable tool_calls (kept as text)", "unreadable tool_calls (kept as text)"),
        ("empty entry", "empty entries"),
        ("duplicate batch", "duplicate batches"),
        ("repeated key", "repeated keys"),
    ],
)  # fmt: skip
def test_a_reason_takes_the_plural_after_any_count_but_one(reason: str, plural: str) -> None:
    assert counted(reason, 1) == reason
    assert counted(reason, 2) == plural
    assert counted(reason, 0) == plural


def test_the_skipped_line_counts_each_reason_in_its_own_number() -> None:
    summary = ImportSummary(
        warnings=Counter(
            {"message undone by a rewind in Hermes Agent": 2, "unknown record type": 1}
        )
    )
    assert summary.skipped_line() == (
        "Skipped input: 2 messages undone by a rewind in Hermes Agent, 1 unknown record type."
    )
