"""The bench's planted corpus (bench/redaction) is what it claims: independent of the rules,
at least 200 secrets of every category, each secret really in its document."""

from __future__ import annotations

import ast
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "bench" / "redaction"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.redaction.planted import CATEGORIES, caught, planted_corpus  # noqa: E402
from hermes_core.redaction import Redactor  # noqa: E402


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(("." * node.level) + (node.module or ""))
    return names


def test_the_generator_never_imports_the_rules() -> None:
    for name in ("formats.py", "planted.py"):
        modules = imported_modules(GENERATOR / name)
        assert not any("redaction" in module or "hermes_core" in module for module in modules), (
            name,
            modules,
        )


def test_every_category_has_at_least_200_secrets_each_present_in_its_document() -> None:
    corpus = planted_corpus(seed=1)
    counts = Counter(planted.category for planted in corpus)
    assert set(counts) == {category.name for category in CATEGORIES}
    assert min(counts.values()) >= 200
    for planted in corpus:
        # Unredacted, no secret counts as caught: every part sits in the document.
        assert not caught(planted, planted.document), planted.context


def test_the_corpus_is_deterministic_and_mixes_escapings() -> None:
    first, second = planted_corpus(seed=3, per_category=20), planted_corpus(seed=3, per_category=20)
    assert [p.document for p in first] == [p.document for p in second]
    escapings = Counter(planted.context.split("/")[-1] for planted in first)
    assert set(escapings) == {"plain", "json", "json-twice"}


def test_redacting_a_json_line_keeps_it_valid_json() -> None:
    # Markers hold no quote or backslash and values stop at quotes and escapes, so a JSONL
    # line redacted as raw text still parses (and the secret is gone).
    redactor = Redactor()
    checked = 0
    for planted in planted_corpus(seed=5, per_category=30):
        if "/json" not in planted.context:
            continue
        out = redactor.redact_text(planted.document)
        json.loads(out)
        assert caught(planted, out), planted.context
        checked += 1
    assert checked > 100
