"""The generated corpus, cached on disk so that generation never counts in a timing.

Sessions are generated once (in parallel, one process per core) into
``<workdir>/corpus-<generator hash>-seed<seed>-<sessions>.pkl``: a stream of pickled chunks,
each a list of session tuples. A sidecar ``.json`` holds per-session facts (message count,
UTF-8 text bytes, how many messages hold the planted CJK term) so that the truth for any
prefix of the corpus is known without reading it. Session ``i`` depends only on the seed and
``i``, so a larger cached corpus serves a smaller request through its prefix.

The cache key includes a hash of ``corpus.py``'s syntax tree: changing the generator's code
invalidates old files, reformatting it does not.
"""

from __future__ import annotations

import ast
import hashlib
import json
import multiprocessing
import os
import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.corpus import (
    CJK_SHORT_TERM,
    CJK_TERM,
    MESSAGES_PER_SESSION,
    CorpusGenerator,
    CorpusMessage,
    CorpusSession,
)
from hermes_core.store.fulltext import INDEXED_CHARS, indexed_text

CHUNK_SESSIONS = 50

MessageTuple = tuple[str, str, float, "str | None"]
SessionTuple = tuple[int, str, float, "str | None", str, str, list[MessageTuple]]


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What the figures need to know about one generated session."""

    messages: int
    text_bytes: int
    cjk_term: int  # messages whose content holds CJK_TERM
    cjk_term_indexed: int  # … within the part of the message the indexes cover
    cjk_short: int  # messages whose content holds CJK_SHORT_TERM
    cjk_short_indexed: int


@dataclass(frozen=True, slots=True)
class CorpusTruth:
    """Totals over a prefix of the corpus."""

    sessions: int
    messages: int
    text_bytes: int
    cjk_term: int
    cjk_term_indexed: int
    cjk_short: int
    cjk_short_indexed: int


def generator_hash() -> str:
    """A hash of ``corpus.py``'s syntax tree and of how much of a message the index covers
    (the facts count what lies within it): reformatting it keeps the cache, changing the code
    or the cap invalidates it."""
    tree = ast.parse(Path(__file__).with_name("corpus.py").read_text(encoding="utf-8"))
    key = ast.dump(tree) + f"|indexed {INDEXED_CHARS}"
    return hashlib.sha256(key.encode()).hexdigest()[:10]


class CorpusFile:
    """A cached corpus of at least ``sessions`` sessions for ``seed``."""

    def __init__(self, path: Path, facts: Sequence[SessionFacts]) -> None:
        self.path = path
        self.facts = list(facts)

    @classmethod
    def ensure(cls, workdir: Path, seed: int, sessions: int) -> CorpusFile:
        """Reuse a cached corpus holding at least ``sessions`` sessions, or generate one."""
        workdir.mkdir(parents=True, exist_ok=True)
        prefix = f"corpus-{generator_hash()}-seed{seed}-"
        best: tuple[int, Path] | None = None
        for candidate in workdir.glob(prefix + "*.pkl"):
            try:
                size = int(candidate.stem.rsplit("-", 1)[1])
            except ValueError:
                continue
            usable = size >= sessions and candidate.with_suffix(".json").exists()
            if usable and (best is None or size < best[0]):
                best = (size, candidate)
        if best is None:
            path = workdir / f"{prefix}{sessions}.pkl"
            _generate(path, seed, sessions)
        else:
            path = best[1]
        raw = json.loads(path.with_suffix(".json").read_text())
        return cls(path, [SessionFacts(*row) for row in raw["facts"]])

    def truth(self, sessions: int) -> CorpusTruth:
        chosen = self.facts[:sessions]
        return CorpusTruth(
            sessions=len(chosen),
            messages=sum(f.messages for f in chosen),
            text_bytes=sum(f.text_bytes for f in chosen),
            cjk_term=sum(f.cjk_term for f in chosen),
            cjk_term_indexed=sum(f.cjk_term_indexed for f in chosen),
            cjk_short=sum(f.cjk_short for f in chosen),
            cjk_short_indexed=sum(f.cjk_short_indexed for f in chosen),
        )

    def chunks(self, sessions: int, chunk_sessions: int) -> Iterator[list[CorpusSession]]:
        """The first ``sessions`` sessions, ``chunk_sessions`` at a time."""
        batch: list[CorpusSession] = []
        remaining = sessions
        with self.path.open("rb") as stream:
            while remaining > 0:
                try:
                    stored: list[SessionTuple] = pickle.load(stream)
                except EOFError:
                    break
                for row in stored[:remaining]:
                    batch.append(_session_from_tuple(row))
                    if len(batch) == chunk_sessions:
                        yield batch
                        batch = []
                remaining -= len(stored)
        if batch:
            yield batch


def _session_from_tuple(row: SessionTuple) -> CorpusSession:
    index, source, started_at, title, cwd, model, messages = row
    session = CorpusSession(index, source, started_at, title, cwd, model)
    session.messages = [CorpusMessage(*m) for m in messages]
    return session


def _session_to_tuple(session: CorpusSession) -> SessionTuple:
    return (
        session.index,
        session.source,
        session.started_at,
        session.title,
        session.cwd,
        session.model,
        [(m.role, m.content, m.timestamp, m.tool_name) for m in session.messages],
    )


def session_facts(session: CorpusSession) -> SessionFacts:
    term = term_indexed = short = short_indexed = 0
    for message in session.messages:
        covered = indexed_text(message.content)
        term += CJK_TERM in message.content
        term_indexed += CJK_TERM in covered
        short += CJK_SHORT_TERM in message.content
        short_indexed += CJK_SHORT_TERM in covered
    return SessionFacts(
        len(session.messages), session.text_bytes, term, term_indexed, short, short_indexed
    )


_worker_generator: CorpusGenerator | None = None


def _init_worker(seed: int) -> None:
    global _worker_generator
    _worker_generator = CorpusGenerator(seed)


def _generate_chunk(bounds: tuple[int, int]) -> tuple[bytes, list[SessionFacts]]:
    assert _worker_generator is not None
    start, count = bounds
    sessions = list(_worker_generator.sessions(count, start=start))
    payload = pickle.dumps([_session_to_tuple(s) for s in sessions], pickle.HIGHEST_PROTOCOL)
    return payload, [session_facts(s) for s in sessions]


def _generate(path: Path, seed: int, sessions: int) -> None:
    bounds = [
        (start, min(CHUNK_SESSIONS, sessions - start))
        for start in range(0, sessions, CHUNK_SESSIONS)
    ]
    facts: list[SessionFacts] = []
    partial = path.with_suffix(".pkl.partial")
    workers = max(1, min(os.cpu_count() or 1, len(bounds)))
    context = multiprocessing.get_context("fork")
    with (
        context.Pool(workers, initializer=_init_worker, initargs=(seed,)) as pool,
        partial.open("wb") as stream,
    ):
        for payload, chunk_facts in pool.imap(_generate_chunk, bounds):
            stream.write(payload)
            facts.extend(chunk_facts)
    meta = {
        "seed": seed,
        "sessions": sessions,
        "messages_per_session": MESSAGES_PER_SESSION,
        "fields": list(SessionFacts.__dataclass_fields__),
        "facts": [
            [
                f.messages,
                f.text_bytes,
                f.cjk_term,
                f.cjk_term_indexed,
                f.cjk_short,
                f.cjk_short_indexed,
            ]
            for f in facts
        ],
    }
    path.with_suffix(".json").write_text(json.dumps(meta))
    os.replace(partial, path)
