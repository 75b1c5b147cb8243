"""The accent fold is one rule written twice — ``hermes_fold_accents`` in the database (the
index) and :func:`hermes_store_postgres.fulltext.fold` in Python (queries, snippet marks) —
so both are asked the same texts and must answer alike."""

from __future__ import annotations

import unicodedata

import psycopg
from hermes_store_postgres.fulltext import fold

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url

EDGES = [
    "Résumé", "RÉSUMÉ", "Zürich", "naïve café", "Ångström", "\u212bngstr\u00f6m", "İstanbul",
    "ǘber ǚ", "smørrebrød straße", "re\u0301sume\u0301", "e\u0301\u0301", "Привет й ё",
    "ώρα", "한국어 中文 東京", "🚀 deploy", "plain ascii", "", "ﬁne ĳ",
]  # fmt: skip


def _latin_letters() -> list[str]:
    """Every character whose canonical decomposition starts with an ASCII letter."""
    found = []
    for code in range(0x80, 0x2200):
        decomposed = unicodedata.normalize("NFD", chr(code))
        if len(decomposed) > 1 and decomposed[0].isascii() and decomposed[0].isalpha():
            found.append(chr(code))
    return found


def test_the_database_and_python_fold_alike(postgres_url: str) -> None:
    open_url(postgres_url, host=PluginHost()).close()  # creates the store (schema, function)
    texts = [*EDGES, *_latin_letters(), "".join(_latin_letters())]
    with psycopg.connect(postgres_url) as db:
        folded = db.execute(
            "SELECT lower(hermes_fold_accents(t)) FROM unnest(%s::text[]) WITH ORDINALITY u(t, n) "
            "ORDER BY n",
            (texts,),
        ).fetchall()
    database = [row[0] for row in folded]
    python = [fold(text) for text in texts]
    assert [(t, d, p) for t, d, p in zip(texts, database, python, strict=True) if d != p] == []
    assert fold("Résumé Zürich ǘ ø") == "resume zurich ǘ ø"
