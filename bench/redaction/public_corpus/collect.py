# /// script
# requires-python = ">=3.11"
# dependencies = ["google-re2", "detect-secrets==1.5.0"]
# ///
"""How ``secrets.jsonl`` and ``clean.jsonl`` were built (run once; the bench reads the files).

    uv run --no-project --with google-re2 --with detect-secrets==1.5.0 \\
        python bench/redaction/public_corpus/collect.py \\
        --gitleaks ~/src/gitleaks --detect-secrets ~/src/detect-secrets \\
        --trufflehog ~/src/trufflehog

Each source is a clone (or bare git directory) of the project; files are read at ``HEAD``,
whose commit is recorded with every item. Only *test data* is taken — the strings the
projects' own tests say must be found — never their detection code: gitleaks' rules are used
only to *label* which part of one of its own test strings is the secret (its ``secretGroup``),
and detect-secrets' plugins likewise for its test strings. Where gitleaks' test generates a
value at run time (``secrets.NewSecret(<format>)``), a value is generated here to the same
published format with a fixed seed, and the item says so.

Nothing here imports ``hermes_core``: the corpus does not know the rules it measures.
"""

from __future__ import annotations

import argparse
import ast
import base64
import importlib
import json
import random
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _goeval import Text, generate, run_statements, tokenize  # noqa: E402

PROJECT = HERE.parents[2]
SEED = 20260901

LICENCES = {
    "gitleaks/gitleaks": "MIT",
    "Yelp/detect-secrets": "Apache-2.0",
    "trufflesecurity/trufflehog": "AGPL-3.0",
    "cure53/DOMPurify": "Apache-2.0 OR MPL-2.0",
    "hermes-sessions": "this project",
}

# gitleaks rules whose "secret" is an identifier, not a credential: left out.
NOT_SECRETS = re.compile(r"-client-id$|-access-id$|-api-id$")
# gitleaks rules where the value is only recognisable in its context (a curl flag, a URL):
# no bare variant is planted for them.
CONTEXT_ONLY = {
    "curl-auth-header",
    "curl-auth-user",
    "sidekiq-sensitive-url",
    "gitlab-session-cookie",
    "square-secret",
}
MISTYPED_FORMATS = {r"sq0csp-[0-9A-Za-z\\-_]{43}": r"sq0csp-[\w-]{43}"}
"""Test formats that allow more than the rule they test: ``\\-_`` is the range ``\\``…``_``,
so the test's values may hold ``\\`` and ``]``, which the rule's own regex (the value here)
rejects. Values are generated to the rule's regex instead."""
WHOLE_MATCH = {"microsoft-teams-webhook"}
"""Rules whose only groups repeat a piece of the URL (``([a-z0-9]{4}-){3}``)."""
DROPPED: list[str] = []
"""Generated values left out because the project's own rule does not match them."""
WEBHOOK_PATH = re.compile(
    r"^(?:https?://)?(?:hooks\.slack\.com/(?:services|workflows|triggers)/"
    r"|[A-Za-z0-9-]{1,60}\.webhook\.office\.com/webhookb2/)"
)
"""A webhook URL's host and fixed path, which say what it is but are not secret: where a rule
labels the whole URL, the secret is what follows them (as for the rules' generated values)."""
SEMI_GENERIC = r"{0,50}?(?:"
"""What gitleaks' rules that need the vendor's name in the key (``heroku_key = …``) hold."""

# Everyday contexts for a generated value. ``keyed``: as the projects' tests place values, a
# key named after the vendor (``{i}``); ``bare``: the value alone, for formats that identify
# themselves (a documented prefix).
KEYED = (
    '{i}_token = "{s}"',
    "{I}_TOKEN={s}",
    "{i}Token: '{s}'",
    '{{"{i}_token": "{s}"}}',
    '{i}Token := "{s}"',
)
BARE = (
    "{s}",
    "here is the new one: {s}",
    "- {s}",
    "copied {s} from the dashboard",
)

