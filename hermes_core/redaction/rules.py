"""The built-in secret patterns (SPEC K1), one :class:`RedactionRule` each.

Every rule replaces what it finds with a marker naming the rule, ``[REDACTED:<name>]``, so a
reader of an export sees that something was there and what kind of secret it was. Rules that
find a secret by its *context* (an assignment, a header, a URL) keep the context and replace
only the value: ``password=[REDACTED:assignment]``, ``Authorization: Bearer
[REDACTED:authorization]``, ``postgres://app:[REDACTED:database-url]@db``.

The order matters: vendor formats come first (their marker is the most informative), the
generic context rules last. No pattern matches a marker, so redacting twice changes nothing.

Linear time on hostile input: Python's ``re`` backtracks, so the patterns avoid nested
unbounded repeats (a test walks every pattern's parse tree), prefer bounded repeats where the
format has a known length, use possessive repeats (``{m,n}+``) where giving characters back
could never help, and anchor tokens with a look-behind so a long run of token characters is
tried from its start only, not from each of its positions.
"""

from __future__ import annotations

import re

from hermes_hookspecs import RedactionRule

MARKER_PREFIX = "[REDACTED:"


def marker(rule_name: str) -> str:
    """The text that replaces a secret found by the rule ``rule_name``."""
    return f"{MARKER_PREFIX}{rule_name}]"


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
# What may sit between a key and its value: an optional closing quote (possibly JSON-escaped,
# possibly closing a subscript: ``["password"]``), blanks, then ``=``, ``:``, ``:=`` or ``=>``.
# A bare ``]`` is not enough: markers end with one (``[REDACTED:github-token]``).
_SEPARATOR = r"""\\{0,3}(?:["']\]?)?[ \t]{0,5}(?::=|=>|[:=])[ \t]{0,5}"""
# In prose: "the password is hunter2!", "set API_KEY to …".
_PROSE_SEPARATOR = r"[ \t]{1,3}(?:is|to|was)[ \t]{1,3}"
_OPEN_QUOTE = r"""\\{0,3}["'`]"""
_NOT_A_MARKER = r"(?!\[REDACTED)"


def _rule(name: str, pattern: str, keywords: tuple[str, ...], keep: bool = False) -> RedactionRule:
    """A rule whose match is replaced by its marker; with ``keep`` the ``keep`` group (the
    context in front of the secret) stays."""
    replacement = (r"\g<keep>" if keep else "") + marker(name)
    return RedactionRule(name=name, pattern=pattern, keywords=keywords, replacement=replacement)


