"""``session_search``: full-text search and reading over past sessions (SPEC Q1–Q3).

One concern per module: :mod:`.query` (FTS5 syntax, sanitising, CJK), :mod:`.ranking`
(bounded relevance), :mod:`.lineage`, :mod:`.titles`, :mod:`.snippets`, :mod:`.messages`
(message views), the four forms :mod:`.discovery`, :mod:`.scroll`, :mod:`.read`,
:mod:`.browse`, and :mod:`.tool` (the entry point and its JSON-schema definition).
"""

from __future__ import annotations

from .arguments import SearchArgumentError
from .snippets import MATCH_END, MATCH_START
from .tool import SESSION_SEARCH_TOOL, TOOL_NAME, run_search, session_search

__all__ = [
    "MATCH_END",
    "MATCH_START",
    "SESSION_SEARCH_TOOL",
    "TOOL_NAME",
    "SearchArgumentError",
    "run_search",
    "session_search",
]