# Kinds of detect-secrets' and trufflehog's tests, named as gitleaks names the same format.
DETECT_SECRETS_KINDS = {
    "ArtifactoryDetector": "artifactory-api-key",
    "AzureStorageKeyDetector": "azure-storage-account-key",
    "BasicAuthDetector": "url-basic-auth",
    "DiscordBotTokenDetector": "discord-bot-token",
    "GitHubTokenDetector": "github-pat",
    "GitLabTokenDetector": "gitlab-token",
    "JwtTokenDetector": "jwt",
    "MailchimpDetector": "mailchimp-api-key",
    "NpmDetector": "npm-access-token",
    "OpenAIDetector": "openai-api-key",
    "PypiTokenDetector": "pypi-upload-token",
    "SendGridDetector": "sendgrid-api-token",
    "StripeDetector": "stripe-access-token",
    "TelegramBotTokenDetector": "telegram-bot-api-token",
    "TwilioKeyDetector": "twilio-api-key",
}
TRUFFLEHOG_KINDS = {
    "anthropic": "anthropic-api-key",
    "buildkite": "buildkite-token",
    "circleci": "circleci-token",
    "deepseek": "deepseek-api-key",
    "digitaloceantoken": "digitalocean-legacy-token",
    "digitaloceanv2": "digitalocean-pat",
    "doppler": "doppler-api-token",
    "elevenlabs": "elevenlabs-api-key",
    "figmapersonalaccesstoken": "figma-token",
    "groq": "groq-api-key",
    "heroku": "heroku-api-key",
    "huggingface": "huggingface-access-token",
    "langsmith": "langsmith-api-key",
    "linearapi": "linear-api-key",
    "mailchimp": "mailchimp-api-key",
    "ngrok": "ngrok-authtoken",
    "openai": "openai-api-key",
    "openaiadmin": "openai-admin-key",
    "openrouter": "openrouter-api-key",
    "pagerdutyapikey": "pagerduty-api-key",
    "pinecone": "pinecone-api-key",
    "postman": "postman-api-token",
    "postmark": "postmark-server-token",
    "railwayapp": "railway-api-token",
    "replicate": "replicate-api-token",
    "sendgrid": "sendgrid-api-token",
    "sourcegraph": "sourcegraph-access-token",
    "supabasetoken": "supabase-token",
    "terraformcloudpersonaltoken": "hashicorp-tf-api-token",
    "vercel": "vercel-token",
    "xai": "xai-api-key",
}


