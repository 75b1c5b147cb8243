"""Secret generators written from the providers' *documented* token formats — prefix,
alphabet, length — and never from ``hermes_core.redaction``'s patterns (this module does not
import it). Recall measured on their output is recall against the formats, not against what
the rules happen to expect.

Each generator takes a ``random.Random`` and returns one fresh secret.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
BASE32_UPPER = string.ascii_uppercase + "234567"
PASSWORD_SYMBOLS = "!@#%^&*-_+=.~"

Generator = Callable[[random.Random], str]


def chars(rng: random.Random, alphabet: str, length: int) -> str:
    """``length`` characters drawn uniformly from ``alphabet``."""
    return "".join(rng.choice(alphabet) for _ in range(length))


def b64url(data: bytes) -> str:
    """Unpadded base64url, as JWTs and macaroons write it."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


# ----------------------------------------------------------------------------- vendors


def openai_key(rng: random.Random) -> str:
    """Legacy user keys: ``sk-`` + 48 base62. Project, service-account and admin keys:
    ``sk-proj-``/``sk-svcacct-``/``sk-admin-`` + a base64url body with the ``T3BlbkFJ``
    marker in the middle."""
    kind = rng.randrange(4)
    if kind == 0:
        return "sk-" + chars(rng, ALNUM, 48)
    prefix = ("sk-proj-", "sk-svcacct-", "sk-admin-")[kind - 1]
    half = rng.choice((20, 58, 74))
    return prefix + chars(rng, URLSAFE, half) + "T3BlbkFJ" + chars(rng, URLSAFE, half)


def anthropic_key(rng: random.Random) -> str:
    """``sk-ant-api03-`` (or ``sk-ant-admin01-``) + 93 base64url characters + ``AA``."""
    prefix = "sk-ant-api03-" if rng.random() < 0.85 else "sk-ant-admin01-"
    return prefix + chars(rng, URLSAFE, 93) + "AA"


def huggingface_token(rng: random.Random) -> str:
    """User access tokens: ``hf_`` + 34 ASCII letters."""
    return "hf_" + chars(rng, string.ascii_letters, 34)


def github_token(rng: random.Random) -> str:
    """Classic tokens ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36 base62; fine-grained
    ``github_pat_`` + 22 base62 + ``_`` + 59 base62."""
    kind = rng.randrange(6)
    if kind == 5:
        return "github_pat_" + chars(rng, ALNUM, 22) + "_" + chars(rng, ALNUM, 59)
    return ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")[kind] + chars(rng, ALNUM, 36)


def gitlab_token(rng: random.Random) -> str:
    """Personal/deploy/runner tokens: ``glpat-``/``gldt-``/``glrt-`` + 20 characters of
    ``[0-9a-zA-Z_-]``."""
    prefix = rng.choice(("glpat-", "glpat-", "gldt-", "glrt-"))
    return prefix + chars(rng, URLSAFE, 20)


def slack_token(rng: random.Random) -> str:
    """Bot ``xoxb-<team>-<bot>-<24 base62>``, user ``xoxp-<team>-<user>-<team>-<32 hex>``,
    app-level ``xapp-1-<A…>-<digits>-<64 hex>``."""
    kind = rng.randrange(3)
    if kind == 0:
        return f"xoxb-{chars(rng, string.digits, 12)}-{chars(rng, string.digits, 13)}-" + chars(
            rng, ALNUM, 24
        )
    if kind == 1:
        return (
            f"xoxp-{chars(rng, string.digits, 12)}-{chars(rng, string.digits, 12)}-"
            f"{chars(rng, string.digits, 13)}-{chars(rng, HEX, 32)}"
        )
    return (
        f"xapp-1-A{chars(rng, string.ascii_uppercase + string.digits, 10)}-"
        f"{chars(rng, string.digits, 13)}-{chars(rng, HEX, 64)}"
    )


def slack_webhook_path(rng: random.Random) -> str:
    """The secret part of an incoming-webhook URL: ``T<8-10>/B<8-10>/<24 base62>``."""
    upper = string.ascii_uppercase + string.digits
    return (
        f"T{chars(rng, upper, rng.randint(8, 10))}/B{chars(rng, upper, rng.randint(8, 10))}/"
        + chars(rng, ALNUM, 24)
    )


def stripe_key(rng: random.Random) -> str:
    """Secret ``sk_live_``/``sk_test_`` and restricted ``rk_live_``/``rk_test_`` keys: 24
    base62 characters (older) or 99 (current)."""
    prefix = rng.choice(("sk_live_", "sk_test_", "rk_live_", "rk_test_"))
    return prefix + chars(rng, ALNUM, rng.choice((24, 99)))


def aws_access_key_id(rng: random.Random) -> str:
    """``AKIA`` (long-term) or ``ASIA`` (temporary) + 16 characters of base32 ``[A-Z2-7]``."""
    return rng.choice(("AKIA", "ASIA")) + chars(rng, BASE32_UPPER, 16)


def aws_secret_access_key(rng: random.Random) -> str:
    """40 characters of ``[A-Za-z0-9/+]``."""
    return chars(rng, ALNUM + "/+", 40)


