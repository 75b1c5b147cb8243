"""hypothesis: redact_text never raises, is idempotent, and never leaves a planted token."""

from __future__ import annotations

import secret_samples as s
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.redaction import Redactor

# Pieces that put the rules to work: prefixes, separators, quotes, escapes, markers.
FRAGMENTS = [
    "sk-",
    "sk-ant-",
    "sk-proj-",
    "hf_",
    "ghp_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "sk_live_",
    "AKIA",
    "AIza",
    "ya29.",
    "npm_",
    "pypi-AgEI",
    "eyJ",
    ".",
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "-----",
    "password",
    "api_key",
    "token",
    "secret",
    "Secret",
    "Authorization",
    "Bearer ",
    "Basic ",
    "x-api-key",
    "=",
    ": ",
    ":",
    '"',
    "'",
    "\\",
    '\\"',
    "\\n",
    "\n",
    " ",
    "@",
    "://",
    "postgres://",
    "https://",
    "user",
    "[REDACTED:",
    "]",
    "&",
    "hooks.slack.com/services/",
    "_",
    "-",
    "/",
    "+",
    "(",
    "[",
    "\\nAuthorization: Basic ",
    "\\nBearer ",
    "secret:",
    "1.2.3",
    "0123456789",
    "abcdefghijklmnopqrstuvwxyz",
    "ABCDEFGHIJKLMNOP",
    "Zz9",
    "123456789:AA",
]
secretish_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=60
).map("".join)


@settings(max_examples=600, deadline=None)
@given(secretish_text)
def test_redaction_never_raises_and_is_idempotent(text: str) -> None:
    redactor = Redactor()
    once = redactor.redact_text(text)
    assert redactor.redact_text(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_arbitrary_unicode_is_handled(text: str) -> None:
    redactor = Redactor()
    once = redactor.redact_text(text)
    assert redactor.redact_text(once) == once


TOKENS = [s.OPENAI_PROJECT, s.ANTHROPIC, s.GITHUB_CLASSIC["ghp"], s.NPM, s.AWS_KEY_ID, s.JWT]
SEPARATORS = [" ", "\n", "\t", '"', "'", "(", ")", ",", ";", "=", ": ", "\\n", "/", "<", ">"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(TOKENS),
    st.text(max_size=40),
    st.sampled_from(SEPARATORS),
    st.sampled_from(SEPARATORS),
    st.text(max_size=40),
)
def test_a_delimited_token_never_survives(
    token: str, before: str, left: str, right: str, after: str
) -> None:
    out = Redactor().redact_text(before + left + token + right + after)
    assert token not in out


def test_a_marker_ending_in_a_key_word_does_not_become_a_key() -> None:
    # Found by the idempotence property: "…slack-token]" followed by ":AA…" once read as an
    # assignment to the key "token".
    redactor = Redactor()
    once = redactor.redact_text("xoxb-sk-123456789:AA123456789:AA")
    assert redactor.redact_text(once) == once