def git_show(repo: Path, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"HEAD:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def git_lines(repo: Path, *args: str) -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout
    return out.splitlines()


def head(repo: Path) -> str:
    return git_lines(repo, "rev-parse", "HEAD")[0]


def b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def is_placeholder(secret: str) -> bool:
    """``AP6xxxxxxxxxx``, ``npm_xxxxxxxx``: a test's placeholder, not a value of the format."""
    return bool(re.search(r"(?i)x{8,}", secret))


class Corpus:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.seen: set[tuple[str, str]] = set()

    def add(
        self,
        kind: str,
        text: str,
        secrets: list[str],
        *,
        repo: str,
        commit: str,
        path: str,
        origin: str,
        placement: str,
    ) -> None:
        secrets = sorted({s for s in secrets if s}, key=lambda s: (-len(s), s))
        if not secrets or any(is_placeholder(s) for s in secrets):
            return
        if (kind, text) in self.seen:
            return
        self.seen.add((kind, text))
        number = sum(1 for item in self.items if item["kind"] == kind) + 1
        self.items.append(
            {
                "id": f"{kind}/{number}",
                "kind": kind,
                "placement": placement,
                "repo": repo,
                "commit": commit,
                "path": path,
                "licence": LICENCES[repo],
                "origin": origin,
                "text_b64": b64(text),
                "secrets_b64": [b64(s) for s in secrets],
            }
        )


# ----------------------------------------------------------------------------- gitleaks


def _go_functions(tokens: list[tuple[str, str]]) -> tuple[list[Any], list[tuple[str, list[Any]]]]:
    top: list[Any] = []
    funcs: list[tuple[str, list[Any]]] = []
    i = 0
    while i < len(tokens):
        if tokens[i][1] != "func":
            top.append(tokens[i])
            i += 1
            continue
        name = tokens[i + 1][1]
        j = i
        while tokens[j][1] != "{":
            j += 1
        depth, k = 0, j
        while True:
            if tokens[k] == ("op", "{"):
                depth += 1
            elif tokens[k] == ("op", "}"):
                depth -= 1
                if depth == 0:
                    break
            k += 1
        funcs.append((name, tokens[j + 1 : k]))
        i = k + 1
    return top, funcs


def _label(re2: Any, rule: dict[str, Any], text: str) -> list[str]:
    """The secrets in one of a rule's own test strings, as the rule's ``secretGroup`` says
    (without one, as gitleaks reads a match: its first group that matched, or the whole match
    for rules whose groups only repeat a piece, see ``WHOLE_MATCH``)."""
    group = rule.get("secretGroup", 0)
    found = []
    for match in re2.compile(rule["regex"]).finditer(text):
        if rule["id"] in WHOLE_MATCH:
            secret = match.group(0)
        else:
            number = group or (1 if match.lastindex else 0)
            # Rules with alternatives hold the secret in whichever group matched.
            secret = match.group(number) or match.group(match.lastindex or 0)
        found.append(WEBHOOK_PATH.sub("", secret))
    return found


def collect_gitleaks(repo: Path, corpus: Corpus) -> None:
    import re2  # type: ignore[import-not-found]

    commit = head(repo)
    rules = {r["id"]: r for r in tomllib.loads(git_show(repo, "config/gitleaks.toml"))["rules"]}
    rng = random.Random(SEED)
    files = [
        line
        for line in git_lines(repo, "ls-tree", "--name-only", "HEAD", "cmd/generate/config/rules/")
        if line.endswith(".go")
    ]
    for path in sorted(files):
        tokens = tokenize(git_show(repo, path))
        top, funcs = _go_functions(tokens)
        env: dict[str, Any] = {}
        log: list[str] = []
        run_statements(top, env, rng, log)
        for _name, body in funcs:
            ids = [
                c[1][1:-1]
                for a, b, c in zip(body, body[1:], body[2:], strict=False)
                if a[1] == "RuleID" and b[1] == ":" and c[0] == "str"
            ]
            if not ids or NOT_SECRETS.search(ids[0]):
                continue
            kind = ids[0]
            local = dict(env)
            run_statements(body, local, rng, log)
            tps = local.get("tps")
            if isinstance(tps, Text):
                tps = [tps]
            if not isinstance(tps, list):
                continue
            rule = rules.get(kind)
            semi = rule is None or SEMI_GENERIC in rule["regex"]
            for item in tps:
                if not isinstance(item, Text):
                    continue
                if item.secrets and not item.generated_from and rule is not None:
                    # A literal value the test places in contexts of its own: it may itself be
                    # a whole line (``adobeClient := "p8e-…"``); the rule says which part is
                    # the secret.
                    labelled = _label(re2, rule, item.text)
                    if labelled:
                        item = Text(labelled[0], labelled, [], item.context_identifier)
                if item.secrets and not item.context_identifier:
                    # A whole test line with a generated part (``creds = `` + a value): kept
                    # as the test writes it; the generated part is the secret.
                    # The rule's own match is the whole token; the generated parts alone
                    # can be single characters (``xoxa-`` + ``3`` + ``-`` + …).
                    labelled = _label(re2, rule, item.text) if rule is not None else []
                    corpus.add(
                        kind,
                        item.text,
                        labelled or item.secrets,
                        repo="gitleaks/gitleaks",
                        commit=commit,
                        path=path,
                        origin="test string (true positive) with a value generated to its "
                        f"format {' + '.join(item.generated_from)}",
                        placement="as-found",
                    )
                    continue
                if item.secrets:  # generated at run time by gitleaks' test: generate it here
                    fmt = " + ".join(item.generated_from)
                    how = (
                        f"generated to the rule's test format {fmt}"
                        if fmt
                        else "test value, placed in a context of ours as the rule's test does"
                    )
                    value = item.text  # the whole token: its literal prefix and generated parts
                    if len(item.generated_from) == 1 and item.generated_from[0] in MISTYPED_FORMATS:
                        fmt = MISTYPED_FORMATS[item.generated_from[0]]
                        value = generate(fmt, random.Random(f"{SEED}-{kind}"))
                        how = f"generated to the rule's regex {fmt} (its test's format is mistyped)"
                    ident = item.context_identifier or kind.split("-")[0]
                    keyed = rng.choice(KEYED).format(i=ident, I=ident.upper(), s=value)
                    bare = None
                    if not semi and kind not in CONTEXT_ONLY:
                        bare = rng.choice(BARE).format(s=value)
                    if rule is not None and not _label(re2, rule, keyed):
                        # The project's own rule rejects the value its test format generates
                        # (``square-secret``'s ``[0-9A-Za-z\\-_]`` spans ``\``…``_``): not a
                        # value of the format.
                        DROPPED.append(f"{kind}: {value}")
                        continue
                    corpus.add(
                        kind,
                        keyed,
                        [value],
                        repo="gitleaks/gitleaks",
                        commit=commit,
                        path=path,
                        origin=how,
                        placement="keyed",
                    )
                    if bare is not None:
                        corpus.add(
                            kind,
                            bare,
                            [value],
                            repo="gitleaks/gitleaks",
                            commit=commit,
                            path=path,
                            origin=how,
                            placement="bare",
                        )
                    continue
                if rule is None:
                    continue
                corpus.add(
                    kind,
                    item.text,
                    _label(re2, rule, item.text),
                    repo="gitleaks/gitleaks",
                    commit=commit,
                    path=path,
                    origin="test string (true positive)",
                    placement="as-found",
                )


# ----------------------------------------------------------------------------- detect-secrets


def _token_run(line: str, value: str) -> str:
    """The secret detect-secrets reports, without a leading ``=`` or blank; where it reports
    only a prefix (``ghp`` for a GitHub token), the run of token characters holding it."""
    start = line.find(value)
    if start < 0 or len(value) >= 8:
        return value.strip(" =:\"'")
    allowed = re.compile(r"[A-Za-z0-9_\-.+/=~]")
    end = start + len(value)
    while start > 0 and allowed.match(line[start - 1]) and line[start - 1] != "=":
        start -= 1
    while end < len(line) and allowed.match(line[end]):
        end += 1
    return line[start:end].strip(" =:\"'")


def collect_detect_secrets(repo: Path, corpus: Corpus) -> None:
    commit = head(repo)
    files = git_lines(repo, "ls-tree", "--name-only", "HEAD", "tests/plugins/")
    for path in sorted(files):
        tree = ast.parse(git_show(repo, path))
        plugin_class = None
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "detect_secrets.plugins."
            ):
                name = node.names[0].name
                if name in DETECT_SECRETS_KINDS:
                    plugin_class = getattr(importlib.import_module(node.module or ""), name)
        if plugin_class is None:
            continue
        plugin = plugin_class()
        kind = DETECT_SECRETS_KINDS[plugin_class.__name__]
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "parametrize"
                and len(node.args) >= 2
            ):
                continue
            try:
                cases = ast.literal_eval(node.args[1])
            except ValueError:
                continue
            for case in cases:
                line = case if isinstance(case, str) else None
                if isinstance(case, tuple) and case and isinstance(case[0], str):
                    line = case[0] if True in case[1:] else None
                if line is None:
                    continue
                found = plugin.analyze_line(filename="mock.txt", line=line, line_number=1)
                secrets = [_token_run(line, s.secret_value) for s in found if s.secret_value]
                corpus.add(
                    kind,
                    line,
                    secrets,
                    repo="Yelp/detect-secrets",
                    commit=commit,
                    path=path,
                    origin=f"test string (should_flag) of {plugin_class.__name__}",
                    placement="as-found",
                )


