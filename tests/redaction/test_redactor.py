"""The Redactor: keyword pre-filter semantics, extra rules, nested values, counts, bad rules."""

from __future__ import annotations

import pytest
import secret_samples as s
from hermes_hookspecs import RedactionRule

from hermes_core.redaction import BUILTIN_RULES, InvalidRedactionRule, Redactor, marker

ACME = RedactionRule(
    name="acme-token", pattern=r"acme_[a-z0-9]{12}", keywords=("acme_",), replacement="[ACME]"
)


def test_builtin_rules_all_have_names_keywords_and_a_marker() -> None:
    assert BUILTIN_RULES
    for rule in BUILTIN_RULES:
        assert rule.name and rule.keywords
        assert marker(rule.name) in rule.replacement


def test_extra_rules_apply_after_the_builtins() -> None:
    redactor = Redactor([ACME])
    assert redactor.rules[-1] is ACME
    assert redactor.redact_text("id acme_0123456789ab.") == "id [ACME]."
    assert redactor.counts == {"acme-token": 1}


def test_a_rule_whose_keyword_is_absent_never_runs_its_regex() -> None:
    # The pattern matches "zz1234", but the keyword "qq" does not occur: documented
    # semantics, the pre-filter decides first.
    rule = RedactionRule(name="gated", pattern=r"zz[0-9]{4}", keywords=("qq",))
    redactor = Redactor([rule])
    assert redactor.redact_text("value zz1234") == "value zz1234"
    assert redactor.redact_text("qq value zz1234") == "qq value [REDACTED]"
    assert redactor.counts == {"gated": 1}


def test_keywords_match_case_insensitively() -> None:
    rule = RedactionRule(name="gated", pattern=r"ZZ[0-9]{4}", keywords=("Marker",))
    redactor = Redactor([rule])
    assert redactor.redact_text("MARKER ZZ1234") == "MARKER [REDACTED]"


def test_a_rule_without_keywords_always_runs() -> None:
    rule = RedactionRule(name="always", pattern=r"zz[0-9]{4}")
    assert Redactor([rule]).redact_text("a zz1234 b") == "a [REDACTED] b"


def test_a_replacement_may_keep_a_named_group() -> None:
    rule = RedactionRule(
        name="pin",
        pattern=r"(?P<keep>PIN: )[0-9]{4}",
        keywords=("pin",),
        replacement=r"\g<keep>****",
    )
    assert Redactor([rule]).redact_text("PIN: 1234") == "PIN: ****"


@pytest.mark.parametrize(
    "rule",
    [
        RedactionRule(name="broken", pattern=r"(unclosed"),
        RedactionRule(name="broken", pattern=r"abc", replacement=r"\g<missing>"),
        RedactionRule(name="broken", pattern=r"abc", replacement=r"\3"),
    ],
)
def test_an_invalid_rule_is_refused_when_the_redactor_is_built(rule: RedactionRule) -> None:
    with pytest.raises(InvalidRedactionRule, match="redaction rule 'broken'"):
        Redactor([rule])


def test_redact_value_walks_nested_containers_and_keeps_keys() -> None:
    redactor = Redactor()
    value = {
        "model": "gpt-x",
        "headers": {"Authorization": f"Bearer {s.PASSWORD}"},
        "tokens": [s.NPM, ("nested", s.GITHUB_CLASSIC["ghs"])],
        "temperature": 0.2,
        "stream": True,
        "none": None,
        s.NPM: "a key that looks like a token stays a key",
    }
    out = redactor.redact_value(value)
    assert out == {
        "model": "gpt-x",
        "headers": {"Authorization": marker("assignment")},
        "tokens": [marker("npm-token"), ("nested", marker("github-token"))],
        "temperature": 0.2,
        "stream": True,
        "none": None,
        s.NPM: "a key that looks like a token stays a key",
    }
    assert value["tokens"][0] == s.NPM  # the input is not modified


def test_a_string_under_a_secret_key_is_redacted_whole() -> None:
    redactor = Redactor()
    out = redactor.redact_value(
        {"api_key": "short1", "db_password": "hunter", "max_tokens": 10, "token_count": "12"}
    )
    assert out == {
        "api_key": marker("assignment"),
        "db_password": marker("assignment"),
        "max_tokens": 10,
        "token_count": "12",
    }
    assert redactor.counts == {"assignment": 2}


def test_counts_add_up_over_the_redactor_life() -> None:
    redactor = Redactor()
    redactor.redact_text(s.NPM)
    redactor.redact_value([s.NPM, s.NPM])
    assert redactor.counts == {"npm-token": 3}
    assert redactor.total == 3


def test_rules_sharing_a_name_add_up_in_counts() -> None:
    extra = RedactionRule(name="npm-token", pattern=r"npmlegacy-[0-9]{6}", keywords=("npmlegacy",))
    redactor = Redactor([extra])
    redactor.redact_text(f"{s.NPM} npmlegacy-123456")
    assert redactor.counts == {"npm-token": 2}


def test_empty_text_is_returned_unchanged() -> None:
    assert Redactor().redact_text("") == ""


def test_on_redaction_reports_each_match_and_gives_the_same_text() -> None:
    text = f"a {s.NPM} b password={s.PASSWORD} c"
    seen: list[tuple[str, str]] = []
    reported = Redactor().redact_text(text, lambda rule, match: seen.append((rule, match[0])))
    assert reported == Redactor().redact_text(text)
    assert seen == [("npm-token", s.NPM), ("assignment", f"password={s.PASSWORD}")]
