"""Linear time on hostile input: a static check of every built-in pattern's parse tree, and
hostile texts that must come out right (speed itself is measured by bench (r), not here)."""

from __future__ import annotations

import pytest

from hermes_core.redaction import BUILTIN_RULES, Redactor, marker, nested_unbounded_repeats


@pytest.mark.parametrize(
    "pattern",
    [r"(a+)+", r"(?:x*y)*", r"(?:(?:ab|c)+d)*", r"(?:a|(?:b{2,})){1,}", r"(?=(a*)*)", r"(?>a+)+"],
)
def test_the_check_flags_nested_unbounded_repeats(pattern: str) -> None:
    assert nested_unbounded_repeats(pattern)


@pytest.mark.parametrize(
    "pattern", [r"a+b+", r"(?:a{1,50}b)*", r"(?:x+){1,10}", r"[a-z]{3,}", r"(?:(?:a|b){2,8})+"]
)
def test_the_check_accepts_bounded_nesting(pattern: str) -> None:
    assert nested_unbounded_repeats(pattern) == []


@pytest.mark.parametrize(
    "rule", BUILTIN_RULES, ids=[f"{i}-{r.name}" for i, r in enumerate(BUILTIN_RULES)]
)
def test_no_builtin_pattern_nests_unbounded_repeats(rule: object) -> None:
    assert nested_unbounded_repeats(rule.pattern) == []  # type: ignore[attr-defined]


HOSTILE_UNCHANGED = {
    "100 kB of a": "a" * 100_000,
    "key= repeated": "key=" * 25_000,
    "api_key= repeated": "api_key=" * 12_500,
    "password: repeated": "password: " * 10_000,
    "escaped JSON keys repeated": '\\"password\\": \\"' * 6_000,
    "eyJ repeated": "eyJ" * 33_000,
    "eyJ_ repeated": "eyJ_" * 25_000,
    "deep :// chains": "a://" * 25_000,
    "scheme://user: chains": "postgres://u:" * 8_000,
    "sk- repeated": "sk-" * 33_000,
    "Authorization: repeated": "Authorization: " * 7_000,
    "Bearer repeated": "Bearer " * 14_000,
}


@pytest.mark.parametrize("name", list(HOSTILE_UNCHANGED))
def test_hostile_text_without_a_secret_comes_out_unchanged(name: str) -> None:
    text = HOSTILE_UNCHANGED[name]
    assert Redactor().redact_text(text) == text


def test_a_private_key_header_with_no_end_hides_the_key_lines_after_it() -> None:
    body = "\n".join(
        "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkwYWJjZGVmZ2hpamtsbW5v" for _ in range(3)
    )
    text = f"-----BEGIN PRIVATE KEY-----\n{body}\n\nthe log goes on"
    assert Redactor().redact_text(text) == f"{marker('private-key')}\n\nthe log goes on"


def test_private_key_headers_repeated_with_no_end_are_all_redacted() -> None:
    text = "-----BEGIN PRIVATE KEY-----" * 4_000
    assert Redactor().redact_text(text) == marker("private-key") * 4_000


def test_a_huge_run_of_token_characters_is_not_a_token() -> None:
    text = "sk-" + "a1" * 50_000
    assert Redactor().redact_text(text) == text