# ----------------------------------------------------------------------------- trufflehog


def collect_trufflehog(repo: Path, corpus: Corpus) -> None:
    from _goeval import Evaluator

    commit = head(repo)
    rng = random.Random(SEED)
    tests = [
        line
        for line in git_lines(repo, "ls-tree", "-r", "--name-only", "HEAD", "pkg/detectors/")
        if line.endswith("_test.go") and "integration" not in line
    ]
    for path in tests:
        detector = path.split("/")[2]
        if detector not in TRUFFLEHOG_KINDS:
            continue
        tokens = tokenize(git_show(repo, path))
        env: dict[str, Any] = {}
        log: list[str] = []
        k = 0
        while k < len(tokens):  # top-level var/const declarations
            if tokens[k][1] in ("var", "const") and (k == 0 or tokens[k - 1][0] == "nl"):
                if tokens[k + 1][1] == "(":
                    depth, m = 0, k + 1
                    while True:
                        if tokens[m] == ("op", "("):
                            depth += 1
                        elif tokens[m] == ("op", ")"):
                            depth -= 1
                            if depth == 0:
                                break
                        m += 1
                    run_statements(tokens[k + 2 : m], env, rng, log)
                    k = m + 1
                    continue
                m = k
                while m < len(tokens) and tokens[m][0] != "nl":
                    m += 1
                run_statements(tokens[k + 1 : m], env, rng, log)
                k = m
                continue
            k += 1
        name = ""
        for j, tok in enumerate(tokens):
            if tok[1] == "name" and tokens[j + 1][1] == ":" and tokens[j + 2][0] == "str":
                name = tokens[j + 2][1]
            if not (tok[1] == "input" and tokens[j + 1][1] == ":"):
                continue
            if "duplicate" in name.lower() or "invalid" in name.lower():
                continue
            evaluator = Evaluator(tokens[j + 2 :], env, rng)
            try:
                text = evaluator.expr()
            except Exception:
                continue
            m = j + 2 + evaluator.i
            while m < len(tokens) - 1 and not (tokens[m][1] == "want" and tokens[m + 1][1] == ":"):
                if tokens[m][1] == "input":
                    break
                m += 1
            if tokens[m][1] != "want":
                continue
            try:
                want = Evaluator(tokens[m + 2 :], env, rng).expr()
            except Exception:
                continue
            wanted = [want] if isinstance(want, Text) else want
            if not isinstance(text, Text) or not isinstance(wanted, list):
                continue
            values = [w.text for w in wanted if isinstance(w, Text) and w.text in text.text]
            corpus.add(
                TRUFFLEHOG_KINDS[detector],
                text.text,
                values,
                repo="trufflesecurity/trufflehog",
                commit=commit,
                path=path,
                origin=f"test input {name} of detector {detector}",
                placement="as-found",
            )


