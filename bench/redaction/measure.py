"""Figure (r): recall on the planted corpus, false positives on the real logs of
``../shared/fixtures``, and throughput on both and on hostile input."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hermes_core.redaction import Redactor

from .planted import Planted, caught, planted_corpus

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
CONTEXT = 40


@dataclass
class Finding:
    """One redaction made on the real logs, for the ``--verbose`` review."""

    rule: str
    where: str
    before: str
    secret_shape: str
    after: str


@dataclass
class RedactionFigures:
    recall: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Category → (caught, planted)."""
    misses: list[tuple[str, str, str]] = field(default_factory=list)
    """(category, context, 80 characters around the surviving secret)."""
    corpus_bytes: int = 0
    corpus_mb_s: float = 0.0
    fixture_files: int = 0
    fixture_bytes: int = 0
    fixture_mb_s: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    hostile_mb_s: dict[str, float] = field(default_factory=dict)

    @property
    def overall(self) -> tuple[int, int]:
        return (
            sum(hit for hit, _ in self.recall.values()),
            sum(total for _, total in self.recall.values()),
        )


def hostile_texts() -> dict[str, str]:
    """About 100 kB each of the inputs that make backtracking regexes crawl."""
    return {
        "a*100k": "a" * 100_000,
        "key=*": "key=" * 25_000,
        "api_key=*": "api_key=" * 12_500,
        'escaped "password": *': '\\"password\\": \\"' * 6_000,
        "BEGIN PRIVATE KEY, no END": "-----BEGIN PRIVATE KEY-----" * 3_700,
        "BEGIN + 100k base64": "-----BEGIN PRIVATE KEY-----\n" + "QUJD" * 25_000,
        "eyJ*": "eyJ" * 33_000,
        "eyJ_*": "eyJ_" * 25_000,
        "://-chains": "a://" * 25_000,
        "postgres://u:*": "postgres://u:" * 7_700,
        "sk-*": "sk-" * 33_000,
        "Authorization: *": "Authorization: " * 6_700,
        "Bearer *": "Bearer " * 14_300,
    }


def fixture_texts(root: Path = FIXTURES) -> list[tuple[str, str]]:
    """(file:line, text) for every line of every JSONL file and every JSON file under
    ``root`` — the raw lines, so message text is seen JSON-escaped, as logs hold it."""
    texts: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in {".jsonl", ".json"}:
            continue
        name = str(path.relative_to(root))
        content = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".json":
            texts.append((name, content))
            continue
        for number, line in enumerate(content.splitlines(), 1):
            if line.strip():
                texts.append((f"{name}:{number}", line))
    return texts


def _throughput(texts: Sequence[str], repeats: int) -> float:
    """MB/s of ``redact_text`` over ``texts``, best of ``repeats`` passes (a fresh
    Redactor per pass; building it is not timed)."""
    size = sum(len(text.encode("utf-8")) for text in texts)
    best = float("inf")
    for _ in range(repeats):
        redactor = Redactor()
        started = time.perf_counter()
        for text in texts:
            redactor.redact_text(text)
        best = min(best, time.perf_counter() - started)
    return size / best / 1e6


def _recall(corpus: Sequence[Planted], figures: RedactionFigures) -> None:
    counts: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    redactor = Redactor()
    for planted in corpus:
        counts[planted.category] += 1
        out = redactor.redact_text(planted.document)
        if caught(planted, out):
            hits[planted.category] += 1
            continue
        part = next(p for p in planted.parts if p[:12] in out)
        at = out.find(part[:12])
        figures.misses.append((planted.category, planted.context, out[max(0, at - 40) : at + 40]))
    figures.recall = {name: (hits[name], counts[name]) for name in counts}


def _false_positives(texts: Sequence[tuple[str, str]], figures: RedactionFigures) -> None:
    redactor = Redactor()
    for where, text in texts:

        def report(rule: str, match: object, _where: str = where) -> None:
            found = match  # re.Match[str]
            start, end = found.start(), found.end()  # type: ignore[attr-defined]
            source = found.string  # type: ignore[attr-defined]
            secret = source[start:end]
            figures.findings.append(
                Finding(
                    rule=rule,
                    where=_where,
                    before=source[max(0, start - CONTEXT) : start],
                    # The matched text is shown by its shape only, in case it is real.
                    secret_shape=f"{secret[:6]}…({len(secret)} chars)",
                    after=source[end : end + CONTEXT],
                )
            )

        redactor.redact_text(text, report)


def run_redaction_bench(
    seed: int = 1, repeats: int = 3, fixtures: Path = FIXTURES
) -> RedactionFigures:
    """Every number of figure (r)."""
    figures = RedactionFigures()
    corpus = planted_corpus(seed)
    _recall(corpus, figures)
    documents = [planted.document for planted in corpus]
    figures.corpus_bytes = sum(len(d.encode("utf-8")) for d in documents)
    figures.corpus_mb_s = _throughput(documents, repeats)
    if fixtures.is_dir():
        texts = fixture_texts(fixtures)
        figures.fixture_files = len({where.split(":")[0] for where, _ in texts})
        figures.fixture_bytes = sum(len(text.encode("utf-8")) for _, text in texts)
        _false_positives(texts, figures)
        figures.fixture_mb_s = _throughput([text for _, text in texts], repeats)
    for name, text in hostile_texts().items():
        figures.hostile_mb_s[name] = _throughput([text], repeats)
    return figures
