"""The built-in rule set (SPEC K1) and the marker that replaces a secret.

The patterns live in :mod:`.token_patterns` (secrets recognised by their own shape) and
:mod:`.context_patterns` (secrets recognised by what surrounds them); this module names them,
gives each its keywords and replacement, and fixes the order they run in.

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

from hermes_hookspecs import RedactionRule

from .context_patterns import (
    API_KEY_HEADER,
    ASSIGNMENTS,
    AUTHORIZATION_BARE,
    AUTHORIZATION_WITH_SCHEME,
    AWS_SECRET_ACCESS_KEY,
    BEARER,
    DATABASE_KEYWORDS,
    DATABASE_URL,
    SECRET_WORD_INSIDE_KEY,
    SLACK_WEBHOOK,
    URL_USERINFO,
    XML_SECRET_ELEMENT,
)
from .token_patterns import (
    ANTHROPIC,
    AWS_ACCESS_KEY_ID,
    GITHUB,
    GITLAB,
    GOOGLE_API_KEY,
    GOOGLE_OAUTH,
    HUGGING_FACE,
    JWT,
    NPM,
    OPENAI,
    PRIVATE_KEY_BLOCK,
    PRIVATE_KEY_UNTERMINATED,
    PYPI,
    SLACK_TOKEN,
    STRIPE,
    TELEGRAM_BOT,
)
from .vendor_patterns import (
    CURL_USER,
    DISCORD_BOT_TOKEN,
    FACEBOOK_APP_TOKEN,
    MAILCHIMP_KEY,
    SIDEKIQ_CREDENTIALS,
    TEAMS_WEBHOOK,
    TELEGRAM_BOT_LOOSE,
    VENDOR_NAMES,
    VENDOR_TOKENS,
    vendor_keyed,
)

MARKER_PREFIX = "[REDACTED:"


def marker(rule_name: str) -> str:
    """The text that replaces a secret found by the rule ``rule_name``."""
    return f"{MARKER_PREFIX}{rule_name}]"


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
    _rule("jwt", JWT, ("eyj", ".ey")),
    *(_rule(token.name, token.pattern, token.keywords) for token in VENDOR_TOKENS),
    # No literal prefix: the two dots between its segments are all every token holds.
    _rule("discord-bot-token", DISCORD_BOT_TOKEN, (".",)),
    _rule("mailchimp-key", MAILCHIMP_KEY, ("-us",)),
    _rule("facebook-token", FACEBOOK_APP_TOKEN, ("|", "%7c")),
    _rule("telegram-bot-token", TELEGRAM_BOT_LOOSE, (":a",)),
    _rule("teams-webhook", TEAMS_WEBHOOK, ("webhook.office.com",), keep=True),
    _rule("sidekiq-credentials", SIDEKIQ_CREDENTIALS, ("contribsys",), keep=True),
    _rule("curl-user", CURL_USER, ("curl",), keep=True),
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
    _after("database-url", DATABASE_URL, DATABASE_KEYWORDS, "@"),
    _after("url-credentials", URL_USERINFO, ("://", ":\\/\\/"), "@"),
    *(_rule("vendor-key", vendor_keyed(name), (name,), keep=True) for name in VENDOR_NAMES),
    *(_rule("assignment", pattern, keywords, keep=True) for keywords, pattern in ASSIGNMENTS),
    _rule(
        "assignment",
        SECRET_WORD_INSIDE_KEY,
        ("secret", "token", "passw", "creds", "credential"),
        keep=True,
    ),
    _rule(
        "assignment",
        XML_SECRET_ELEMENT,
        ("secret>", "password>", "passwd>", "token>", "apikey>"),
        keep=True,
    ),
)
"""Every built-in rule, in the order the engine applies them."""
