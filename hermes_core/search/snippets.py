"""Highlighted snippets: the matched words between :data:`MATCH_START` and :data:`MATCH_END`.

Word queries use FTS5's own ``snippet()``; CJK matches (substrings FTS5 cannot mark) and
title matches are cut and marked here the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .query import fold

if TYPE_CHECKING:
    from hermes_core.store.protocol import SearchIndex

MATCH_START = ">>>"
MATCH_END = "<<<"
ELLIPSIS = "…"
SNIPPET_TOKENS = 24
"""Words of context FTS5 puts in a snippet."""
SNIPPET_CHARS = 160
"""Characters of context for snippets cut here."""


def fts_snippet(index: SearchIndex, fts_query: str, message_id: int) -> str | None:
    """The full-text index's snippet of ``message_id`` for the query that found it."""
    snippet = index.fts_snippet(
        fts_query, message_id, MATCH_START, MATCH_END, ELLIPSIS, SNIPPET_TOKENS
    )
    return _one_line(snippet) if snippet else None


def marked_snippet(text: str, needles: Sequence[str], words: Sequence[str] = ()) -> str:
    """A snippet of ``text`` around the first occurrence of any needle (exact substrings, e.g.
    CJK) or word (folded, whole words), every occurrence marked."""
    spans = _spans(text, needles, words)
    if not spans:
        return _one_line(text[:SNIPPET_CHARS]) + (ELLIPSIS if len(text) > SNIPPET_CHARS else "")
    first = spans[0][0]
    start = max(0, first - SNIPPET_CHARS // 2)
    end = min(len(text), start + SNIPPET_CHARS)
    pieces = []
    cursor = start
    for span_start, span_end in spans:
        if span_start < start or span_end > end:
            continue
        pieces.append(text[cursor:span_start])
        pieces.append(MATCH_START + text[span_start:span_end] + MATCH_END)
        cursor = span_end
    pieces.append(text[cursor:end])
    prefix = ELLIPSIS if start > 0 else ""
    suffix = ELLIPSIS if end < len(text) else ""
    return _one_line(prefix + "".join(pieces) + suffix)


def _spans(text: str, needles: Sequence[str], words: Sequence[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for needle in needles:
        if needle:
            spans.extend((m.start(), m.end()) for m in re.finditer(re.escape(needle), text))
    if words:
        wanted = set(words)
        for match in re.finditer(r"[^\W_]+", text):
            if fold(match.group()) in wanted:
                spans.append((match.start(), match.end()))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for span in spans:
        if merged and span[0] < merged[-1][1]:
            continue
        merged.append(span)
    return merged


def _one_line(text: str) -> str:
    return " ".join(text.split())