# ----------------------------------------------------------------------------- formats


def collect_formats(corpus: Corpus) -> None:
    """Values the projects' test data lacks, generated to a published format (the issue's
    examples): GitHub's long installation tokens and two-segment JWTs."""
    rng = random.Random(SEED + 1)
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    for index in range(4):
        value = "ghs_" + "".join(rng.choice(alnum) for _ in range(118))
        text = (BARE[index % len(BARE)]).format(s=value)
        corpus.add(
            "github-app-token",
            text,
            [value],
            repo="hermes-sessions",
            commit="",
            path="",
            origin="generated: ghs_ + 118 base62 (GitHub's longer installation-token format)",
            placement="bare",
        )
    for index in range(3):
        header = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
        claims = json.dumps({"sub": str(rng.randrange(10**9)), "iat": 1700000000 + index})
        body = base64.urlsafe_b64encode(claims.encode()).rstrip(b"=").decode()
        value = f"{header}.{body}" + ("." if index == 2 else "")
        text = ("token: {s}", "{s}", "Cookie: session={s}")[index].format(s=value)
        corpus.add(
            "jwt",
            text,
            [value],
            repo="hermes-sessions",
            commit="",
            path="",
            origin="generated: RFC 7519 unsecured JWT (two segments, alg none)",
            placement="bare",
        )


# ----------------------------------------------------------------------------- clean controls

