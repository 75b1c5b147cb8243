"""Fixtures of the search tests: the corpus of ``search_corpus`` (module-scoped) and its store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from search_corpus import Corpus, build_corpus

from hermes_core.store import SessionStore


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("search") / "home")


@pytest.fixture
def store(corpus: Corpus) -> Iterator[SessionStore]:
    with SessionStore.open(corpus.home) as opened:
        yield opened
