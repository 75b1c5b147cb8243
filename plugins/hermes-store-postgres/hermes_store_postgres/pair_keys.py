"""The keys of the phrase pair index (schema 11), computed by the client.

A phrase of common words would otherwise check the positions of every message holding all
its words (the word index holds no positions). So every message also stores, in
``messages.pair_keys``, a key for each two words that stand next to each other in it
(``"that will"``): ``crc32`` of the pair cut to :data:`PAIR_KEY_BITS` bits. A GIN index over
that column gives a phrase's candidates, the messages holding a key of each of its adjacent
pairs; a key is shared by several pairs, so PostgreSQL then checks each candidate's
positions (``ts_match_vq``), and that check decides.

Why the client: computed on the server (schemas 9–10, a SQL function over the ``tsvector``'s
positions) the keys cost ≈ 150 µs of server time for every statement that wrote a message,
however short (a third of a live append's), and more than half of building the index after a
bulk load (20k bench messages: 10.2 s against 3.8 s over the stored column).

The index may hold keys of pairs PostgreSQL does not see as adjacent (a message is only a
candidate more), but it must hold every pair it does see, or a phrase would miss that
message. Only pairs of plain ASCII letters and digits are ever looked up
(:func:`~.fulltext.to_tsquery_text`), so the keys are those of every reading PostgreSQL may
give a text: the words are the runs of letters and digits left after folding accents (the
index's own ``hermes_fold_accents`` rule), and

* under a locale that knows Unicode letters (``C.UTF-8``, ``en_US.UTF-8``) they are the runs of
  any letters and digits, lowercased letter by letter (``İ`` is ``i``, ``K`` the Kelvin sign
  ``k``), and a word that is not then ASCII still takes its place;
* under the ``C`` locale only ASCII letters and digits make words: everything else separates.

PostgreSQL's parser also cuts a run of letters and digits in two where it starts like a number
in scientific notation (``9e0i1`` is ``9e0`` then ``i1``), and drops a word of 2,047 bytes or more
without giving it a place (its two neighbours are then next to each other): when a text holds
either, those readings are added too. The text is read up to ``INDEXED_CHARS`` characters, as
the word index reads it. ``tests/plugins/store_postgres/test_pair_keys.py`` checks all this
against the server's own positions over hostile and random texts."""

from __future__ import annotations

import itertools
import re
import zlib
from collections.abc import Iterable, Sequence

from hermes_core.store.fulltext import INDEXED_CHARS

from .fulltext import fold_accents

PAIR_KEY_BITS = 20
"""A pair's key is ``crc32`` of the pair (``"that will"``, UTF-8) cut to this many bits: 2**20
keys shared by many pairs. More bits mean fewer false candidates and a larger, slower-to-build
index (20k bench messages: 18 bits 3.8 s and 35 MB, 24 bits 7.0 s and 87 MB); at 1M bench
messages a pair no message holds has a few hundred candidates with 20 bits, about 1,500 with
18."""
_KEY_MASK = (1 << PAIR_KEY_BITS) - 1
LONGEST_WORD_BYTES = 2046
"""``to_tsvector`` drops longer words (of ``MAXSTRLEN``, 2,047 bytes, or more), and their place
with them."""

_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")
_LOWER_ASCII_WORD = re.compile(rb"[a-z0-9]+")
_ANY_WORD = re.compile(r"[^\W_]+")
_SCIENTIFIC_HEAD = re.compile(r"[0-9][eE][0-9]+[^\W_]")
"""A word that begins like ``1e5`` and goes on (cheap test before cutting every word)."""
_SCIENTIFIC_WORD = re.compile(rb"([0-9]+[eE][0-9]+)(.+)")
_MAY_BE_LONG = 512
"""Words at least this many characters long may be 2,047 bytes (4 bytes a character at most)."""

Words = list[bytes]
"""One reading of a text: its words in order, UTF-8."""


def pair_key(pair: str) -> int:
    """The key of one pair of words (``"that will"``, lowercased)."""
    first, _, second = pair.encode().partition(b" ")
    return _key(first, second)


def _key(first: bytes, second: bytes) -> int:
    return zlib.crc32(first + b" " + second) & _KEY_MASK


def message_pair_keys(content: str) -> list[int]:
    """The sorted keys of every pair of adjacent words in a message's text under any reading
    PostgreSQL may give it (see the module doc): what a write stores in ``pair_keys``."""
    folded = fold_accents(content[:INDEXED_CHARS])
    readings: list[Words]
    if folded.isascii():
        readings = [_LOWER_ASCII_WORD.findall(folded.lower().encode())]
    else:
        readings = [_ascii_words(folded), _unicode_words(folded)]
    if _SCIENTIFIC_HEAD.search(folded) is not None:
        readings += [_scientific_cut(words) for words in readings]
    if any(len(word) >= _MAY_BE_LONG for words in readings for word in words):
        readings += [_without_long(words) for words in readings]
    keys: set[int] = set()
    for words in readings:
        keys.update(_keys_of(words))
    return sorted(keys)


def query_pair_keys(pairs: Sequence[str]) -> list[int]:
    """The keys of a query's required pairs (``"that will"``, lowercased ASCII)."""
    return sorted({pair_key(pair) for pair in pairs})


def _ascii_words(folded: str) -> Words:
    """The ``C`` locale's reading: ASCII runs, lowercased."""
    return [word.lower().encode() for word in _ASCII_WORD.findall(folded)]


def _unicode_words(folded: str) -> Words:
    """A Unicode locale's reading: runs of any letters and digits, each letter lowercased on
    its own (the simple case mapping, as ``towlower``: ``İ`` is ``i``)."""
    return [
        (word.lower() if word.isascii() else "".join(char.lower()[0] for char in word)).encode(
            "utf-8", "surrogatepass"
        )
        for word in _ANY_WORD.findall(folded)
    ]


def _scientific_cut(words: Words) -> Words:
    """The words as the parser cuts them: ``12e3e4`` is the number ``12e3``, then ``e4``."""
    cut: Words = []
    for word in words:
        head = _SCIENTIFIC_WORD.fullmatch(word)
        cut.extend(head.groups() if head else (word,))
    return cut


def _without_long(words: Words) -> Words:
    return [word for word in words if len(word) <= LONGEST_WORD_BYTES]


def _keys_of(words: Words) -> Iterable[int]:
    return (
        _key(first, second)
        for first, second in itertools.pairwise(words)
        if first.isascii() and second.isascii()
    )
