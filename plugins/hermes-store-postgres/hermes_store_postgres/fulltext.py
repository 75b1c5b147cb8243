"""Full-text search in PostgreSQL: the FTS5 query forms translated to ``tsquery``, and
highlighting done the way FTS5 does it.

The engine (:mod:`hermes_core.search`) hands every backend the FTS5 query text of SPEC Q2:
words (AND-ed), ``"exact phrase"``, ``OR``, ``NOT``, ``prefix*`` and parentheses.
:func:`to_tsquery_text` parses exactly that and writes the equivalent ``tsquery`` (operators
keep FTS5's precedence: ``NOT`` binds tightest, then ``AND``, then ``OR``; ``a NOT b`` is
``a & !b``; a phrase is ``<->``-chained; ``pre*`` is ``pre:*``). What FTS5 itself would
refuse — unbalanced quotes or parentheses, a lone or leading operator, ``foo-bar``, ``c++``,
column filters, ``NEAR`` — is refused with :class:`~hermes_core.store.errors.QueryRejected`,
so the engine retries with its sanitised form (always accepted here), exactly as on SQLite.

Words are runs of letters and digits, on both sides: the index folds every other character
to a space before PostgreSQL's parser sees the text (:data:`WORD_SEPARATORS`), and queries
are split the same way. The ``simple`` configuration lowercases and does not stem, like
``unicode61``; unlike it, it keeps accents (``café`` does not match ``cafe``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_core.store.errors import QueryRejected
from hermes_core.store.fulltext import TOOL_OUTPUT_INDEXED_CHARS, cjk_runs

__all__ = [
    "PAIR_INDEX_SQL",
    "PAIR_MAX_BYTES",
    "TOOL_OUTPUT_INDEXED_CHARS",
    "WORD_SEPARATORS",
    "QueryTerms",
    "cjk_runs",
    "highlight",
    "snippet",
    "to_tsquery_text",
]

PAIR_MAX_BYTES = 1000
"""Word pairs longer than this are not indexed (a GIN key has to fit a third of a page)."""
PAIR_INDEX_SQL = "hermes_word_pairs(search_words)"
"""The expression of the pair index (see :mod:`.schema`); a query names it as written here."""
_PAIRABLE = re.compile(r"[a-z0-9]+")

WORD_SEPARATORS = "[^[:alnum:]]+"
"""The PostgreSQL regular expression of what separates words in the index."""
_WORD = re.compile(r"[^\W_]+")
_OPERATORS = frozenset({"AND", "OR", "NOT"})
_SINGLE_TERM = re.compile(r"'[^']+'(:\*)?")
_BAREWORD = re.compile(r"[\w\u0080-\U0010ffff]+\*?")


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """A translated query: the ``tsquery`` text and the words it looks for (for marking)."""

    tsquery: str
    positive: tuple[tuple[str, bool], ...]
    """(lowercased word, is a prefix) of every term outside a ``NOT``."""
    pairs: tuple[str, ...] = ()
    """Adjacent word pairs (``"that will"``) every match must hold: those of the phrases the
    query requires (not under ``OR`` or ``NOT``), whole ASCII words only. The pair index
    (:data:`PAIR_INDEX_SQL`) narrows a phrase's candidates to the messages holding them."""
    pairs_decide: bool = False
    """Whether holding :attr:`pairs` is the whole match: the query is only two-word phrases
    (AND-ed), each of them a pair. A message holds the pair ``"that will"`` exactly when
    ``that`` stands at some position and ``will`` at the next (the pairs are read off the
    positions ``<->`` checks), so such a query needs no second look at the positions. (Past
    the 16,383rd word PostgreSQL stops counting positions; there neither is exact.)"""

    @property
    def single_term(self) -> bool:
        """Whether the query is one word or one prefix (no phrase, operator or group)."""
        return _SINGLE_TERM.fullmatch(self.tsquery) is not None


