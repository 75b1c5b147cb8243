"""Turning what an agent or a person typed into something the indexes can answer.

A query is first tried as FTS5 syntax (keywords AND-ed by default, ``"exact phrase"``, ``OR``,
``NOT``, ``prefix*``). Anything FTS5 rejects — unbalanced quotes, lone operators, ``foo-bar``,
``c++``, ``a.b_c``, runs of punctuation — is searched again in a *sanitised* form: every
whitespace-separated chunk becomes a quoted phrase of its word tokens (``foo-bar`` →
``"foo bar"``, which is how the ``unicode61`` tokenizer indexed the text ``foo-bar``), AND-ed.
Chunks without any word characters (emoji, punctuation) are dropped; a query with nothing left
finds nothing.

Queries holding CJK text take another road: ``unicode61`` keeps a run of CJK characters as one
token, so ``量子纠缠`` inside a sentence is not a token of the word index. Their CJK runs are
looked up as substrings through the CJK index (:func:`hermes_core.store.fulltext.find_cjk`) and
their other words are checked against the message text; operators are not interpreted there
(every part must be present).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_CJK_RUN = re.compile(
    "["
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\U00020000-\U0002fa1f"  # CJK extensions
    "]+"
)
_WORD = re.compile(r"[^\W_]+")
"""A word token as ``unicode61`` sees it: letters and digits; everything else separates."""
_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
MAX_QUERY_TERMS = 64
"""Whitespace-separated parts of a query beyond this are ignored (each costs an index scan)."""
MAX_QUERY_CHARS = 4096
"""Characters of a query beyond this are ignored."""


_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def fold(text: str) -> str:
    """Case- and accent-insensitive form of text (``unicode61`` removes diacritics)."""
    if text.isascii():
        return text.lower()
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text)).casefold()


def word_tokens(text: str) -> list[str]:
    """The folded word tokens of ``text`` (CJK runs come out as single tokens)."""
    return [fold(token) for token in _WORD.findall(text)]


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


def sanitised_fts(text: str) -> str:
    """The quoted-phrase form of ``text`` that FTS5 always accepts ('' when nothing is left).

    Operator words (``AND``, ``OR``, ``NOT``, ``NEAR``) — and the word a ``NOT`` excludes — are
    dropped unless nothing else is left: the query was rejected, so they were stray. Repeated
    phrases are searched once."""
    chunks = text.split()
    words = []
    negated = False
    for chunk in chunks:
        if chunk in _OPERATORS:
            negated = chunk == "NOT"
        elif negated:  # what a stray NOT excluded is not searched for either
            negated = False
        else:
            words.append(chunk)
    if words:  # a stray operator ("OR kubernetes") was not meant as a word
        chunks = words
    phrases: list[str] = []
    for chunk in chunks:
        tokens = _WORD.findall(chunk)
        if not tokens:
            continue
        phrase = '"' + " ".join(tokens) + '"'
        if chunk.endswith("*"):
            phrase += " *"
        phrases.append(phrase)
    return " ".join(dict.fromkeys(phrases))


@dataclass(frozen=True, slots=True)
class PreparedQuery:
    """One query, ready for the indexes."""

    text: str
    """What was typed, whitespace-normalised."""
    fts: str
    """The FTS5 query tried first (the text as typed)."""
    fallback: str
    """The sanitised FTS5 query used when FTS5 rejects :attr:`fts` ('' = nothing to search)."""
    cjk_runs: tuple[str, ...]
    """CJK runs of the query; when any, the CJK road is taken (see the module docstring)."""
    words: tuple[str, ...]
    """Folded words the query asks for (operators and words after ``NOT`` left out): what a
    title must contain to match, and the non-CJK words of a CJK query."""

    @property
    def is_cjk(self) -> bool:
        return bool(self.cjk_runs)

    @property
    def is_empty(self) -> bool:
        return not self.cjk_runs and not self.fallback and not self.words


def prepare(text: str) -> PreparedQuery:
    """Prepare ``text`` (any string at all) for searching."""
    normalised = " ".join(text.split()[:MAX_QUERY_TERMS])[:MAX_QUERY_CHARS]
    cjk_runs = tuple(dict.fromkeys(_CJK_RUN.findall(normalised)))
    return PreparedQuery(
        text=normalised,
        fts=normalised,
        fallback=sanitised_fts(normalised),
        cjk_runs=cjk_runs,
        words=tuple(dict.fromkeys(_positive_words(normalised))),
    )


def _positive_words(text: str) -> list[str]:
    """Folded word tokens outside ``NOT`` clauses, without operators or CJK runs."""
    words: list[str] = []
    skip_next = False
    for chunk in text.split():
        bare = chunk.strip('"()*^+')
        if bare in _OPERATORS:
            skip_next = bare == "NOT"
            continue
        tokens = [t for t in _WORD.findall(chunk) if not _CJK_RUN.fullmatch(t)]
        if skip_next:
            skip_next = False
            continue
        words.extend(fold(t) for t in tokens if not _CJK_RUN.search(t))
    return words