# Integrity hashes of an npm lock file (data, not code): cure53/DOMPurify package-lock.json.
DOMPURIFY_COMMIT = "00944d3c237a6120f302aace62040380c5773008"
NPM_INTEGRITY = (
    (
        "@babel/code-frame/-/code-frame-7.12.13.tgz",
        "sha512-HV1Cm0Q3ZrpCR93tkWOYiuYIgLxZXZFVG2VgK+MBWjUqZTundupbfx2aXarXuw5Ko5aMcjtJgbSs4vUGBS5v6g==",
    ),
    (
        "@babel/compat-data/-/compat-data-7.14.0.tgz",
        "sha512-vu9V3uMM/1o5Hl5OekMUowo3FqXLJSw+s+66nt0fSWVWTtmosdzn45JHOB3cPtZoe6CTBDzvSw0RdOY85Q37+Q==",
    ),
    (
        "@babel/core/-/core-7.14.0.tgz",
        "sha512-8YqpRig5NmIHlMLw09zMlPTvUVMILjqCOtVgu+TVNWEBvy9b5I3RRyhqnrV4hjgEK7n8P9OqvkWJAFmEL6Wwfw==",
    ),
    (
        "debug/-/debug-4.3.1.tgz",
        "sha512-doEwdvm4PCeK4K3RQN2ZC2BYUBaxwLARCqZmMjtF8a51J2Rb0xpVloFRnCODwqjpwnAoao4pelN8l3RJdv3gRQ==",
    ),
    (
        "json5/-/json5-2.2.0.tgz",
        "sha512-f+8cldu7X/y7RAJurMEJmdoKXGB/X550w2Nr3tTbezL6RwEE/iMcm+tZnXeoZtKuOq6ft8+CqzEkrIgx1fPoQA==",
    ),
    (
        "ms/-/ms-2.1.2.tgz",
        "sha512-sGkPx+VjMtmA6MX27oA4FBFELFCZZ4S4XqeGOXCv68tT+jb3vk/RyaKWP0PTKyWtmLSM0b+adUTEvbs1PEaH2w==",
    ),
    (
        "semver/-/semver-6.3.0.tgz",
        "sha512-b39TBaTSfV6yBrapU89p5fKekE2m/NwnDocOVruQFS1/veMgdzuPcnOM34M6CwxW8jH/lxEa5rBoDeUwu5HHTw==",
    ),
    (
        "@babel/eslint-parser/-/eslint-parser-7.13.14.tgz",
        "sha512-I0HweR36D73Ibn/FfrRDMKlMqJHFwidIUgYdMpH+aXYuQC+waq59YaJ6t9e9N36axJ82v1jR041wwqDrDXEwRA==",
    ),
    (
        "eslint-visitor-keys/-/eslint-visitor-keys-1.3.0.tgz",
        "sha512-6J72N8UNa462wa/KFODt/PJ3IU60SDpC3QXC1Hjc1BXXpfL2C9R5+AU7jhe0F6GREqVMh4Juu+NY7xn+6dipUQ==",
    ),
    (
        "@babel/generator/-/generator-7.14.1.tgz",
        "sha512-TMGhsXMXCP/O1WtQmZjpEYDhCYC9vFhayWZPJSZCGkPJgUqX0rF0wwtrYvnzVxIjcF80tkUertXVk5cwqi5cAQ==",
    ),
    (
        "jsesc/-/jsesc-2.5.2.tgz",
        "sha512-OYu7XEzjkCQ3C5Ps3QIZsQfNpqoJyZZA99wd9aWd05NCtC5pWOkShK2mkL6HXQR6/Cy2lbNdPlZBpuQHXE63gA==",
    ),
    (
        "@babel/helper-compilation-targets/-/helper-compilation-targets-7.13.16.tgz",
        "sha512-3gmkYIrpqsLlieFwjkGgLaSHmhnvlAYzZLlYVjlW+QwI+1zE17kGxuJGmIqDQdYp56XdmGeD+Bswx0UTyG18xA==",
    ),
    (
        "browserslist/-/browserslist-4.16.6.tgz",
        "sha512-Wspk/PqO+4W9qp5iUTJsa1B/QrYn1keNCcEP5OvP7WBwT4KaDly0uONYmC6Xa3Z5IqnUgS0KcgLYu1l74x0ZXQ==",
    ),
    (
        "@babel/helper-function-name/-/helper-function-name-7.12.13.tgz",
        "sha512-TZvmPn0UOqmvi5G4vvw0qZTpVptGkB1GL61R6lKvrSdIxGm5Pky7Q3fpKiIkQCAtRCBUwB0PaThlx9vebCDSwA==",
    ),
    (
        "@babel/helper-get-function-arity/-/helper-get-function-arity-7.12.13.tgz",
        "sha512-DjEVzQNz5LICkzN0REdpD5prGoidvbdYk1BVgRUOINaWJP2t6avB27X1guXK1kXNrX0WMfsrm1A/ZBthYuIMQg==",
    ),
    (
        "@babel/helper-member-expression-to-functions/-/helper-member-expression-to-functions-7.13.12.tgz",
        "sha512-48ql1CLL59aKbU94Y88Xgb2VFy7a95ykGRbJJaaVv+LX5U8wFpLfiGXJJGUozsmA1oEh/o5Bp60Voq7ACyA/Sw==",
    ),
    (
        "@babel/helper-module-imports/-/helper-module-imports-7.13.12.tgz",
        "sha512-4cVvR2/1B693IuOvSI20xqqa/+bl7lqAMR59R4iu39R9aOX8/JoYY1sFaNvUMyMBGnHdwvJgUrzNLoUZxXypxA==",
    ),
    (
        "@babel/helper-module-transforms/-/helper-module-transforms-7.14.0.tgz",
        "sha512-L40t9bxIuGOfpIGA3HNkJhU9qYrf4y5A5LUSw7rGMSn+pcG8dfJ0g6Zval6YJGd2nEjI7oP00fRdnhLKndx6bw==",
    ),
    (
        "@babel/helper-plugin-utils/-/helper-plugin-utils-7.13.0.tgz",
        "sha512-ZPafIPSwzUlAoWT8DKs1W2VyF2gOWthGd5NGFMsBcMMol+ZhK+EQY/e6V96poa6PA/Bh+C9plWN0hXO1uB8AfQ==",
    ),
    (
        "@babel/helpers/-/helpers-7.14.0.tgz",
        "sha512-+ufuXprtQ1D1iZTO/K9+EBRn+qPWMJjZSw/S0KlFrxCw4tkrzv9grgpDHkY9MeQTjTY8i2sp7Jep8DfU6tN9Mg==",
    ),
)


class Clean:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.seen: set[str] = set()

    def add(self, group: str, text: str, *, repo: str, commit: str, path: str) -> None:
        if text in self.seen or not text.strip():
            return
        self.seen.add(text)
        number = sum(1 for item in self.items if item["group"] == group) + 1
        self.items.append(
            {
                "id": f"{group}/{number}",
                "group": group,
                "repo": repo,
                "commit": commit,
                "path": path,
                "licence": LICENCES[repo],
                "text": text,
            }
        )


