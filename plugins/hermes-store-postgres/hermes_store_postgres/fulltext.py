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
``unicode61``; accents are folded first, as ``unicode61`` folds them (:func:`fold`:
``café`` is ``cafe``, ``Über`` is ``uber``), in the index and in the query alike.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_core.store.errors import QueryRejected
from hermes_core.store.fulltext import INDEXED_CHARS, cjk_runs

__all__ = [
    "ACCENTED",
    "INDEXED_CHARS",
    "ONE_MARK_AFTER_LETTER",
    "PAIR_INDEX_SQL",
    "PAIR_KEYS_SQL",
    "PAIR_MAX_BYTES",
    "WORD_SEPARATORS",
    "QueryTerms",
    "cjk_runs",
    "fold",
    "fold_accents",
    "highlight",
    "snippet",
    "to_tsquery_text",
]

PAIR_MAX_BYTES = 1000
"""Word pairs longer than this are not looked up (schemas 2–8 did not index them)."""
PAIR_INDEX_SQL = "pair_keys"
"""The column the pair index is over (schema 11: the keys of :mod:`.pair_keys`, written by the
client with the message); a query names it as written here."""
PAIR_KEYS_SQL = "%s::int4[]"
"""The keys of a query's pairs (:func:`.pair_keys.query_pair_keys`), as a statement takes them."""
_PAIRABLE = re.compile(r"[a-z0-9]+")


ACCENTED = r"[\u00c0-\u024f\u1e00-\u1eff\u212b\u0300-\u036f]"
"""What a text holds when folding may change it: a precomposed Latin letter with a mark (every
letter whose canonical decomposition is one ASCII letter and one combining mark lies in these
ranges) or a combining mark itself. A regular expression both Python and PostgreSQL read."""
ONE_MARK_AFTER_LETTER = r"([A-Za-z])[\u0300-\u036f](?![\u0300-\u036f])"
"""An ASCII letter followed by exactly one combining mark (in canonical decomposition): the
mark is what folding removes (both Python and PostgreSQL read it; ``\\1`` keeps the letter)."""
_ACCENTED = re.compile(ACCENTED)
_ONE_MARK_AFTER_LETTER = re.compile(ONE_MARK_AFTER_LETTER)


def fold(text: str) -> str:
    """``text`` lowercased with its accents folded as ``unicode61`` (``remove_diacritics 1``,
    SQLite's default) folds them and as the index folds them (``hermes_fold_accents`` in
    :mod:`.schema`, the same rule): a letter written as one ASCII letter and one combining mark
    becomes that letter (``É`` → ``e``, ``ü`` → ``u``); letters with two marks (``ǘ``) or none
    (``ø``, ``ß``) stay. Canonically decomposed, the single marks dropped, composed again."""
    return fold_accents(text).lower()


