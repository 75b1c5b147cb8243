"""Fakes of the secret kinds issue 23 names, built at run time from each vendor's published
format (prefix, alphabet, length) like :mod:`secret_samples`, so no token-shaped literal sits
in the repository. Each entry is ``kind: text holding the secret, the secret``."""

from __future__ import annotations

import base64
import json
import string

from secret_samples import BASE62, URLSAFE, fake

HEX = "0123456789abcdef"
BASE64 = BASE62 + "+/"


def _b64url(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _discord_bot_token() -> str:
    user_id = "1" + fake(string.digits, 17, 40)  # an 18-digit snowflake
    first = base64.b64encode(user_id.encode()).decode().rstrip("=")
    return f"{first}.{fake(URLSAFE, 6, 41)}.{fake(URLSAFE, 38, 42)}"


def _azure_client_secret() -> str:
    return fake(BASE62, 3, 43) + "8Q~" + fake(BASE62 + "_~.-", 34, 44)


GITHUB_LONG_GHS = "ghs_" + fake(BASE62, 118, 45)
GITLAB_AGENT = "glagent-" + fake(URLSAFE, 50, 46)
GITLAB_RUNNER = "GR1348941" + fake(URLSAFE, 20, 47)
JWT_TWO_SEGMENTS = (
    _b64url({"alg": "none", "typ": "JWT"})
    + "."
    + _b64url({"sub": "1234567890", "name": "Ada", "iat": 1516239022})
)
DISCORD_BOT = _discord_bot_token()
SENDGRID = "SG." + fake(URLSAFE, 22, 48) + "." + fake(URLSAFE, 43, 49)
MAILCHIMP = fake(HEX, 32, 50) + "-us12"
SOURCEGRAPH = "sgp_" + fake(HEX, 16, 51) + "_" + fake(HEX, 40, 52)
VAULT = "hvs." + fake(URLSAFE, 91, 53)
VAULT_LEGACY = "s." + fake(BASE62, 24, 54)
ONEPASSWORD_SERVICE = "ops_eyJ" + fake(BASE64, 300, 55)
GROQ = "gsk_" + fake(BASE62, 52, 56)
DATABRICKS = "dapi" + fake(HEX, 32, 57)
DIGITALOCEAN = "dop_v1_" + fake(HEX, 64, 58)
DOPPLER = "dp.pt." + fake(BASE62, 43, 59)
HEROKU = "HRKU-AA" + fake(URLSAFE, 58, 60)
HEROKU_LEGACY = "3f0c2d4e-8a1b-4c5d-9e6f-7a8b9c0d1e2f"
LINEAR = "lin_api_" + fake(BASE62, 40, 61)
AZURE_CLIENT_SECRET = _azure_client_secret()
INI_SECRET = fake(BASE62, 32, 62)

ISSUE_23_KINDS: dict[str, tuple[str, str]] = {
    "github-ghs-long": (f"the app token is {GITHUB_LONG_GHS}", GITHUB_LONG_GHS),
    "gitlab-agent": (f"agent token: {GITLAB_AGENT}", GITLAB_AGENT),
    "gitlab-runner": (f"register with {GITLAB_RUNNER} please", GITLAB_RUNNER),
    "jwt-two-segments": (f"unsigned: {JWT_TWO_SEGMENTS}", JWT_TWO_SEGMENTS),
    "discord-bot": (f"bot token {DISCORD_BOT}", DISCORD_BOT),
    "sendgrid": (f"here is the key {SENDGRID}", SENDGRID),
    "mailchimp": (f"use {MAILCHIMP} for the list", MAILCHIMP),
    "sourcegraph": (f"src token {SOURCEGRAPH}", SOURCEGRAPH),
    "vault": (f"VAULT_TOKEN={VAULT}", VAULT),
    "vault-legacy": (f"vault login {VAULT_LEGACY}", VAULT_LEGACY),
    "1password-service-account": (f"OP token {ONEPASSWORD_SERVICE}", ONEPASSWORD_SERVICE),
    "groq": (f"groq says {GROQ}", GROQ),
    "databricks": (f"host=x token {DATABRICKS}", DATABRICKS),
    "digitalocean": (f"doctl auth init -t {DIGITALOCEAN}", DIGITALOCEAN),
    "doppler": (f"doppler configure set token {DOPPLER}", DOPPLER),
    "heroku": (f"new key {HEROKU}", HEROKU),
    "heroku-legacy": (f"HEROKU_API_KEY={HEROKU_LEGACY}", HEROKU_LEGACY),
    "linear": (f"linear key {LINEAR}", LINEAR),
    "azure-ad-client-secret": (f'"clientSecret": "{AZURE_CLIENT_SECRET}"', AZURE_CLIENT_SECRET),
    "ini-secret": (f"[default]\nregion = eu-west-1\nsecret={INI_SECRET}\n", INI_SECRET),
}
"""Every kind issue 23 names: where it is written, and the secret that must not survive."""

CLEAN_CONTROLS = (
    "fixed in 4b825dc642cb6eb9a060e54bf8d69288fbee4904 (short 4b825dc)",
    "request-id: 3a16750d-d363-41a4-8ebd-035408f7730f",
    "sha256:" + fake(HEX, 64, 63) + "  uv.lock",
    "![logo](data:image/png;base64," + fake(BASE64, 400, 64) + "==)",
    "calls extend_rule_override_keywords_for_token_secrets() first",
    "The token budget is spent when the password prompt shows; rotate the secret key yearly.",
    "def refresh_access_token(self, token: str) -> str:\n    return self._tokens[token]",
)
"""Text that looks a little like secrets and must come out byte for byte."""
