"""Which rule keywords a text holds, found in one pass instead of one scan per keyword.

With a few hundred rules, checking each keyword with ``keyword in text`` scans the text a few
hundred times, which costs more than running the regexes themselves, and Python's ``re`` has
no fast way to look for many literals at once. :class:`KeywordIndex` hands the keywords to an
Aho–Corasick automaton (the ``ahocorasick-rs`` package), which reports every occurrence of
every keyword — overlapping ones included — in one pass over the text. The answer is exactly
the set of keywords ``k`` for which ``k in text`` holds, so the engine's pre-filter keeps its
meaning (docs/redaction.md: keywords are part of a rule's meaning), only faster.
"""

from __future__ import annotations

from collections.abc import Iterable

from ahocorasick_rs import AhoCorasick


class KeywordIndex:
    """Finds which of a fixed set of lower-case keywords occur in a lower-cased text."""

    def __init__(self, keywords: Iterable[str]) -> None:
        self.keywords: tuple[str, ...] = tuple(sorted({k for k in keywords if k}))
        self._automaton = AhoCorasick(self.keywords) if self.keywords else None

    def present(self, lowered: str) -> set[str]:
        """Every keyword ``k`` with ``k in lowered``."""
        if self._automaton is None:
            return set()
        return set(self._automaton.find_matches_as_strings(lowered, overlapping=True))
