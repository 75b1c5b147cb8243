"""docs/redaction.md names every built-in rule and its examples hold."""

from __future__ import annotations

import re
from pathlib import Path

from hermes_core.redaction import BUILTIN_RULES, Redactor

DOC = Path(__file__).resolve().parents[2] / "docs" / "redaction.md"


def test_every_builtin_rule_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    documented = set(re.findall(r"`([a-z0-9-]+)`", text))
    missing = {rule.name for rule in BUILTIN_RULES} - documented
    assert not missing, f"rules missing from docs/redaction.md: {sorted(missing)}"


def test_the_documented_limits_on_assigned_values_hold() -> None:
    redactor = Redactor()
    assert redactor.redact_text("password: correct-horse") == "password: correct-horse"
    assert redactor.redact_text('password: "correct-horse"') == 'password: "correct-horse"'
    assert redactor.redact_text('"input_token": "NextToken"') == '"input_token": "NextToken"'
    assert redactor.redact_text("AUTH = '1.3.6.1.5.5.7.3.1'") == "AUTH = '1.3.6.1.5.5.7.3.1'"
    assert redactor.redact_text("password: correct-horse-7") == ("password: [REDACTED:assignment]")
    assert redactor.redact_text('password: "hunter2!"') == 'password: "[REDACTED:assignment]"'
    assert redactor.redact_text("password: hunter2!") == "password: [REDACTED:assignment]"
