"""Every built-in category is caught — bare, at a line end, quoted, JSON-escaped, in URLs —
with the text around it kept; ordinary prose and code are left alone."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

import pytest
import secret_samples as s

from hermes_core.redaction import Redactor, marker


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    secret: str
    rule: str
    kept: tuple[str, ...] = ()


PEM = "\n".join(
    ["-----BEGIN RSA PRIVATE KEY-----", *s.PEM_BODY_LINES, "-----END RSA PRIVATE KEY-----"]
)

CASES = [
    # OpenAI
    Case(
        "openai-legacy",
        f"use {s.OPENAI_LEGACY} here",
        s.OPENAI_LEGACY,
        "openai-key",
        ("use ", " here"),
    ),
    Case(
        "openai-project-env",
        f"OPENAI_API_KEY={s.OPENAI_PROJECT}\n",
        s.OPENAI_PROJECT,
        "openai-key",
        ("OPENAI_API_KEY=",),
    ),
    Case(
        "openai-service-line-end",
        f"key: {s.OPENAI_SERVICE}",
        s.OPENAI_SERVICE,
        "openai-key",
        ("key: ",),
    ),
    # Anthropic
    Case(
        "anthropic",
        f'client = Anthropic(api_key="{s.ANTHROPIC}")',
        s.ANTHROPIC,
        "anthropic-key",
        ("client = Anthropic(api_key=", ")"),
    ),
    # Hugging Face
    Case(
        "huggingface",
        f"huggingface-cli login --token {s.HUGGING_FACE}",
        s.HUGGING_FACE,
        "huggingface-token",
        ("login --token ",),
    ),
    # GitHub, every prefix
    *[
        Case(
            f"github-{prefix}",
            f"GITHUB_TOKEN={token} gh pr list",
            token,
            "github-token",
            ("GITHUB_TOKEN=", " gh pr list"),
        )
        for prefix, token in s.GITHUB_CLASSIC.items()
    ],
    Case("github-fine-grained", f"token: {s.GITHUB_FINE}", s.GITHUB_FINE, "github-token"),
    Case(
        "github-in-url",
        f"git clone https://{s.GITHUB_CLASSIC['ghp']}@github.com/o/r.git",
        s.GITHUB_CLASSIC["ghp"],
        "github-token",
        ("git clone https://", "@github.com/o/r.git"),
    ),
    # GitLab
    Case(
        "gitlab",
        f"curl --header 'PRIVATE-TOKEN: {s.GITLAB}' https://gitlab.example.com/api/v4/projects",
        s.GITLAB,
        "gitlab-token",
        ("https://gitlab.example.com/api/v4/projects",),
    ),
    Case("gitlab-bare", f"the token {s.GITLAB}.", s.GITLAB, "gitlab-token", ("the token ",)),
    # Slack
    Case("slack-bot", f"SLACK_BOT_TOKEN={s.SLACK_BOT}", s.SLACK_BOT, "slack-token"),
    Case("slack-user", f"xoxp is {s.SLACK_USER}", s.SLACK_USER, "slack-token"),
    *[
        Case(
            f"slack-{kind}",
            f"token={kind}-{s.fake(s.BASE62, 30, 70 + i)}\n",
            f"{kind}-{s.fake(s.BASE62, 30, 70 + i)}",
            "slack-token",
        )
        for i, kind in enumerate(("xoxa", "xoxo", "xoxr", "xoxs"))
    ],
    Case(
        "slack-webhook",
        f'requests.post("https://hooks.slack.com/services/{s.SLACK_WEBHOOK_PATH}", json=msg)',
        s.SLACK_WEBHOOK_PATH,
        "slack-webhook",
        ("https://hooks.slack.com/services/", '", json=msg)'),
    ),
    # Stripe
    Case(
        "stripe-live",
        f"stripe.api_key = '{s.STRIPE_LIVE}'",
        s.STRIPE_LIVE,
        "stripe-key",
        ("stripe.api_key = '", "'"),
    ),
    Case("stripe-test", f"STRIPE_KEY={s.STRIPE_TEST}", s.STRIPE_TEST, "stripe-key"),
    Case("stripe-restricted", f"{s.STRIPE_RESTRICTED}\n", s.STRIPE_RESTRICTED, "stripe-key"),
    # AWS
    Case(
        "aws-key-id",
        f"aws_access_key_id = {s.AWS_KEY_ID}",
        s.AWS_KEY_ID,
        "aws-access-key-id",
        ("aws_access_key_id = ",),
    ),
    Case(
        "aws-session-key-id",
        f'"AccessKeyId": "{s.AWS_SESSION_KEY_ID}",',
        s.AWS_SESSION_KEY_ID,
        "aws-access-key-id",
    ),
    Case(
        "aws-secret-ini",
        f"aws_secret_access_key = {s.AWS_SECRET}\n",
        s.AWS_SECRET,
        "aws-secret-access-key",
        ("aws_secret_access_key = ",),
    ),
    Case(
        "aws-secret-json",
        f'{{"SecretAccessKey": "{s.AWS_SECRET}"}}',
        s.AWS_SECRET,
        "aws-secret-access-key",
        ('{"SecretAccessKey": "', '"}'),
    ),
    Case(
        "aws-secret-env",
        f"export AWS_SECRET_ACCESS_KEY={s.AWS_SECRET}",
        s.AWS_SECRET,
        "aws-secret-access-key",
    ),
    # Google
    Case(
        "google-api-key-url",
        f"https://maps.googleapis.com/maps/api/geocode/json?key={s.GOOGLE_API}&address=x",
        s.GOOGLE_API,
        "google-api-key",
        ("json?key=", "&address=x"),
    ),
    Case("google-oauth", f"Bearer token was {s.GOOGLE_OAUTH}", s.GOOGLE_OAUTH, "google-oauth"),
    # npm, PyPI
    Case(
        "npm",
        f"//registry.npmjs.org/:_authToken={s.NPM}",
        s.NPM,
        "npm-token",
        ("//registry.npmjs.org/:_authToken=",),
    ),
    Case(
        "pypi",
        f"[pypi]\n  username = __token__\n  password = {s.PYPI}\n",
        s.PYPI,
        "pypi-token",
        ("username = __token__",),
    ),
    # assignments
    Case(
        "assign-env",
        f"DB_PASSWORD={s.PASSWORD}\nDEBUG=1",
        s.PASSWORD,
        "assignment",
        ("DB_PASSWORD=", "DEBUG=1"),
    ),
    Case(
        "assign-python", f'api_key = "{s.PASSWORD}"', s.PASSWORD, "assignment", ('api_key = "', '"')
    ),
    Case(
        "assign-yaml",
        f"db:\n  password: {s.PASSWORD}\n  host: db",
        s.PASSWORD,
        "assignment",
        ("password: ", "host: db"),
    ),
    Case(
        "assign-yaml-quoted",
        f"client_secret: '{s.PASSWORD}'",
        s.PASSWORD,
        "assignment",
        ("client_secret: '",),
    ),
    Case(
        "assign-json",
        json.dumps({"access_token": s.PASSWORD, "n": 1}),
        s.PASSWORD,
        "assignment",
        ('"n": 1',),
    ),
    Case(
        "assign-json-escaped",
        json.dumps({"content": json.dumps({"api_key": s.PASSWORD})}),
        s.PASSWORD,
        "assignment",
        ('{"content": "{\\"api_key\\": \\"',),
    ),
    Case("assign-passwd", f"passwd={s.PASSWORD}", s.PASSWORD, "assignment"),
    Case(
        "assign-query",
        f"https://api.example.com/v1?access_token={s.PASSWORD}&page=2",
        s.PASSWORD,
        "assignment",
        ("&page=2",),
    ),
    Case(
        "assign-js",
        f"const config = {{ apiKey: '{s.PASSWORD}' }};",
        s.PASSWORD,
        "assignment",
        (" };",),
    ),
    Case("assign-subscript", f'settings["password"] = "{s.PASSWORD}"', s.PASSWORD, "assignment"),
    # headers
    Case(
        "authorization-bearer",
        f"Authorization: Bearer {s.PASSWORD}",
        s.PASSWORD,
        "authorization",
        ("Authorization: Bearer ",),
    ),
    Case(
        "authorization-basic",
        "Authorization: Basic dXNlcjpodW50ZXIy",
        "dXNlcjpodW50ZXIy",
        "authorization",
        ("Authorization: Basic ",),
    ),
    Case("authorization-token", f"authorization: token {s.PASSWORD}", s.PASSWORD, "authorization"),
    Case(
        "authorization-curl",
        f'curl -H "Authorization: Bearer {s.PASSWORD}" https://api.x.io',
        s.PASSWORD,
        "authorization",
        ('" https://api.x.io',),
    ),
    Case(
        "authorization-json",
        f'{{"headers": {{"Authorization": "Bearer {s.PASSWORD}"}}}}',
        s.PASSWORD,
        "authorization",
    ),
    Case(
        "x-api-key",
        f"curl -H 'x-api-key: {s.PASSWORD}' https://api.anthropic.com",
        s.PASSWORD,
        "api-key-header",
        ("' https://api.anthropic.com",),
    ),
    Case(
        "x-api-key-json-escaped",
        json.dumps(json.dumps({"X-Api-Key": s.PASSWORD})),
        s.PASSWORD,
        "api-key-header",
    ),
    # private keys
    Case("pem", f"key:\n{PEM}\nafter", s.PEM_BODY_LINES[2], "private-key", ("key:\n", "\nafter")),
    Case(
        "pem-json-escaped",
        json.dumps({"key": PEM + "\n"}),
        s.PEM_BODY_LINES[3],
        "private-key",
        ('{"key": "',),
    ),
    Case(
        "pem-unterminated",
        "\n".join(["-----BEGIN OPENSSH PRIVATE KEY-----", *s.PEM_BODY_LINES[:3]]),
        s.PEM_BODY_LINES[1],
        "private-key",
    ),
    # database URLs
    Case(
        "postgres",
        f"DATABASE_URL=postgres://app:{s.DB_PASSWORD}@db.internal:5432/app",
        s.DB_PASSWORD,
        "database-url",
        ("postgres://app:", "@db.internal:5432/app"),
    ),
    Case(
        "postgresql-driver",
        f"postgresql+psycopg2://app:{s.DB_PASSWORD}@localhost/app",
        s.DB_PASSWORD,
        "database-url",
    ),
    Case(
        "mysql", f"mysql://root:{s.DB_PASSWORD}@127.0.0.1:3306/shop", s.DB_PASSWORD, "database-url"
    ),
    Case(
        "mongodb-srv",
        f'"mongodb+srv://admin:{s.DB_PASSWORD}@cluster0.abcde.mongodb.net/test"',
        s.DB_PASSWORD,
        "database-url",
    ),
    Case(
        "redis-no-user",
        f"REDIS_URL=redis://:{s.DB_PASSWORD}@cache:6379/0",
        s.DB_PASSWORD,
        "database-url",
    ),
    Case("amqp", f"amqp://guest:{s.DB_PASSWORD}@rabbit:5672/", s.DB_PASSWORD, "database-url"),
    # JWT, URL userinfo
    Case("jwt", f"id_token={s.JWT}", s.JWT, "jwt"),
    Case("jwt-json-escaped-line-start", json.dumps(f"token follows\n{s.JWT}"), s.JWT, "jwt"),
    Case(
        "url-userinfo",
        f"pip install --index-url https://deploy:{s.PASSWORD}@pypi.example.com/simple pkg",
        s.PASSWORD,
        "url-credentials",
        ("https://deploy:", "@pypi.example.com/simple pkg"),
    ),
    Case(
        "url-userinfo-escaped-slashes",
        f'"https:\\/\\/bot:{s.PASSWORD}@example.org\\/x"',
        s.PASSWORD,
        "url-credentials",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_every_category_is_caught_and_the_context_kept(case: Case) -> None:
    redactor = Redactor()
    out = redactor.redact_text(case.text)
    assert case.secret not in out
    assert marker(case.rule) in out, out
    for fragment in case.kept:
        assert fragment in out, out
    assert redactor.counts.get(case.rule, 0) >= 1


@pytest.mark.parametrize(
    "text",
    [
        "Please enter your password to continue.",
        "The password field is required; a token is a unit of text.",
        "token_count = 5",
        "max_tokens=4096",
        '"usage": {"input_tokens": 123456, "output_tokens": 2345, "cache_read_input_tokens": 98765}',
        "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "id 3f2c1a9e-4b7d-4c2e-9f1a-0b6d8e2c4a7f in the log",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main)",
        "![image](data:image/png;base64,[base64 image omitted])",
        "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 40).decode("ascii"),
        "api_key = os.environ['OPENAI_API_KEY']",
        'password = os.getenv("DB_PASSWORD")',
        "token = tokens[0]",
        "apiKey: process.env.API_KEY,",
        "secret: ${{ secrets.DEPLOY_KEY }}",
        'headers = {"Authorization": f"Bearer {token}"}',
        'curl -H "Authorization: Bearer $TOKEN" https://api.example.com',
        "def get_token(self) -> str: return self._token",
        "The bearer of this letter is my friend.",
        "risk-assessment-framework-for-agents is a slug",
        "ssh://git@github.com/org/repo.git and git@github.com:org/repo.git",
        "http://localhost:8080/path and https://example.com:443/a@b",
        "primary_key = 'id'",
        "SELECT * FROM users WHERE password_hash = ?",
        "You can find your API key in the dashboard.",
        '{"type": "tool_use", "name": "Bash", "input": {"command": "ls -la"}}',
        "tokenizer: cl100k_base",
        '"eos_token": "</s>", "pad_token": "<pad>"',
    ],
)
def test_ordinary_prose_and_code_are_unchanged(text: str) -> None:
    redactor = Redactor()
    assert redactor.redact_text(text) == text
    assert redactor.total == 0


def test_several_secrets_in_one_text_are_each_counted_by_rule() -> None:
    redactor = Redactor()
    text = f"{s.GITHUB_CLASSIC['ghp']} and {s.NPM} and password={s.PASSWORD}"
    out = redactor.redact_text(text)
    assert out == (
        f"{marker('github-token')} and {marker('npm-token')} and password={marker('assignment')}"
    )
    assert redactor.counts == {"github-token": 1, "npm-token": 1, "assignment": 1}


def test_a_secret_assigned_to_a_key_keeps_the_vendor_marker() -> None:
    out = Redactor().redact_text(f'"api_key": "{s.OPENAI_PROJECT}"')
    assert out == f'"api_key": "{marker("openai-key")}"'


@pytest.mark.parametrize(
    "text",
    [
        '"input_token": "NextToken", "output_token": "next_token"',
        '"AmazonRedshiftFederatedAuthorization": "arn:aws:iam::aws:policy/AmazonRedshiftFederatedAuthorization"',
        '"Resource": "arn:aws:secretsmanager:*:*:secret:AmazonDataZone-*"',
        "SERVER_AUTH = '1.3.6.1.5.5.7.3.1'",
        '"token": "other", "secret": false, "password": null',
    ],
)
def test_identifiers_and_versions_under_secret_keys_are_code(text: str) -> None:
    assert Redactor().redact_text(text) == text


def test_a_header_right_after_a_json_escaped_newline_is_caught() -> None:
    text = json.dumps(f"GET / HTTP/1.1\nAuthorization: Basic {s.PASSWORD}x\n")
    assert s.PASSWORD not in Redactor().redact_text(text)


def test_a_bare_bearer_credential_after_an_escaped_newline_is_caught() -> None:
    credential = s.fake(s.URLSAFE, 40, 99)
    out = Redactor().redact_text(json.dumps(f"token follows\nBearer {credential}"))
    assert credential not in out
    assert "Bearer [REDACTED:bearer-token]" in out
