"""Fake secrets for the redaction tests, built at run time from each format's description
(prefix, alphabet, length) so no token-shaped literal sits in the repository."""

from __future__ import annotations

import random
import string

BASE62 = string.ascii_letters + string.digits
URLSAFE = BASE62 + "-_"
UPPER_DIGITS = string.ascii_uppercase + string.digits


def fake(alphabet: str, length: int, seed: int = 0) -> str:
    """``length`` characters of ``alphabet``; always holds a digit when the alphabet has one."""
    rng = random.Random(f"{alphabet}-{length}-{seed}")
    text = "".join(rng.choice(alphabet) for _ in range(length))
    digits = [c for c in alphabet if c.isdigit()]
    if digits and not any(c.isdigit() for c in text):
        text = text[:-1] + digits[0]
    return text


OPENAI_LEGACY = "sk-" + fake(BASE62, 48)
OPENAI_PROJECT = "sk-proj-" + fake(URLSAFE, 156, 1)
OPENAI_SERVICE = "sk-svcacct-" + fake(URLSAFE, 120, 2)
ANTHROPIC = "sk-ant-api03-" + fake(URLSAFE, 93, 3) + "AA"
HUGGING_FACE = "hf_" + fake(string.ascii_letters, 34, 4)
GITHUB_CLASSIC = {
    prefix: f"{prefix}_" + fake(BASE62, 36, i)
    for i, prefix in enumerate(["ghp", "gho", "ghu", "ghs", "ghr"])
}
GITHUB_FINE = "github_pat_" + fake(BASE62, 22, 5) + "_" + fake(BASE62, 59, 6)
GITLAB = "glpat-" + fake(URLSAFE, 20, 7)
SLACK_BOT = (
    "xoxb-"
    + fake(string.digits, 12, 8)
    + "-"
    + fake(string.digits, 13, 9)
    + "-"
    + fake(BASE62, 24, 10)
)
SLACK_USER = (
    "xoxp-"
    + fake(string.digits, 12, 11)
    + "-"
    + fake(string.digits, 12, 12)
    + "-"
    + fake(string.digits, 13, 13)
    + "-"
    + fake("0123456789abcdef", 32, 14)
)
SLACK_WEBHOOK_PATH = (
    "T" + fake(UPPER_DIGITS, 8, 15) + "/B" + fake(UPPER_DIGITS, 10, 16) + "/" + fake(BASE62, 24, 17)
)
STRIPE_LIVE = "sk_live_" + fake(BASE62, 99, 18)
STRIPE_TEST = "sk_test_" + fake(BASE62, 24, 19)
STRIPE_RESTRICTED = "rk_live_" + fake(BASE62, 99, 20)
AWS_KEY_ID = "AKIA" + fake(UPPER_DIGITS, 16, 21)
AWS_SESSION_KEY_ID = "ASIA" + fake(UPPER_DIGITS, 16, 22)
AWS_SECRET = fake(BASE62 + "/+", 40, 23)
GOOGLE_API = "AIza" + fake(URLSAFE, 35, 24)
GOOGLE_OAUTH = "ya29." + fake(URLSAFE, 150, 25)
NPM = "npm_" + fake(BASE62, 36, 26)
PYPI = "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 160, 27)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    + "eyJ"
    + fake(URLSAFE, 60, 28)
    + "."
    + fake(URLSAFE, 43, 29)
)
PASSWORD = "Tr0ub4dor&3x" + fake(BASE62, 6, 30)
DB_PASSWORD = "pg-" + fake(BASE62, 18, 31)
PEM_BODY_LINES = [fake(BASE62 + "+/", 64, 40 + i) for i in range(6)]