def _lexemes(text: str, prefix: bool) -> tuple[str, list[tuple[str, bool]]]:
    words = [word.lower() for word in _WORD.findall(text)]
    if not words:
        raise QueryRejected(f"no words in {text!r}")
    quoted = [f"'{word}'" for word in words]
    if prefix:
        quoted[-1] += ":*"
    terms = [(word, prefix and i == len(words) - 1) for i, word in enumerate(words)]
    chain = " <-> ".join(quoted)
    return (f"({chain})" if len(quoted) > 1 else chain), terms


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: ``phrase``, ``word``, ``op``, ``(``, ``)``, ``*``."""
    found: list[tuple[str, str]] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char.isspace():
            index += 1
        elif char == '"':
            end = index + 1
            chunk = []
            while True:
                close = text.find('"', end)
                if close < 0:
                    raise QueryRejected("unterminated string")
                chunk.append(text[end:close])
                if text.startswith('"', close + 1):  # "" is a quote inside a phrase
                    chunk.append('"')
                    end = close + 2
                    continue
                index = close + 1
                break
            found.append(("phrase", "".join(chunk)))
        elif char in "()*":
            found.append((char, char))
            index += 1
        else:
            match = _BAREWORD.match(text, index)
            if match is None or match.end() == index:
                raise QueryRejected(f"syntax error near {text[index:index + 10]!r}")
            end = match.end()
            if end < len(text) and not (text[end].isspace() or text[end] in '()"'):
                raise QueryRejected(f"syntax error near {text[index:end + 1]!r}")
            word = match.group()
            if word == "NEAR" and text.startswith("(", end):
                raise QueryRejected("NEAR queries are not supported")
            found.append(("op" if word in _OPERATORS else "word", word))
            index = end
    return found


class _Parser:
    """Recursive descent over :func:`_tokens` (OR < AND < NOT, as FTS5)."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self._tokens = tokens
        self._at = 0
        self.positive: list[tuple[str, bool]] = []
        self.pairs: list[str] = []
        self.pairs_decide = True
        """Still only two-word, pairable phrases, AND-ed (see :attr:`QueryTerms.pairs_decide`)."""
        self._negated = 0

    def _peek(self) -> tuple[str, str] | None:
        return self._tokens[self._at] if self._at < len(self._tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self._tokens[self._at]
        self._at += 1
        return token

    def parse(self) -> str:
        if not self._tokens:
            raise QueryRejected("empty query")
        result = self._or()
        if self._peek() is not None:
            raise QueryRejected(f"syntax error near {self._peek()[1]!r}")  # type: ignore[index]
        return result

    def _or(self) -> str:
        pairs_before = len(self.pairs)
        parts = [self._and()]
        while self._peek() == ("op", "OR"):
            self._take()
            parts.append(self._and())
        if len(parts) > 1:
            del self.pairs[pairs_before:]  # a phrase in one branch of an OR is not required
            self.pairs_decide = False
        return parts[0] if len(parts) == 1 else "(" + " | ".join(parts) + ")"

    def _and(self) -> str:
        parts = [self._not()]
        while True:
            token = self._peek()
            if token is None or token[0] == ")" or token == ("op", "OR"):
                break
            if token == ("op", "AND"):
                self._take()
            parts.append(self._not())
        return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"

    def _not(self) -> str:
        result = self._primary()
        while self._peek() == ("op", "NOT"):
            self._take()
            self.pairs_decide = False
            self._negated += 1
            excluded = self._primary()
            self._negated -= 1
            result = f"({result} & !{excluded})"
        return result

    def _primary(self) -> str:
        if self._peek() is None:
            raise QueryRejected("the query ends with an operator")
        kind, text = self._take()
        if kind == "(":
            self.pairs_decide = False
            inner = self._or()
            if self._peek() != (")", ")"):
                raise QueryRejected("unbalanced parentheses")
            self._take()
            return inner
        if kind == "phrase":
            prefix = self._peek() == ("*", "*")
            if prefix:
                self._take()
            return self._term(text, prefix, phrase=True)
        if kind == "word":
            return self._term(text.rstrip("*"), text.endswith("*"), phrase=False)
        raise QueryRejected(f"syntax error near {text!r}")

    def _term(self, text: str, prefix: bool, *, phrase: bool) -> str:
        query, terms = _lexemes(text, prefix)
        pairs = _required_pairs(terms)
        if not (phrase and len(terms) == 2 and len(pairs) == 1):
            self.pairs_decide = False
        if not self._negated:
            self.positive.extend(terms)
            self.pairs.extend(pairs)
        return query


def _required_pairs(terms: Sequence[tuple[str, bool]]) -> list[str]:
    """The adjacent pairs of one phrase's words the pair index can look up: both whole words
    (not a prefix), plain ASCII letters and digits (lowercased the same on both sides)."""
    return [
        f"{first} {second}"
        for (first, first_prefix), (second, second_prefix) in itertools.pairwise(terms)
        if not first_prefix
        and not second_prefix
        and _PAIRABLE.fullmatch(first)
        and _PAIRABLE.fullmatch(second)
        and len(first) + len(second) + 1 <= PAIR_MAX_BYTES
    ]


def to_tsquery_text(fts: str) -> QueryTerms:
    """The ``tsquery`` (for ``to_tsquery('simple', …)``) meaning the FTS5 query ``fts``;
    raises :class:`QueryRejected` where FTS5 would refuse it."""
    parser = _Parser(_tokens(fts))
    tsquery = parser.parse()
    return QueryTerms(
        tsquery,
        tuple(dict.fromkeys(parser.positive)),
        tuple(dict.fromkeys(parser.pairs)),
        pairs_decide=parser.pairs_decide,
    )


def _matches(word: str, terms: Sequence[tuple[str, bool]]) -> bool:
    lowered = word.lower()
    return any(lowered.startswith(t) if prefix else lowered == t for t, prefix in terms)


def highlight(text: str, terms: Sequence[tuple[str, bool]], start: str, end: str) -> str:
    """``text`` with every word a term matches between ``start`` and ``end``."""
    pieces: list[str] = []
    cursor = 0
    for match in _WORD.finditer(text):
        if _matches(match.group(), terms):
            pieces.extend((text[cursor : match.start()], start, match.group(), end))
            cursor = match.end()
    pieces.append(text[cursor:])
    return "".join(pieces)


def snippet(
    text: str, terms: Sequence[tuple[str, bool]], start: str, end: str, ellipsis: str, tokens: int
) -> str | None:
    """Up to ``tokens`` words of ``text`` around the most matches, matched words marked, an
    ``ellipsis`` where text was cut (as FTS5's ``snippet()``); None when nothing matches."""
    words = list(_WORD.finditer(text))
    hits = [i for i, match in enumerate(words) if _matches(match.group(), terms)]
    if not hits:
        return None
    size = max(1, tokens)
    best_first, best_count = 0, -1
    for first_hit in hits:
        first = max(0, min(first_hit - size // 4, len(words) - size))
        count = sum(1 for h in hits if first <= h < first + size)
        if count > best_count:
            best_first, best_count = first, count
    last = min(len(words), best_first + size) - 1
    begin = 0 if best_first == 0 else words[best_first].start()
    finish = len(text) if last == len(words) - 1 else words[last].end()
    body = highlight(text[begin:finish], terms, start, end)
    return (ellipsis if begin > 0 else "") + body + (ellipsis if finish < len(text) else "")
