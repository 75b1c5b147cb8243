"""Sessions whose title *names* the query (SPEC: a query naming a title surfaces that session).

A title names the query when it holds every word (and CJK run) of the query and those make up
at least :data:`TITLE_COVERAGE` of the title (its lineage number ``#N`` left out): "auth
refactor" names "Auth refactor plan", but "the" does not name every title that has "the" in
it. Such sessions come first in discovery, an exact title first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_core.store.titles import MAX_TITLE_LENGTH, split_lineage_title

from .query import PreparedQuery, word_tokens

if TYPE_CHECKING:
    from hermes_core.selection.filters import SessionFilter
    from hermes_core.store.protocol import SearchIndex

TITLE_COVERAGE = 0.5
_PREFILTER_ROWS = 2000


@dataclass(frozen=True, slots=True)
class TitleMatch:
    session_id: str
    title: str
    coverage: float
    last_active_at: float


def sessions_named(
    index: SearchIndex, query: PreparedQuery, *, scope: SessionFilter | None = None
) -> list[TitleMatch]:
    """Sessions (of ``scope``) whose title names ``query``, best first."""
    if not query.words and not query.cjk_runs:
        return []
    if max(map(len, (*query.words, *query.cjk_runs))) > MAX_TITLE_LENGTH:
        return []  # no title holds a word that long
    ascii_words = [word for word in query.words if word.isascii()]
    # The title index holds every title: read it (not the wide session rows) with cheap
    # necessary conditions — each ASCII word as a substring (LIKE folds ASCII case) and a
    # length a named title cannot exceed — then check the coverage here.
    needed = sum(len(word) for word in query.words) + sum(len(run) for run in query.cjk_runs)
    rows = index.title_candidates(ascii_words, query.cjk_runs, 6 * needed + 12, _PREFILTER_ROWS)
    covered = {rowid: (title, title_coverage(title, query)) for rowid, title in rows}
    named = [rowid for rowid, (_title, coverage) in covered.items() if coverage >= TITLE_COVERAGE]
    if not named:
        return []
    found = [
        TitleMatch(session_id, covered[rowid][0], covered[rowid][1], last_active)
        for rowid, session_id, last_active in index.titled_sessions(named, scope)
    ]
    found.sort(key=lambda match: (-match.coverage, -match.last_active_at))
    return found


def title_coverage(title: str, query: PreparedQuery) -> float:
    """The share of the title's characters the query's words and CJK runs account for
    (0 when any of them is missing from the title)."""
    base, _number = split_lineage_title(title)
    tokens = word_tokens(base)
    if not tokens:
        return 0.0
    wanted = set(query.words)
    covered = 0
    for token in dict.fromkeys(tokens):
        if token in wanted:
            covered += len(token)
        for run in query.cjk_runs:
            if run in token:
                covered += len(run)
    if not wanted <= set(tokens):
        return 0.0
    if any(run not in base for run in query.cjk_runs):
        return 0.0
    total = sum(len(token) for token in tokens)
    return min(1.0, covered / total)
