"""Secrets recognised by what surrounds them: assignments to secret-named keys,
``Authorization``/``x-api-key`` headers, database URLs and URL userinfo, Slack webhook paths,
AWS secret access keys. The context stays; only the value is replaced (the ``keep`` group).

Each pattern is a plain string for a :class:`RedactionRule` (assembled in :mod:`.rules`).
Words are spelled out in their usual cases rather than written ``(?i:…)``: an ignore-case
group keeps ``re`` from jumping to the characters a match can start with, and it then tries
every position (15 times slower on real logs).
"""

from __future__ import annotations

import re

# What may sit between a key and its value: an optional closing quote (possibly JSON-escaped,
# possibly closing a subscript: ``["password"]``), blanks, then ``=``, ``:``, ``:=`` or ``=>``.
# A bare ``]`` is not enough: markers end with one (``[REDACTED:github-token]``).
_SEPARATOR = r"""\\{0,3}(?:["']\]?)?[ \t]{0,5}(?::=|=>|[:=])[ \t]{0,5}"""
# In prose: "the password is hunter2!", "set API_KEY to …".
_PROSE_SEPARATOR = r"[ \t]{1,3}(?:is|to|was)[ \t]{1,3}"
_OPEN_QUOTE = r"""\\{0,3}["'`]"""
_NOT_A_MARKER = r"(?!\[REDACTED)"


def _spelled(*names: str) -> str:
    """An alternation of header or word ``names`` as people write them: lower-case,
    UPPER-CASE, Title-Case per dash-separated part, and with ``API`` in capitals.

    """
    spellings: dict[str, None] = {}  # ordered, without repeats
    for name in names:
        title = "-".join(part.capitalize() for part in name.split("-"))
        for form in (name, name.upper(), title, title.replace("Api", "API")):
            spellings[form] = None
    return "(?:" + "|".join(re.escape(form) for form in spellings) + ")"


# ----------------------------------------------------------------------------- AWS

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

# ----------------------------------------------------------------------------- headers

_TOKEN_VALUE = r"[A-Za-z0-9._~+/=:-]"


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
    + _spelled("bearer", "basic", "token", "digest", "bot", "apikey", "sso-key", "api-token")
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
    # With no scheme to tell it, the value is whatever the header holds, ``@`` included
    # (``Authorization: sha256~…@…``), up to a blank or a quote.
    + r"[A-Za-z0-9._~+/=:@-]{16,8192}+"
)
BEARER = (
    # A word of its own ("Bearer", not "forbearer"), also right after an escaped newline.
    r"(?P<keep>(?:bearer|Bearer|BEARER)(?:(?<![A-Za-z][A-Za-z]{6})|(?<=\\[nrt][A-Za-z]{6}))"
    + r"[ \t]{1,5})"
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

SLACK_WEBHOOK = (
    r"(?P<keep>hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/+-]{20,255}+"
)
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
DATABASE_KEYWORDS = (
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


# ----------------------------------------------------------------------------- machine-made values

_MACHINE_VALUE = (
    "(?:"
    # a UUID, or hex of 32 or more
    + "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    + "|[0-9a-fA-F]{32,128}+"
    # 20 or more random characters mixing lower case, upper case and digits
    + "|(?=[A-Za-z0-9_+/=-]{0,255}?[0-9])(?=[A-Za-z0-9_+/=-]{0,255}?[a-z])"
    + "(?=[A-Za-z0-9_+/=-]{0,255}?[A-Z])[A-Za-z0-9_+/=-]{20,256}+"
    + ")"
    + r"(?![A-Za-z0-9_+/=.(-])"
)
SECRET_WORD_INSIDE_KEY = (
    # A key holding a secret word anywhere, not only at its end (``mySecretString``,
    # ``api_token_123``, ``todo_secret_do_not_commit``, ``creds``), assigned a value that
    # looks machine-made; also a quoted pair in a call (``getenv("api_token", "…")``). Found
    # from the word; the rest of the key before it stays as it is.
    r"(?P<keep>(?:"
    + "|".join(
        spelling
        for word in ("secret", "token", "password", "passwd", "creds", "credential")
        for spelling in _spellings(word)
    )
    + r")[A-Za-z0-9_-]{0,40}+"
    + r"""(?:"""
    + _SEPARATOR
    + r"""|\\{0,3}["'][ \t]{0,5},[ \t]{0,5})(?:"""
    + _OPEN_QUOTE
    + r")?)"
    + _NOT_A_MARKER
    + _MACHINE_VALUE
)
XML_SECRET_ELEMENT = (
    # ``<password>…</password>``, ``<secret>{AQAAABAAA…}</secret>`` (Jenkins credentials),
    # ``<apiToken>…</apiToken>``: the element's text, on one line.
    r"(?P<keep><[A-Za-z_]{0,30}(?:[Ss]ecret|[Pp]assword|[Pp]asswd|[Tt]oken|[Aa]pi[Kk]ey)>)"
    + _NOT_A_MARKER
    + r"[^<>\n]{1,512}+(?=</)"
)