def _after(name: str, pattern: str, keywords: tuple[str, ...], tail: str) -> RedactionRule:
    """Like :func:`_rule` with ``keep``, plus a literal ``tail`` put back after the marker."""
    return RedactionRule(
        name=name, pattern=pattern, keywords=keywords, replacement=r"\g<keep>" + marker(name) + tail
    )


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
SLACK_WEBHOOK = (
    r"(?P<keep>hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/+-]{20,255}+"
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
AWS_SECRET_ACCESS_KEY = (
    r"(?P<keep>(?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY|SecretAccessKey|secretAccessKey"
    r"|aws_secret_key|AWS_SECRET_KEY|secret_access_key|SECRET_ACCESS_KEY)"
    # ``=``/``:`` in files and code; a blank in ``aws configure set aws_secret_access_key …``.
    + r"(?:"
    + _SEPARATOR
    + r"|[ \t]{1,5})(?:"
    + _OPEN_QUOTE
    + r")?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"
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
    _prefix("eyJ", dashed=True)
    + r"[A-Za-z0-9_-]{5,4000}+\.[A-Za-z0-9_-]{10,20000}+\.[A-Za-z0-9_-]{0,4000}+"
    + r"(?![A-Za-z0-9_-])"
)

# ----------------------------------------------------------------------------- headers

_TOKEN_VALUE = r"[A-Za-z0-9._~+/=:-]"


def _spelled(*names: str) -> str:
    """An alternation of header or word ``names`` as people write them: lower-case,
    UPPER-CASE, Title-Case per dash-separated part, and with ``API`` in capitals.

    Spelled out rather than ``(?i:…)``: an ignore-case group keeps ``re`` from jumping to the
    characters a match can start with, and it then tries every position (several times
    slower on real logs).
    """
    spellings: dict[str, None] = {}
    for name in names:
        title = "-".join(part.capitalize() for part in name.split("-"))
        for form in (name, name.upper(), title, title.replace("Api", "API")):
            spellings[form] = None
    return "(?:" + "|".join(re.escape(form) for form in spellings) + ")"


# The header itself, not the tail of an identifier (``FederatedAuthorization``).
_AUTHORIZATION = (
    _spelled("authorization", "proxy-authorization")
    + r"(?:(?<![A-Za-z0-9_][Aa]uthorization)(?<![A-Za-z0-9_]AUTHORIZATION)"
    + r"|(?<=\\[nrt][Aa]uthorization)|(?<=\\[nrt]AUTHORIZATION))"
)
AUTHORIZATION_WITH_SCHEME = (
    r"(?P<keep>"
    + _AUTHORIZATION
    + _SEPARATOR
    + r"(?:"
    + _OPEN_QUOTE
    + r")?[ \t]{0,3}"
    + _spelled("bearer", "basic", "token", "digest", "bot", "apikey", "sso-key")
    + r"[ \t]{1,5})"
    + _NOT_A_MARKER
    + _TOKEN_VALUE
    + r"{4,8192}+"
)
AUTHORIZATION_BARE = (
    r"(?P<keep>"
    + _AUTHORIZATION
    + _SEPARATOR
    + r"(?:"
    + _OPEN_QUOTE
    + r")?)"
    + _NOT_A_MARKER
    + _TOKEN_VALUE
    + r"{16,8192}+"
)
BEARER = (
    r"(?P<keep>(?:bearer|Bearer|BEARER)(?<![A-Za-z][A-Za-z]{6})[ \t]{1,5})"
    + r"(?=[A-Za-z._~+/=-]{0,4096}+[0-9])"
    + r"[A-Za-z0-9._~+/=-]{20,4096}+"
)
API_KEY_HEADER = (
    r"(?P<keep>"
    + _spelled(
        "x-api-key",
        "api-key",
        "x-auth-token",
        "x-access-token",
        "x-goog-api-key",
        "ocp-apim-subscription-key",
        "private-token",
        "x-gitlab-token",
    )
    + r"""\\{0,3}["']?[ \t]{0,5}[:=][ \t]{0,5}(?:"""
    + _OPEN_QUOTE
    + r")?)"
    + _NOT_A_MARKER
    + r"[A-Za-z0-9._~+/=-]{8,4096}+"
)

# ----------------------------------------------------------------------------- URLs

_USER = r"""[^\s:/@\[\]"'<>\\]{0,128}+"""
_PASSWORD = r"""[^\s/@\[\]"'<>\\]{1,256}+"""
_SLASHES = r":(?:\\?/){2}"
_DATABASE_SCHEMES = (
    "postgres",
    "postgresql",
    "mysql",
    "mariadb",
    "mongodb",
    "mongodb+srv",
    "redis",
    "rediss",
    "amqp",
    "amqps",
    "mssql",
    "sqlserver",
    "oracle",
    "cockroachdb",
    "clickhouse",
    "couchdb",
    "neo4j",
    "neo4j+s",
    "bolt",
    "memcached",
)
_DATABASE_KEYWORDS = (
    "postgres",
    "mysql",
    "mariadb",
    "mongodb",
    "redis",
    "amqp",
    "mssql",
    "sqlserver",
    "oracle",
    "cockroachdb",
    "clickhouse",
    "couchdb",
    "neo4j",
    "bolt",
    "memcached",
)
"""Every scheme contains one of these."""
DATABASE_URL = (
    r"(?P<keep>(?:"
    # Spelled out in both cases (not ``(?i:…)``) so ``re`` skips to the possible first letters.
    + "|".join(
        re.escape(spelling)
        for scheme in sorted(_DATABASE_SCHEMES, key=len, reverse=True)
        for spelling in (scheme, scheme.upper())
    )
    + r")"
    + r"(?:\+[A-Za-z0-9]{1,20}+)?"
    + _SLASHES
    + _USER
    + r":)"
    + _NOT_A_MARKER
    + _PASSWORD
    + r"@"
)
URL_USERINFO = (
    # Found from its ``://`` (a literal ``re`` can jump to), after a scheme character.
    r"(?P<keep>:(?<=[A-Za-z0-9+.-]:)(?://|\\/\\/)"
    + _USER
    + r":)"
    + _NOT_A_MARKER
    + _PASSWORD
    + r"@"
)

# ----------------------------------------------------------------------------- assignments


def _spellings(word: str) -> tuple[str, ...]:
    return (word, word.upper(), word.capitalize())


_KEY_PREFIXES = (
    "api",
    "access",
    "secret",
    "private",
    "client",
    "master",
    "encryption",
    "signing",
    "auth",
    "app",
    "license",
    "account",
    "service",
    "subscription",
    "webhook",
    "session",
)
# One flat alternation, each branch starting with a literal, and the case spelled out rather
# than ``(?i:…)``: that way ``re`` skips straight to the characters a key can start with
# instead of trying every position, which made this rule 15 times faster on real logs.
SECRET_KEY_WORDS = (
    "(?:"
    + "|".join(
        [
            *(
                spelling
                for word in (
                    "password",
                    "passwd",
                    "passphrase",
                    "secret",
                    "token",
                    "credentials",
                    "credential",
                    "auth",
                )
                for spelling in _spellings(word)
            ),
            *(
                spelling + r"[_.-]?(?:key|KEY|Key)"
                for prefix in _KEY_PREFIXES
                for spelling in _spellings(prefix)
            ),
        ]
    )
    + ")"
)
"""The words a key must end with for its value to be treated as a secret (``api_key``,
``access_token``, ``client_secret``, ``DB_PASSWORD``, ``passwd``…). ``token_count`` or
``input_tokens`` do not end with one."""

_NOT_A_VERSION = r"""(?![0-9]{1,10}[.:-][0-9.:-]{0,64}+(?:["'\\\s,;)\]}]|$))"""
_UNQUOTED_CHAR = r"""[^\s"'\\,;&<>(){}\[\]`|=]"""
# ``&`` belongs to a bare value unless it starts the next query parameter (``&page=2``).
_UNQUOTED_RUN = r"(?:" + _UNQUOTED_CHAR + r"|&(?![A-Za-z0-9_.-]{1,64}=)){6,1024}+"
_ASSIGNED_VALUE = (
    r"(?:"
    + _SEPARATOR
    + r"|"
    + _PROSE_SEPARATOR
    + r")(?P<quote>"
    + _OPEN_QUOTE
    + r")?)"
    + _NOT_A_MARKER
    # Either way the value holds a digit or a symbol, so identifiers are taken for code, not
    # secrets (``token = next_token``, ``"input_token": "NextToken"``, ``apiKey:
    # process.env.API_KEY``), and is not a version, an address or an OID (``"1.3.6.1.5"``).
    + _NOT_A_VERSION
    + r"(?(quote)"
    # A quoted value: anything but blanks and quotes, not a template or placeholder.
    + r"""(?![$<{%*])(?=[^\s"'\\`<>]{0,1024}?[0-9!@#$%^&*+/=~?])[^\s"'\\`<>]{4,1024}+"""
    + r"|"
    # A bare value: not a path, a template, a call or an index either.
    + r"(?![$<{%*\[(/~.])"
    + r"(?="
    + _UNQUOTED_CHAR
    + r"{0,1024}?[0-9!@#^*+~?])"
    + _UNQUOTED_RUN
    + r"(?![(\[])"
    + r")"
)
"""What follows a secret key: a separator, then the value (the only part replaced)."""


def _any_case(word: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)


# ``…key`` names are found from ``key`` (a literal ``re`` jumps to) and accepted when one of
# the known prefixes stands right before it, with or without a ``_``, ``.`` or ``-``.
_KEY_NAME = (
    r"(?:key|KEY|Key)(?:"
    + "|".join(
        f"(?<={_any_case(prefix)}{separator}[Kk][Ee][Yy])"
        for prefix in _KEY_PREFIXES
        for separator in ("", "[_.-]")
    )
    + ")"
)

ASSIGNMENTS: tuple[tuple[tuple[str, ...], str], ...] = tuple(
    (keywords, r"(?P<keep>" + name + _ASSIGNED_VALUE)
    for keywords, name in (
        (
            ("passw", "passphrase"),
            "(?:"
            + "|".join(
                spelling
                for word in ("password", "passwd", "passphrase")
                for spelling in _spellings(word)
            )
            + ")",
        ),
        # Not the resource type of an ARN (``arn:aws:secretsmanager:…:secret:prod/db-*``).
        (("secret",), "(?:secret|SECRET|Secret)(?<!:secret)(?<!:SECRET)(?<!:Secret)"),
        (("token",), "(?:token|TOKEN|Token)"),
        (("credential",), "(?:credentials?|CREDENTIALS?|Credentials?)"),
        (("auth",), "(?:auth|AUTH|Auth)"),
        (("key",), _KEY_NAME),
    )
)
"""Key/token/secret/password assignments, one rule per kind of key so each regex runs only
on text holding its word and jumps between the few letters its key can start with."""

# ----------------------------------------------------------------------------- the rule set

BUILTIN_RULES: tuple[RedactionRule, ...] = (
    _rule("private-key", PRIVATE_KEY_BLOCK, ("private key",)),
    _rule("private-key", PRIVATE_KEY_UNTERMINATED, ("private key",)),
    _rule("anthropic-key", ANTHROPIC, ("sk-ant-",)),
    _rule("openai-key", OPENAI, ("sk-",)),
    _rule("huggingface-token", HUGGING_FACE, ("hf_",)),
    _rule("github-token", GITHUB, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _rule(
        "gitlab-token",
        GITLAB,
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "glft-", "glsoat-", "gloas-"),
    ),
    _rule("slack-webhook", SLACK_WEBHOOK, ("hooks.slack.com",), keep=True),
    _rule("slack-token", SLACK_TOKEN, ("xox", "xapp-")),
    _rule("stripe-key", STRIPE, ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_")),
    _rule("aws-access-key-id", AWS_ACCESS_KEY_ID, ("akia", "asia", "abia", "acca", "a3t")),
    _rule(
        "aws-secret-access-key",
        AWS_SECRET_ACCESS_KEY,
        ("secret_access_key", "secretaccesskey", "aws_secret_key"),
        keep=True,
    ),
    _rule("google-api-key", GOOGLE_API_KEY, ("aiza",)),
    _rule("google-oauth", GOOGLE_OAUTH, ("ya29.", "gocspx-")),
    _rule("npm-token", NPM, ("npm_",)),
    _rule("pypi-token", PYPI, ("pypi-ag",)),
    _rule("telegram-bot-token", TELEGRAM_BOT, (":aa",)),
    _rule("jwt", JWT, ("eyj",)),
    _rule("authorization", AUTHORIZATION_WITH_SCHEME, ("authorization",), keep=True),
    _rule("authorization", AUTHORIZATION_BARE, ("authorization",), keep=True),
    _rule("bearer-token", BEARER, ("bearer",), keep=True),
    _rule(
        "api-key-header",
        API_KEY_HEADER,
        ("api-key", "auth-token", "access-token", "subscription-key", "private-token"),
        keep=True,
    ),
    # Keyed on the schemes, not on "://": the pattern has no literal to jump to, so it only
    # runs on text that names a database scheme.
    _after("database-url", DATABASE_URL, _DATABASE_KEYWORDS, "@"),
    _after("url-credentials", URL_USERINFO, ("://", ":\\/\\/"), "@"),
    *(_rule("assignment", pattern, keywords, keep=True) for keywords, pattern in ASSIGNMENTS),
)
"""Every built-in rule, in the order the engine applies them."""
