"""The kinds issue 23 names are redacted wherever they sit in text (as written, and
JSON-escaped as a tool result stored in a log holds them)."""

from __future__ import annotations

import json

import pytest
from issue23_samples import CLEAN_CONTROLS, ISSUE_23_KINDS

from hermes_core.redaction import Redactor


@pytest.mark.parametrize("kind", sorted(ISSUE_23_KINDS))
def test_each_kind_issue_23_names_is_redacted(kind: str) -> None:
    text, secret = ISSUE_23_KINDS[kind]
    redacted = Redactor().redact_text(text)
    assert secret not in redacted
    assert "[REDACTED:" in redacted


@pytest.mark.parametrize("kind", sorted(ISSUE_23_KINDS))
def test_each_kind_is_redacted_json_escaped(kind: str) -> None:
    text, secret = ISSUE_23_KINDS[kind]
    line = json.dumps({"type": "tool_result", "content": text})
    redacted = Redactor().redact_text(line)
    assert secret not in json.loads(redacted)["content"]


@pytest.mark.parametrize("control", CLEAN_CONTROLS)
def test_clean_controls_come_out_unchanged(control: str) -> None:
    assert Redactor().redact_text(control) == control
    line = json.dumps({"content": control})
    assert Redactor().redact_text(line) == line