def fold_accents(text: str) -> str:
    """:func:`fold` without the lowercasing: what ``hermes_fold_accents`` makes of ``text``."""
    if _ACCENTED.search(text) is None:
        return text
    stripped = _ONE_MARK_AFTER_LETTER.sub(r"\1", unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFC", stripped)


WORD_SEPARATORS = "[^[:alnum:]]+"
"""The PostgreSQL regular expression of what separates words in the index."""
_WORD = re.compile(r"[^\W_]+")
_OPERATORS = frozenset({"AND", "OR", "NOT"})
_SINGLE_TERM = re.compile(r"'[^']+'(:\*)?")
_BAREWORD = re.compile(r"[\w\u0080-\U0010ffff]+\*?")


Phrase = tuple[tuple[str, bool], ...]
"""The (lowercased word, is a prefix) terms of one phrase, in order."""


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """A translated query: the ``tsquery`` text and the words it looks for (for marking)."""

    tsquery: str
    positive: tuple[tuple[str, bool], ...]
    """(lowercased word, is a prefix) of every term outside a ``NOT``."""
    phrases: tuple[Phrase, ...] = ()
    """Every phrase outside a ``NOT`` (a bare word is a phrase of one), as the highlighter
    marks them: one span per run of matching words, as FTS5 marks a phrase instance."""
    pairs: tuple[str, ...] = ()
    """Adjacent word pairs (``"that will"``) every match must hold: those of the phrases the
    query requires (not under ``OR`` or ``NOT``), whole ASCII words only. The pair index
    (:data:`PAIR_INDEX_SQL`) narrows a phrase's candidates to the messages holding them."""
    tree: QueryNode | None = None
    """The parsed query (what :meth:`phrases_in` evaluates)."""

    def phrases_in(self, text: str) -> tuple[Phrase, ...]:
        """The phrases to mark in ``text``, as FTS5 marks them: only those of the parts of
        the query the text matches (``a b OR c`` marks only ``c`` in a text without ``a``);
        every phrase outside a ``NOT`` when the text does not match at all."""
        words = [match.group().lower() for match in _WORD.finditer(text)]
        marked = None if self.tree is None else self.tree.marked(words)
        return self.phrases if marked is None else tuple(dict.fromkeys(marked))

    @property
    def single_term(self) -> bool:
        """Whether the query is one word or one prefix (no phrase, operator or group)."""
        return _SINGLE_TERM.fullmatch(self.tsquery) is not None


def _lexemes(text: str, prefix: bool) -> tuple[str, list[tuple[str, bool]]]:
    words = [fold(word) for word in _WORD.findall(text)]
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


@dataclass(frozen=True, slots=True)
class QueryNode:
    """One node of a parsed query: its ``tsquery`` text, and what it is (a phrase, or the
    ``and``/``or``/``not`` of its children) for :meth:`QueryTerms.phrases_in`."""

    tsquery: str
    kind: str
    children: tuple[QueryNode, ...] = ()
    phrase: Phrase = ()

    def marked(self, words: Sequence[str]) -> list[Phrase] | None:
        """The phrases FTS5 would mark in a text of ``words`` (lowercased): those of the parts
        of the query the text matches; None when the text does not match this node."""
        if self.kind == "nothing":
            return None
        if self.kind == "phrase":
            width = len(self.phrase)
            present = any(
                all(_matches(words[first + i], term) for i, term in enumerate(self.phrase))
                for first in range(len(words) - width + 1)
            )
            return [self.phrase] if present else None
        if self.kind == "not":
            kept, excluded = (child.marked(words) for child in self.children)
            return kept if kept is not None and excluded is None else None
        found = [child.marked(words) for child in self.children]
        if self.kind == "and":
            return None if any(f is None for f in found) else [p for f in found for p in f or ()]
        matched = [p for f in found if f is not None for p in f]
        return matched if any(f is not None for f in found) else None


NOTHING = QueryNode("", "nothing")
"""A phrase of no words (``" "``, an emoji alone): FTS5 drops it from words side by side and
from an ``OR``, and it matches nothing on its own (its ``tsquery`` is empty)."""


class _Parser:
    """Recursive descent over :func:`_tokens` (OR < AND < NOT < words side by side, as
    FTS5)."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self._tokens = tokens
        self._at = 0
        self.positive: list[tuple[str, bool]] = []
        self.phrases: list[Phrase] = []
        self.pairs: list[str] = []
        self._negated = 0

    def _peek(self) -> tuple[str, str] | None:
        return self._tokens[self._at] if self._at < len(self._tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self._tokens[self._at]
        self._at += 1
        return token

    def parse(self) -> QueryNode:
        if not self._tokens:
            raise QueryRejected("empty query")
        result = self._or()
        if self._peek() is not None:
            raise QueryRejected(f"syntax error near {self._peek()[1]!r}")  # type: ignore[index]
        return result

    def _or(self) -> QueryNode:
        pairs_before = len(self.pairs)
        parts = [self._and()]
        while self._peek() == ("op", "OR"):
            self._take()
            parts.append(self._and())
        if len(parts) == 1:
            return parts[0]
        del self.pairs[pairs_before:]  # a phrase in one branch of an OR is not required
        kept = [part for part in parts if part.kind != "nothing"]  # FTS5 drops them
        if len(kept) <= 1:
            return kept[0] if kept else NOTHING
        return QueryNode("(" + " | ".join(p.tsquery for p in kept) + ")", "or", tuple(kept))

    def _and(self) -> QueryNode:
        parts = [self._not()]
        while self._peek() == ("op", "AND"):
            self._take()
            parts.append(self._not())
        if len(parts) > 1 and any(part.kind == "nothing" for part in parts):
            return NOTHING  # FTS5: an explicit AND with a phrase of no words matches nothing
        return _all_of(parts)

    def _not(self) -> QueryNode:
        result = self._operand()
        while self._peek() == ("op", "NOT"):
            self._take()
            self._negated += 1
            excluded = self._operand()
            self._negated -= 1
            if result.kind == "nothing" or excluded.kind == "nothing":
                continue  # nothing NOT x is nothing; x NOT nothing is x (as FTS5)
            result = QueryNode(
                f"({result.tsquery} & !{excluded.tsquery})", "not", (result, excluded)
            )
        return result

    def _operand(self) -> QueryNode:
        """Words, phrases and groups side by side: FTS5's implicit AND, which binds tighter
        than ``NOT`` (``a NOT b c`` is ``a NOT (b c)``). (SQLite 3.40's FTS5 refuses a group
        beside anything, ``(a OR b) c``; here that is accepted, as the AND it reads as.)"""
        parts = [self._unit()]
        while (token := self._peek()) is not None and token[0] in ("(", "word", "phrase"):
            parts.append(self._unit())
        return _all_of(parts)

    def _unit(self) -> QueryNode:
        if self._peek() != ("(", "("):
            return self._primary()
        self._take()
        inner = self._or()
        if self._peek() != (")", ")"):
            raise QueryRejected("unbalanced parentheses")
        self._take()
        return inner

    def _primary(self) -> QueryNode:
        if self._peek() is None:
            raise QueryRejected("the query ends with an operator")
        kind, text = self._take()
        if kind == "phrase":
            prefix = self._peek() == ("*", "*")
            if prefix:
                self._take()
            return self._term(text, prefix)
        if kind == "word":
            prefix = text.endswith("*")
            if not prefix and self._peek() == ("*", "*"):  # FTS5 reads ``pre *`` as ``pre*``
                self._take()
                prefix = True
            return self._term(text.rstrip("*"), prefix)
        raise QueryRejected(f"syntax error near {text!r}")

    def _term(self, text: str, prefix: bool) -> QueryNode:
        if not _WORD.search(text):  # ``" "``, ``"-"``, an emoji: a phrase of no words
            return NOTHING
        query, terms = _lexemes(text, prefix)
        pairs = _required_pairs(terms)
        if not self._negated:
            self.positive.extend(terms)
            self.phrases.append(tuple(terms))
            self.pairs.extend(pairs)
        return QueryNode(query, "phrase", phrase=tuple(terms))


def _all_of(parts: Sequence[QueryNode]) -> QueryNode:
    """Words and phrases side by side; those of no words drop out, as in FTS5."""
    parts = [part for part in parts if part.kind != "nothing"] or [NOTHING]
    if len(parts) == 1:
        return parts[0]
    return QueryNode("(" + " & ".join(p.tsquery for p in parts) + ")", "and", tuple(parts))


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
    tree = parser.parse()
    return QueryTerms(
        tree.tsquery,
        tuple(dict.fromkeys(parser.positive)),
        tuple(dict.fromkeys(parser.phrases)),
        tuple(dict.fromkeys(parser.pairs)),
        tree=tree,
    )


def _matches(word: str, term: tuple[str, bool]) -> bool:
    lowered, (wanted, prefix) = fold(word), term
    return lowered.startswith(wanted) if prefix else lowered == wanted


def _instances(words: Sequence[re.Match[str]], phrases: Sequence[Phrase]) -> list[tuple[int, int]]:
    """(first, last) word index of every marked span, in order: each place a phrase's words
    stand one after the other, overlapping places merged into one (as FTS5's highlighter)."""
    found: list[tuple[int, int]] = []
    for first in range(len(words)):
        ends = [
            first + len(phrase) - 1
            for phrase in phrases
            if phrase
            and first + len(phrase) <= len(words)
            and all(_matches(words[first + i].group(), term) for i, term in enumerate(phrase))
        ]
        if ends:
            found.append((first, max(ends)))
    merged: list[tuple[int, int]] = []
    for first, last in found:
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def _marked(
    text: str,
    words: Sequence[re.Match[str]],
    spans: Sequence[tuple[int, int]],
    start: str,
    end: str,
    window: tuple[int, int],
) -> str:
    """``text[window]`` (character offsets) with the parts of ``spans`` inside it marked."""
    begin, finish = window
    pieces: list[str] = []
    cursor = begin
    for first, last in spans:
        left, right = max(words[first].start(), begin), min(words[last].end(), finish)
        if left >= right:
            continue
        pieces.extend((text[cursor:left], start, text[left:right], end))
        cursor = right
    pieces.append(text[cursor:finish])
    return "".join(pieces)


def highlight(text: str, phrases: Sequence[Phrase], start: str, end: str) -> str:
    """``text`` with every place a phrase matches between ``start`` and ``end`` (the words of
    one phrase, and overlapping places, in one span)."""
    words = list(_WORD.finditer(text))
    return _marked(text, words, _instances(words, phrases), start, end, (0, len(text)))


def snippet(
    text: str, phrases: Sequence[Phrase], start: str, end: str, ellipsis: str, tokens: int
) -> str | None:
    """Up to ``tokens`` words of ``text`` around the most matches, matches marked as
    :func:`highlight` marks them, an ``ellipsis`` where text was cut (as FTS5's
    ``snippet()``); None when nothing matches."""
    words = list(_WORD.finditer(text))
    spans = _instances(words, phrases)
    hits = [first for first, _last in spans]
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
    body = _marked(text, words, spans, start, end, (begin, finish))
    return (ellipsis if begin > 0 else "") + body + (ellipsis if finish < len(text) else "")
