"""Secrets recognised by their own shape: vendor tokens, JWTs and PEM private keys.

Each pattern is a plain string for a :class:`RedactionRule` (assembled in :mod:`.rules`).
A token starts with its documented literal prefix and must start and end at a boundary, so a
longer run of token characters is never cut in two and a marker never glues to a remainder.
"""

from __future__ import annotations


def _prefix(prefix: str, *, dashed: bool = False) -> str:
    """A token's fixed-width ``prefix`` (a regex such as ``gh[pousr]_``), where a token may
    start: where no character of its own body precedes it (``dashed``: bodies that also hold
    ``_`` and ``-``), or right after a JSON escape such as ``\\n``, whose ``n`` would otherwise
    glue the token to the escape.

    Tried only at the start of a run of body characters, a token is scanned once, not once
    per position. The look-behinds come *after* the literal prefix, so ``re`` can still jump
    from one occurrence of the prefix to the next instead of trying every position.
    """
    body = "[A-Za-z0-9_-]" if dashed else "[A-Za-z0-9]"
    return f"{prefix}(?:(?<!{body}{prefix})|(?<=\\\\[nrt]{prefix}))"


# A token ends where no letter or digit follows it, so a longer run is never cut in two (the
# tail would otherwise become a token of its own on a second pass).
_END = r"(?![A-Za-z0-9])"

# ----------------------------------------------------------------------------- private keys

_PEM_LABEL = r"[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
PRIVATE_KEY_BLOCK = (
    r"-----BEGIN"
    + _PEM_LABEL
    # The body never holds five dashes in a row, so it stops at the END line (or at the next
    # BEGIN of a key with no END) without ever looking further.
    + r"(?:[^-]|-(?!----)){0,20000}+"
    + r"-----END"
    + _PEM_LABEL
)
PRIVATE_KEY_UNTERMINATED = (
    r"-----BEGIN"
    + _PEM_LABEL
    # A key cut short (a truncated log): the header and every base64 line after it.
    + r"(?:(?:\s|\\{1,3}[nr]){1,8}+[A-Za-z0-9+/=]{16,8000}+){0,400}+"
)

# ----------------------------------------------------------------------------- vendor tokens

ANTHROPIC = _prefix("sk-ant-", dashed=True) + r"[A-Za-z0-9_-]{20,400}+" + _END
OPENAI = (
    _prefix("sk-", dashed=True)
    + r"(?!ant-)"
    # Real keys are random base62: a digit always shows up; a prose slug like
    # ``sk-learn-regression-tutorial`` has none.
    + r"(?=[A-Za-z_-]{0,400}+[0-9])"
    + r"[A-Za-z0-9_-]{20,400}+"
    + _END
)
HUGGING_FACE = _prefix("hf_") + r"[A-Za-z0-9]{30,60}+" + _END
GITHUB = (
    r"(?:"
    + _prefix("gh[pousr]_")
    + r"[A-Za-z0-9]{36,251}+|"
    + _prefix("github_pat_")
    + r"[A-Za-z0-9_]{22,255}+)"
    + _END
)
GITLAB = (
    r"(?:"
    + "|".join(
        _prefix(f"gl{kind}-", dashed=True)
        for kind in ("pat", "dt", "rt", "ptt", "cbt", "imt", "ft", "soat", "oas")
    )
    + r")[A-Za-z0-9_.-]{20,255}+"
    + _END
)
SLACK_TOKEN = (
    r"(?:"
    + _prefix("xox[abposrce]-", dashed=True)
    + "|"
    + _prefix("xapp-", dashed=True)
    + r")[A-Za-z0-9-]{10,250}+"
    + _END
)
STRIPE = "|".join(
    [
        *(
            _prefix(kind) + r"[A-Za-z0-9]{10,247}+" + _END
            for kind in ("sk_live_", "sk_test_", "rk_live_", "rk_test_")
        ),
        _prefix("whsec_") + r"[A-Za-z0-9]{24,128}+" + _END,
    ]
)
AWS_ACCESS_KEY_ID = (
    r"(?:"
    + "|".join(_prefix(kind) for kind in ("AKIA", "ASIA", "ABIA", "ACCA", "A3T[A-Z0-9]"))
    + r")[A-Z0-9]{16}"
    + _END
)
GOOGLE_API_KEY = _prefix("AIza", dashed=True) + r"[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"
GOOGLE_OAUTH = (
    r"(?:"
    + _prefix(r"ya29\.", dashed=True)
    + r"[0-9A-Za-z_-]{20,2048}+|"
    + _prefix("GOCSPX-", dashed=True)
    + r"[A-Za-z0-9_-]{24,40}+)"
    + _END
)
NPM = _prefix("npm_") + r"[A-Za-z0-9]{36,64}+" + _END
PYPI = _prefix("pypi-Ag", dashed=True) + r"[A-Za-z0-9_-]{50,4000}+" + _END
TELEGRAM_BOT = r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"
JWT = (
    # Three segments (the signature may be empty), or two with the second a JSON object too
    # (``ey…`` encodes ``{"``): an unsigned token cut before its final dot.
    _prefix("ey", dashed=True)
    + r"[A-Za-z0-9_-]{5,4000}+\.(?:"
    + r"[A-Za-z0-9_-]{10,20000}+\.[A-Za-z0-9_-]{0,4000}+"
    + r"|ey(?=[A-Za-z_-]{0,20000}+[0-9])[A-Za-z0-9_-]{15,20000}+(?!\.))"
    + r"(?![A-Za-z0-9_-])"
)