def google_api_key(rng: random.Random) -> str:
    """``AIza`` + 35 characters of ``[0-9A-Za-z_-]``."""
    return "AIza" + chars(rng, URLSAFE, 35)


def google_oauth_token(rng: random.Random) -> str:
    """OAuth 2.0 access tokens: ``ya29.`` + a base64url body (tens to ~200 characters)."""
    return "ya29." + chars(rng, URLSAFE, rng.randint(60, 200))


def npm_token(rng: random.Random) -> str:
    """Granular and automation tokens: ``npm_`` + 36 base62."""
    return "npm_" + chars(rng, ALNUM, 36)


def pypi_token(rng: random.Random) -> str:
    """API tokens: ``pypi-`` + a base64url macaroon whose serialisation starts with the
    location ``pypi.org`` (so the text starts ``AgEIcHlwaS5vcmc``)."""
    caveats = json.dumps({"version": 1, "permissions": rng.choice(("user", "project"))})
    identifier = bytes(rng.randrange(256) for _ in range(16)).hex()
    body = (
        b"\x02\x01\x08pypi.org\x02"
        + bytes([len(identifier)])
        + identifier.encode()
        + b"\x00\x02"
        + caveats.encode()
        + b"\x00\x00\x06 "
        + bytes(rng.randrange(256) for _ in range(32))
    )
    return "pypi-" + b64url(body)


def jwt(rng: random.Random) -> str:
    """RFC 7519 compact form: base64url(header).base64url(claims).base64url(signature)."""
    alg = rng.choice(("HS256", "RS256", "ES256"))
    header = {"alg": alg, "typ": "JWT"}
    if rng.random() < 0.5:
        header["kid"] = chars(rng, HEX, 16)
    claims = {
        "sub": chars(rng, string.digits, 10),
        "iat": 1_760_000_000 + rng.randrange(10**7),
        "exp": 1_770_000_000 + rng.randrange(10**7),
    }
    if rng.random() < 0.5:
        claims["email"] = f"user{rng.randrange(1000)}@example.com"
    signature = bytes(rng.randrange(256) for _ in range(256 if alg == "RS256" else 32))
    return ".".join(
        (
            b64url(json.dumps(header, separators=(",", ":")).encode()),
            b64url(json.dumps(claims, separators=(",", ":")).encode()),
            b64url(signature),
        )
    )


# ----------------------------------------------------------------------------- generic


def generated_secret(rng: random.Random) -> str:
    """What people paste into ``*_KEY``/``*_TOKEN``/``*_SECRET``/``*_PASSWORD`` settings:
    ``openssl rand -hex 32``, ``openssl rand -base64 32``, Python's
    ``secrets.token_urlsafe``, ``pwgen -s 20``, or a human password with a digit or symbol."""
    kind = rng.randrange(5)
    if kind == 0:
        return chars(rng, HEX, rng.choice((32, 40, 64)))
    if kind == 1:
        return base64.b64encode(bytes(rng.randrange(256) for _ in range(32))).decode("ascii")
    if kind == 2:
        return b64url(bytes(rng.randrange(256) for _ in range(rng.choice((16, 24, 32)))))
    if kind == 3:
        text = chars(rng, ALNUM, 20)
        return text[:-1] + rng.choice(string.digits)
    word = rng.choice(("Summer", "Dragon", "Monkey", "Sunshine", "Welcome", "Falcon", "Orange"))
    return (
        word
        + chars(rng, string.digits, rng.randint(2, 4))
        + rng.choice(PASSWORD_SYMBOLS)
        + chars(rng, ALNUM, rng.randint(0, 6))
    )


def url_password(rng: random.Random) -> str:
    """A password as it sits in a URL: generated, with reserved characters percent-encoded."""
    kind = rng.randrange(3)
    if kind == 0:
        return chars(rng, ALNUM, rng.randint(12, 32))
    if kind == 1:
        return chars(rng, HEX, 32)
    return (
        chars(rng, ALNUM, 8)
        + rng.choice(("%40", "%23", "%2F", "%3A", "!", "-", "_", "~"))
        + (chars(rng, ALNUM, 8))
    )


def basic_credentials(rng: random.Random) -> str:
    """base64(``user:password``), as HTTP Basic sends it."""
    user = rng.choice(("admin", "deploy", "ci", "svc-export", "alice"))
    return base64.b64encode(f"{user}:{generated_secret(rng)}".encode()).decode("ascii")


def pem_private_key(rng: random.Random) -> tuple[str, list[str]]:
    """A PEM private key (PKCS#1 RSA, SEC1 EC, PKCS#8, encrypted PKCS#8 or OpenSSH) with a
    random base64 body wrapped at 64 (70 for OpenSSH) columns; returns the text and its body
    lines (the secret parts)."""
    label, size, width = rng.choice(
        (
            ("RSA PRIVATE KEY", 1190, 64),
            ("EC PRIVATE KEY", 121, 64),
            ("PRIVATE KEY", 1218, 64),
            ("ENCRYPTED PRIVATE KEY", 1298, 64),
            ("OPENSSH PRIVATE KEY", 399, 70),
        )
    )
    body = base64.b64encode(bytes(rng.randrange(256) for _ in range(size))).decode("ascii")
    lines = [body[i : i + width] for i in range(0, len(body), width)]
    text = "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])
    return text, lines
