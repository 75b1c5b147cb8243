"""The planted corpus: secrets from :mod:`.formats` placed in realistic prose, code (Python,
JavaScript, shell, ``.env``, YAML, JSON, TOML configs) and logs — as they are, JSON-escaped
inside a JSONL tool-result line, or escaped twice — at line ends and inside URLs.

Every document holds exactly one planted secret, so a miss points at one context. The corpus
is deterministic for a seed. Like :mod:`.formats`, nothing here imports the rules.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass

from . import formats as f

PER_CATEGORY = 240


@dataclass(frozen=True, slots=True)
class Planted:
    """One document and the secret planted in it."""

    category: str
    document: str
    parts: tuple[str, ...]
    """The secret text: caught when none of these appears in the redacted document."""
    context: str
    """Which template and escaping produced the document (for ``--verbose``)."""


@dataclass(frozen=True, slots=True)
class Category:
    name: str
    secret: Callable[[random.Random], str]
    templates: tuple[str, ...]
    names: tuple[str, ...] = ("API_KEY",)
    """Setting names the templates use as ``{env}`` (and lower-cased as ``{key}``)."""


HOSTS = ("api.example.com", "internal.acme.dev", "10.0.4.17:8443", "svc.prod.example.org")

# Where a vendor token ends up: prose, configs, code, logs, URLs, line ends.
TOKEN_TEMPLATES = (
    "I set my key to {s} but the API still answers 401, any idea why?",
    "Here is the token I generated this morning: {s}",
    "{env}={s}",
    'export {env}="{s}"',
    "export {env}={s}",
    'client = Client(api_key="{s}", timeout=30)',
    "os.environ[\"{env}\"] = '{s}'",
    "const apiKey = '{s}';\nfetch(url, {{ headers: {{ 'x-client': 'web' }} }});",
    "credentials:\n  {key}: {s}\n  region: us-east-1",
    '{{"{key}": "{s}", "retries": 3}}',
    "2026-03-14T09:26:53Z DEBUG http.client sending request with key={s} status=200",
    "[worker-3] auth ok for {s} (scopes=read,write)",
    "GET https://{host}/v1/models?api_key={s}&limit=20 HTTP/1.1",
    '```bash\ncurl https://{host}/v1/me -H "Authorization: Bearer {s}"\n```',
    '[auth]\ntoken = "{s}"',
    "docker run -e {env}={s} -p 8080:8080 app:latest",
    "{key} = {s}",
    "| name | value |\n|------|-------|\n| {env} | {s} |",
    "The failing call used `{s}`.",
    "echo $TOKEN\n{s}",
)

CATEGORIES: tuple[Category, ...] = (
    Category("openai", f.openai_key, TOKEN_TEMPLATES, ("OPENAI_API_KEY", "OPENAI_KEY")),
    Category("anthropic", f.anthropic_key, TOKEN_TEMPLATES, ("ANTHROPIC_API_KEY",)),
    Category(
        "huggingface", f.huggingface_token, TOKEN_TEMPLATES, ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
    ),
    Category(
        "github",
        f.github_token,
        (
            *TOKEN_TEMPLATES,
            "git clone https://{s}@github.com/acme/api.git",
            "git remote set-url origin https://x-access-token:{s}@github.com/acme/api.git",
            "gh auth login --with-token <<< {s}",
        ),
        ("GITHUB_TOKEN", "GH_TOKEN"),
    ),
    Category(
        "gitlab",
        f.gitlab_token,
        (
            *TOKEN_TEMPLATES,
            'curl --header "PRIVATE-TOKEN: {s}" https://gitlab.example.com/api/v4/projects',
            "git clone https://oauth2:{s}@gitlab.example.com/acme/api.git",
        ),
        ("GITLAB_TOKEN", "CI_JOB_TOKEN"),
    ),
    Category(
        "slack",
        f.slack_token,
        (
            *TOKEN_TEMPLATES,
            "curl -X POST -H 'Authorization: Bearer {s}' https://slack.com/api/chat.postMessage",
            'app = App(token="{s}", signing_secret=os.environ["SLACK_SIGNING_SECRET"])',
        ),
        ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"),
    ),
    Category(
        "slack-webhook",
        f.slack_webhook_path,
        (
            "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/{s}",
            "requests.post('https://hooks.slack.com/services/{s}', json=payload)",
            "curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"hi\"}}' "
            "https://hooks.slack.com/services/{s}",
            "notify:\n  slack: https://hooks.slack.com/services/{s}\n  on: failure",
            "Posting to https://hooks.slack.com/services/{s} failed with 404",
            '{{"webhook": "https://hooks.slack.com/services/{s}"}}',
        ),
    ),
    Category("stripe", f.stripe_key, TOKEN_TEMPLATES, ("STRIPE_SECRET_KEY", "STRIPE_API_KEY")),
    Category("aws-access-key-id", f.aws_access_key_id, TOKEN_TEMPLATES, ("AWS_ACCESS_KEY_ID",)),
    Category(
        "aws-secret-access-key",
        f.aws_secret_access_key,
        (
            "[default]\naws_access_key_id = AKIAEXAMPLEEXAMPLE12\naws_secret_access_key = {s}\n",
            "export AWS_SECRET_ACCESS_KEY={s}",
            'AWS_SECRET_ACCESS_KEY="{s}"',
            '{{"AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "{s}", "Expiration": "2026-01-01"}}',
            "aws configure set aws_secret_access_key {s}",
            "s3 = boto3.client('s3', aws_secret_access_key='{s}')",
            "  aws_secret_access_key: {s}",
            "secretAccessKey: '{s}',",
        ),
    ),
    Category(
        "google-api-key", f.google_api_key, TOKEN_TEMPLATES, ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    ),
    Category("google-oauth", f.google_oauth_token, TOKEN_TEMPLATES, ("GOOGLE_ACCESS_TOKEN",)),
    Category(
        "npm",
        f.npm_token,
        (*TOKEN_TEMPLATES, "//registry.npmjs.org/:_authToken={s}"),
        ("NPM_TOKEN", "NODE_AUTH_TOKEN"),
    ),
    Category(
        "pypi",
        f.pypi_token,
        (
            *TOKEN_TEMPLATES,
            "[pypi]\n  username = __token__\n  password = {s}",
            "twine upload -u __token__ -p {s} dist/*",
            "uv publish --token {s}",
        ),
        ("PYPI_TOKEN", "UV_PUBLISH_TOKEN", "TWINE_PASSWORD"),
    ),
    Category(
        "assignment",
        f.generated_secret,
        (
            "{env}={s}",
            'export {env}="{s}"',
            "{key}: {s}",
            '{key}: "{s}"',
            '{{"{key}": "{s}", "enabled": true}}',
            '{key} = "{s}"',
            "connect(host='db', {key}='{s}')",
            "const config = {{ {key}: '{s}' }};",
            "{key} = {s}",
            "https://{host}/callback?{key}={s}&state=xyz",
            "environment:\n  - {env}={s}",
            "settings.{key} = '{s}'",
            "Set {env} to {s} in the dashboard",
        ),
        (
            "API_KEY",
            "ACCESS_TOKEN",
            "AUTH_TOKEN",
            "REFRESH_TOKEN",
            "CLIENT_SECRET",
            "SECRET_KEY",
            "DB_PASSWORD",
            "PASSWORD",
            "PASSWD",
            "MYSQL_ROOT_PASSWORD",
            "WEBHOOK_SECRET",
            "APP_SECRET",
            "SIGNING_KEY",
            "ENCRYPTION_KEY",
            "apiKey",
            "clientSecret",
            "accessToken",
        ),
    ),
    Category(
        "authorization",
        lambda rng: _header_value(rng),
        (
            "Authorization: {s}",
            'curl -H "Authorization: {s}" https://{host}/v1/items',
            "curl -s https://{host}/v1/items -H 'authorization: {s}' | jq .",
            'headers = {{"Authorization": "{s}", "Accept": "application/json"}}',
            "> GET /v1/items HTTP/1.1\n> Host: {host}\n> Authorization: {s}\n> Accept: */*",
            '{{"headers": {{"authorization": "{s}"}}}}',
        ),
    ),
    Category(
        "api-key-header",
        lambda rng: _header_value(rng).split(" ", 1)[-1],
        (
            "x-api-key: {s}",
            'curl https://{host}/v1/messages -H "x-api-key: {s}" -H "content-type: application/json"',
            "fetch(url, {{ headers: {{ 'X-API-Key': '{s}' }} }})",
            '{{"headers": {{"x-api-key": "{s}"}}}}',
            "> X-Api-Key: {s}",
        ),
    ),
    Category(
        "private-key",
        lambda rng: "",  # replaced by pem_private_key in _plant
        ("{pem}",),
    ),
    Category(
        "database-url",
        lambda rng: f.url_password(rng),
        (
            "DATABASE_URL={scheme}://{user}:{s}@{dbhost}/{db}",
            'engine = create_engine("{scheme}://{user}:{s}@{dbhost}/{db}")',
            "database:\n  url: {scheme}://{user}:{s}@{dbhost}/{db}\n  pool: 5",
            '{{"db": "{scheme}://{user}:{s}@{dbhost}/{db}"}}',
            "INFO connecting to {scheme}://{user}:{s}@{dbhost}/{db} (attempt 2)",
            "psql {scheme}://{user}:{s}@{dbhost}/{db} -c 'select 1'",
        ),
    ),
    Category(
        "jwt",
        f.jwt,
        (
            "Cookie: session={s}; theme=dark",
            '{{"id_token": "{s}", "token_type": "Bearer"}}',
            "https://{host}/auth/callback?token={s}",
            "decoded token {s}",
            "localStorage.setItem('token', '{s}');",
            "The JWT is {s}",
            "Authorization: Bearer {s}",
        ),
    ),
    Category(
        "url-userinfo",
        lambda rng: f.url_password(rng),
        (
            "https://{user}:{s}@{host}/private/repo.git",
            "git clone https://{user}:{s}@git.example.com/acme/tools.git",
            "pip install --extra-index-url https://{user}:{s}@pypi.corp.example/simple acme-lib",
            "HTTPS_PROXY=http://{user}:{s}@proxy.corp.example:3128",
            "ftp://{user}:{s}@files.example.com/pub/report.csv",
            '{{"registry": "https://{user}:{s}@npm.corp.example/"}}',
            "smtp://{user}:{s}@smtp.example.com:587",
        ),
    ),
)

PROSE = (
    "I'm trying to get the deploy script working again after the migration.",
    "The tests pass locally but CI fails on the integration step.",
    "Can you look at this and tell me what is wrong?",
    "Here is the relevant part of the config.",
    "The service restarted twice during the night and the logs show this.",
    "I ran the command below and got a 403 back.",
    "Let me check the environment the worker runs with.",
    "This should be enough to reproduce it.",
    "The output was truncated, so I only kept the interesting part.",
    "We rotated everything last week, so this one should be current.",
)
LOG_LINES = (
    "2026-03-14T09:26:51Z INFO  starting worker pid=4121",
    "2026-03-14T09:26:52Z DEBUG loaded 14 routes in 3.2 ms",
    "2026-03-14T09:26:54Z WARN  retrying request (attempt 2/5)",
    "2026-03-14T09:26:55Z INFO  GET /healthz 200 1.1ms",
)
USERS = ("admin", "deploy", "ci-bot", "app", "svc_export", "alice")
SCHEMES = (
    "postgres",
    "postgresql",
    "postgresql+psycopg2",
    "mysql",
    "mysql+pymysql",
    "mongodb",
    "mongodb+srv",
    "redis",
    "rediss",
    "amqp",
    "amqps",
)
DB_HOSTS = (
    "db.internal:5432",
    "localhost",
    "127.0.0.1:3306",
    "cluster0.ab1cd.mongodb.net",
    "cache:6379",
)


def _header_value(rng: random.Random) -> str:
    """A credential as sent in a header: a b64token bearer, Basic credentials, a hex token."""
    kind = rng.randrange(4)
    if kind == 0:
        return "Bearer " + f.chars(rng, f.URLSAFE, rng.randint(24, 64))
    if kind == 1:
        return "Basic " + f.basic_credentials(rng)
    if kind == 2:
        return "Token " + f.chars(rng, f.HEX, 40)
    return "Bearer " + f.b64url(bytes(rng.randrange(256) for _ in range(32)))


def _escape(text: str) -> str:
    """``text`` as it sits inside a JSON string (without the quotes)."""
    return json.dumps(text)[1:-1]


def _wrap(rng: random.Random, snippet: str) -> tuple[str, str]:
    """Surround the snippet with prose or log lines and maybe JSON-escape it."""
    style = rng.randrange(3)
    if style == 0:
        body = " ".join(rng.sample(PROSE, 2)) + "\n\n" + snippet + "\n\n" + rng.choice(PROSE)
    elif style == 1:
        body = "\n".join([*rng.sample(LOG_LINES, 2), snippet, rng.choice(LOG_LINES)])
    else:
        body = rng.choice(PROSE) + "\n```\n" + snippet + "\n```"
    escaping = rng.choices(("plain", "json", "json-twice"), weights=(6, 3, 1))[0]
    if escaping == "json":
        line = {"type": "tool_result", "tool_use_id": "toolu_01", "content": body}
        return json.dumps(line), escaping
    if escaping == "json-twice":
        inner = json.dumps({"role": "tool", "content": body})
        return json.dumps({"type": "message", "payload": inner}), escaping
    return body, escaping


def _plant(rng: random.Random, category: Category, index: int) -> Planted:
    template = category.templates[index % len(category.templates)]
    env = rng.choice(category.names)
    values = {
        "env": env,
        "key": env.lower(),
        "host": rng.choice(HOSTS),
        "user": rng.choice(USERS),
        "scheme": rng.choice(SCHEMES),
        "dbhost": rng.choice(DB_HOSTS),
        "db": rng.choice(("app", "shop", "analytics")),
    }
    if category.name == "private-key":
        pem, lines = f.pem_private_key(rng)
        shape = index % 5
        if shape == 1:  # a Python or .env string with \n escapes
            snippet = 'PRIVATE_KEY="' + pem.replace("\n", "\\n") + '\\n"'
        elif shape == 2:  # a YAML block scalar
            snippet = "tls:\n  key: |\n" + "\n".join("    " + line for line in pem.split("\n"))
        elif shape == 3:  # a truncated view: head -n 6
            snippet = "$ head -n 6 deploy_key\n" + "\n".join(pem.split("\n")[:6])
            lines = lines[:5]
        elif shape == 4:  # a service-account JSON
            snippet = json.dumps({"type": "service_account", "private_key": pem + "\n"}, indent=2)
        else:
            snippet = "$ cat ~/.ssh/id_rsa\n" + pem
        document, escaping = _wrap(rng, snippet)
        return Planted(category.name, document, tuple(lines), f"pem-shape-{shape}/{escaping}")
    secret = category.secret(rng)
    snippet = template.format(s=secret, **values)
    document, escaping = _wrap(rng, snippet)
    # A header keeps its scheme (``Bearer``): the secret is the credential after it.
    part = secret.split(" ", 1)[-1] if category.name == "authorization" else secret
    return Planted(
        category.name, document, (part,), f"template-{index % len(category.templates)}/{escaping}"
    )


def planted_corpus(seed: int = 1, per_category: int = PER_CATEGORY) -> list[Planted]:
    """``per_category`` documents for every category, deterministic for ``seed``."""
    rng = random.Random(seed)
    return [
        _plant(rng, category, index) for category in CATEGORIES for index in range(per_category)
    ]


def caught(planted: Planted, redacted: str) -> bool:
    """True when no part of the secret is left in the redacted document, as written or
    JSON-escaped once or twice."""
    for part in planted.parts:
        once = _escape(part)
        if part in redacted or once in redacted or _escape(once) in redacted:
            return False
    return True