def _minify(source: str) -> str:
    """A whitespace-and-comment minifier for this project's own page.js/page.css."""
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    source = re.sub(r"(?m)^\s*//.*$", "", source)
    source = re.sub(r"\s*\n\s*", "", source)
    return re.sub(r"\s*([{}();,=:+<>|&?])\s*", r"\1", source)


def collect_clean(repos: dict[str, Path], secrets: set[str]) -> Clean:
    clean = Clean()
    rng = random.Random(SEED + 2)
    names = {"gitleaks/gitleaks": "gitleaks", "Yelp/detect-secrets": "detect-secrets"}
    names["trufflesecurity/trufflehog"] = "trufflehog"
    for repo_name, repo in repos.items():
        commit = head(repo)
        # git SHAs in the places they turn up
        shas = git_lines(repo, "log", "--format=%H", "-n", "25")
        for index, sha in enumerate(shas):
            template = (
                "commit {sha}",
                '{{"sha": "{sha}", "status": "completed"}}',
                "fixed in {short} ({sha})",
                "git checkout {sha} -- go.mod",
                "HEAD is now at {short} Merge pull request",
            )[index % 5]
            clean.add(
                "git-sha",
                template.format(sha=sha, short=sha[:7]),
                repo=repo_name,
                commit=commit,
                path="(git log)",
            )
        # file paths
        paths = [
            p
            for p in git_lines(repo, "ls-tree", "-r", "--name-only", "HEAD")
            if len(p) > 40 and re.search(r"(?i)token|secret|key|auth|pass", p)
        ]
        for p in rng.sample(paths, min(15, len(paths))):
            clean.add("file-path", f"M  {p}", repo=repo_name, commit=commit, path="(ls-tree)")
        # URLs of the README
        readme = git_show(repo, "README.md")
        for url in sorted(set(re.findall(r"https?://[^\s)\"'<>\]`]+", readme)))[:20]:
            clean.add(
                "url", f"see {url} for details", repo=repo_name, commit=commit, path="README.md"
            )
        # UUIDs that are not test secrets
        uuids: list[str] = []
        candidates = [
            p
            for p in git_lines(repo, "ls-tree", "-r", "--name-only", "HEAD")
            if p.endswith((".go", ".py", ".json", ".md"))
        ]
        for path in rng.sample(candidates, min(400, len(candidates))):
            for found in re.findall(
                r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
                git_show(repo, path),
            ):
                if found not in secrets and found not in uuids:
                    uuids.append(found)
        for index, uuid in enumerate(uuids[:15]):
            template = (
                '{{"session_id": "{u}", "role": "user"}}',
                "request-id: {u}",
                "trace_id={u} span=4",
                "uuid: {u}",
                "Created run {u}.",
            )[index % 5]
            clean.add(
                "uuid", template.format(u=uuid), repo=repo_name, commit=commit, path="(files)"
            )
        # long identifiers holding secret words
        idents: list[str] = []
        sources = [
            p
            for p in git_lines(repo, "ls-tree", "-r", "--name-only", "HEAD")
            if p.endswith((".go", ".py"))
        ]
        for path in rng.sample(sources, min(200, len(sources))):
            for found in re.findall(r"\b[A-Za-z_][A-Za-z0-9_]{24,80}\b", git_show(repo, path)):
                if re.search(r"(?i)token|secret|key|password|auth", found) and found not in idents:
                    idents.append(found)
        for index, ident in enumerate(rng.sample(idents, min(20, len(idents)))):
            template = ("calls {x}() first", "`{x}`", "{x}", "see {x} in the scanner")[index % 4]
            clean.add(
                "long-identifier",
                template.format(x=ident),
                repo=repo_name,
                commit=commit,
                path="(files)",
            )
        # go.sum hashes
        if repo_name != "Yelp/detect-secrets":
            lines = git_show(repo, "go.sum").splitlines()
            for line in rng.sample(lines, 20):
                clean.add("lock-hash", line, repo=repo_name, commit=commit, path="go.sum")
        else:
            for line in git_show(repo, "requirements-dev.txt").splitlines()[:10]:
                clean.add(
                    "lock-hash", line, repo=repo_name, commit=commit, path="requirements-dev.txt"
                )
    # base64 images: the two PNGs embedded in trufflehog's README logo strip
    truffle = repos["trufflesecurity/trufflehog"]
    svg = git_show(truffle, "assets/scanning_logos.svg")
    images = re.findall(r"data:image/png;base64,[A-Za-z0-9+/=]+", svg)
    for index, image in enumerate(images):
        clean.add(
            "base64-image",
            f'<img alt="logo" src="{image}">' if index % 2 else f"![logo]({image})",
            repo="trufflesecurity/trufflehog",
            commit=head(truffle),
            path="assets/scanning_logos.svg",
        )
    big = max(images, key=len)
    prefix = "data:image/png;base64,"
    for index in range(8):
        start = len(prefix) + 4 * rng.randrange((len(big) - len(prefix) - 6000) // 4)
        chunk = big[start : start + 4000]
        clean.add(
            "base64-image",
            ('{{"type": "image", "data": "{c}"}}', "{c}", "image_url: data:image/png;base64,{c}")[
                index % 3
            ].format(c=chunk),
            repo="trufflesecurity/trufflehog",
            commit=head(truffle),
            path="assets/scanning_logos.svg (a 4,000-character slice of the base64 PNG)",
        )
    # npm lock-file integrity hashes
    for tarball, integrity in NPM_INTEGRITY:
        line = f'"resolved": "https://registry.npmjs.org/{tarball}",\n"integrity": "{integrity}",'
        clean.add(
            "lock-hash",
            line,
            repo="cure53/DOMPurify",
            commit=DOMPURIFY_COMMIT,
            path="package-lock.json",
        )
    # this project's own lock file, code, prose and minified page script
    ours = "hermes-sessions"
    lock = (PROJECT / "uv.lock").read_text(encoding="utf-8")
    for line in rng.sample(re.findall(r"^.*sha256:[0-9a-f]{64}.*$", lock, flags=re.M), 20):
        clean.add("lock-hash", line.strip(), repo=ours, commit="", path="uv.lock")
    code: list[tuple[str, str]] = []
    for path in sorted((PROJECT / "hermes_core").rglob("*.py")):
        if "redaction" in path.parts:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if (
                re.search(r"(?i)token|secret|key|password|auth", line)
                and 20 < len(line.strip()) < 160
            ):
                code.append((str(path.relative_to(PROJECT)), line.strip()))
    for path, line in rng.sample(code, 60):
        clean.add("code", line, repo=ours, commit="", path=path)
    prose: list[tuple[str, str]] = []
    for path in sorted((PROJECT / "docs").glob("*.md")):
        if path.name == "redaction.md":
            continue
        for para in path.read_text(encoding="utf-8").split("\n\n"):
            para = para.strip()
            if (
                re.search(r"(?i)token|secret|key|password|auth", para)
                and 40 < len(para) < 600
                and not para.startswith(("```", "|"))
            ):
                prose.append((str(path.relative_to(PROJECT)), para))
    for path, para in rng.sample(prose, min(40, len(prose))):
        clean.add("prose", para, repo=ours, commit="", path=path)
    page = PROJECT / "plugins/hermes-export-html/hermes_export_html"
    for name in ("page.js", "page.css"):
        mini = _minify((page / name).read_text(encoding="utf-8"))
        for start in range(0, len(mini), 400):
            clean.add(
                "minified-js" if name.endswith(".js") else "minified-css",
                mini[start : start + 400],
                repo=ours,
                commit="",
                path=f"plugins/hermes-export-html/hermes_export_html/{name} (minified)",
            )
    return clean


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gitleaks", type=Path, required=True)
    parser.add_argument("--detect-secrets", type=Path, required=True)
    parser.add_argument("--trufflehog", type=Path, required=True)
    args = parser.parse_args()
    corpus = Corpus()
    collect_gitleaks(args.gitleaks, corpus)
    collect_detect_secrets(args.detect_secrets, corpus)
    collect_trufflehog(args.trufflehog, corpus)
    collect_formats(corpus)
    secrets = {base64.b64decode(s).decode() for item in corpus.items for s in item["secrets_b64"]}
    repos = {
        "gitleaks/gitleaks": args.gitleaks,
        "Yelp/detect-secrets": args.detect_secrets,
        "trufflesecurity/trufflehog": args.trufflehog,
    }
    clean = collect_clean(repos, secrets)
    with (HERE / "secrets.jsonl").open("w", encoding="utf-8") as out:
        for item in corpus.items:
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    with (HERE / "clean.jsonl").open("w", encoding="utf-8") as out:
        for item in clean.items:
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    for dropped in DROPPED:
        print(f"left out (the rule rejects its own test format): {dropped}")
    kinds = Counter(item["kind"] for item in corpus.items)
    groups = Counter(item["group"] for item in clean.items)
    print(
        f"{len(corpus.items)} secrets of {len(kinds)} kinds; {len(clean.items)} clean: {dict(groups)}"
    )


if __name__ == "__main__":
    main()
