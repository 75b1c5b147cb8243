"""More vendor tokens recognised by their own shape, and values assigned to a key named after a
vendor whose tokens have no telling prefix (``HEROKU_API_KEY = "<uuid>"``).

Every format here is written from the vendor's published token format (prefix, alphabet,
length); none is copied from another scanner. Each entry becomes one rule, named by its
vendor, whose keywords are its literal prefixes, so its regex only runs on text that holds one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .token_patterns import _END, _prefix

HEX = "[0-9a-fA-F]"
B62 = "[A-Za-z0-9]"
URLSAFE = "[A-Za-z0-9_-]"
B64 = "[A-Za-z0-9+/]"


@dataclass(frozen=True, slots=True)
class VendorToken:
    """One rule: a token that starts with one of ``prefixes`` (regexes of fixed width, spelled
    as the vendor writes them) followed by ``body``."""

    name: str
    prefixes: tuple[str, ...]
    body: str
    keywords: tuple[str, ...]
    dashed: bool = False
    """The body may hold ``_`` or ``-``: a ``_``/``-`` before the prefix then glues it to
    a longer run (see :func:`.token_patterns._prefix`)."""
    end: str = _END

    @property
    def pattern(self) -> str:
        starts = "|".join(_prefix(prefix, dashed=self.dashed) for prefix in self.prefixes)
        return f"(?:{starts}){self.body}{self.end}"


_URLSAFE_END = r"(?![A-Za-z0-9_-])"
_B64_END = r"(?![A-Za-z0-9+/=])"

VENDOR_TOKENS: tuple[VendorToken, ...] = (
    # AI providers and their tooling
    VendorToken("groq-key", ("gsk_",), B62 + "{48,64}+", ("gsk_",)),
    VendorToken("xai-key", ("xai-",), B62 + "{70,100}+", ("xai-",)),
    VendorToken("perplexity-key", ("pplx-",), B62 + "{40,64}+", ("pplx-",)),
    VendorToken("replicate-token", ("r8_",), B62 + "{37,40}+", ("r8_",)),
    VendorToken("langsmith-key", ("lsv2_(?:pt|sk)_",), "[a-f0-9]{32}_[a-f0-9]{10}", ("lsv2_",)),
    VendorToken(
        "pinecone-key", ("pcsk_",), B62 + "{4,10}_" + B62 + "{40,100}+", ("pcsk_",), dashed=True
    ),
    VendorToken("huggingface-token", ("api_org_",), "[A-Za-z]{34}", ("api_org_",), dashed=True),
    VendorToken("cohere-key", ("co-",), B62 + "{40}", ("co-",)),
    VendorToken("elevenlabs-key", ("sk_",), "[a-f0-9]{48}", ("sk_",)),
    # Cloud, hosting and developer platforms
    VendorToken(
        "aws-bedrock-key",
        ("ABSK",),
        B64 + "{100,400}+={0,2}",
        ("absk",),
        end=_B64_END,
    ),
    VendorToken(
        "aws-bedrock-key",
        ("bedrock-api-key-",),
        "YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%]{0,4000}+",
        ("bedrock-api-key-",),
        dashed=True,
        end=_B64_END,
    ),
    VendorToken("alibaba-access-key-id", ("LTAI",), B62 + "{12,30}+", ("ltai",)),
    VendorToken(
        "azure-client-secret",
        ("[A-Za-z0-9_~.]{3}[0-9]Q~",),
        "[A-Za-z0-9_~.-]{31,34}+",
        ("q~",),
        end=r"(?![A-Za-z0-9_~.-])",
    ),
    VendorToken("databricks-token", ("dapi",), "[a-f0-9]{32}(?:-[0-9])?", ("dapi",)),
    VendorToken("digitalocean-token", ("do[opr]_v1_",), "[a-f0-9]{64}", ("_v1_",)),
    VendorToken(
        "doppler-token",
        tuple(rf"dp\.{kind}\." for kind in ("pt", "st", "ct", "sa", "scim", "audit")),
        B62 + "{40,44}+",
        ("dp.",),
    ),
    VendorToken("cloudflare-origin-ca-key", (r"v1\.0-",), "[a-f0-9]{24}-[a-f0-9]{146}", ("v1.0-",)),
    VendorToken(
        "flyio-token",
        ("fo1_",),
        URLSAFE + "{43}",
        ("fo1_",),
        dashed=True,
        end=_URLSAFE_END,
    ),
    VendorToken(
        "flyio-token",
        ("fm1[ar]_", "fm2_"),
        B64 + "{100,4000}+={0,3}",
        ("fm1a_", "fm1r_", "fm2_"),
        end=_B64_END,
    ),
    VendorToken(
        "hashicorp-token",
        (r"hv[sb]\.",),
        URLSAFE + "{90,400}+",
        ("hvs.", "hvb."),
        dashed=True,
        end=_URLSAFE_END,
    ),
    VendorToken(
        "hashicorp-token",
        (r"s\.",),
        # Legacy Vault service tokens: ``s.`` + 24 base62, a digit among them.
        "(?=[A-Za-z]{0,23}[0-9])" + B62 + "{24}",
        ("s.",),
        dashed=True,
        end=r"(?![A-Za-z0-9_.-])",
    ),
    VendorToken(
        "hashicorp-token",
        (B62 + r"{14}\.atlasv1\.",),
        "[A-Za-z0-9_=-]{60,90}+",
        (".atlasv1.",),
        dashed=True,
        end=r"(?![A-Za-z0-9_=-])",
    ),
    VendorToken("heroku-key", ("HRKU-AA",), URLSAFE + "{58}", ("hrku-aa",), end=_URLSAFE_END),
    VendorToken("openshift-token", ("sha256~",), URLSAFE + "{43}", ("sha256~",), end=_URLSAFE_END),
    VendorToken("pulumi-token", ("pul-",), "[a-f0-9]{40}", ("pul-",)),
    VendorToken(
        "planetscale-token",
        ("pscale_tkn_", "pscale_oauth_", "pscale_pw_"),
        "[A-Za-z0-9_=.-]{32,64}+",
        ("pscale_",),
        dashed=True,
        end=r"(?![A-Za-z0-9_=.-])",
    ),
    VendorToken("prefect-token", ("pnu_",), B62 + "{36}", ("pnu_",)),
    VendorToken("scalingo-token", ("tk-us-",), URLSAFE + "{48}", ("tk-us-",), end=_URLSAFE_END),
    VendorToken("supabase-token", ("sbp_",), "[a-f0-9]{40}", ("sbp_",)),
    VendorToken("vercel-token", ("vc[pikar]_",), B62 + "{56,64}+", ("vcp_", "vci_", "vck_")),
    VendorToken("clickhouse-key", ("4b1d",), B62 + "{38}", ("4b1d",)),
    VendorToken("dynatrace-token", (r"dt0c01\.",), B62 + "{24}\\." + B62 + "{64}", ("dt0c01.",)),
    VendorToken(
        "grafana-token",
        ("eyJrIjoi",),
        B62 + "{70,400}+={0,3}",
        ("eyjrijoi",),
        end=_B64_END,
    ),
    VendorToken("grafana-token", ("glc_",), B64 + "{32,400}+={0,3}", ("glc_",), end=_B64_END),
    VendorToken("grafana-token", ("glsa_",), B62 + "{32}_" + HEX + "{8}", ("glsa_",)),
    VendorToken(
        "harness-key",
        (r"(?:pat|sat)\.",),
        URLSAFE + r"{22}\." + B62 + r"{24}\." + B62 + "{20}",
        ("pat.", "sat."),
        dashed=True,
    ),
    VendorToken(
        "sentry-token",
        ("sntrys_eyJ",),
        "[A-Za-z0-9+/=_]{60,1200}+",
        ("sntrys_",),
        dashed=True,
        end=r"(?![A-Za-z0-9+/=_])",
    ),
    VendorToken("sentry-token", ("sntryu_",), "[a-f0-9]{64}", ("sntryu_",)),
    VendorToken("infracost-token", ("ico-",), B62 + "{32}", ("ico-",)),
    VendorToken("octopus-deploy-key", ("API-",), "[A-Z0-9]{26}", ("api-",)),
    VendorToken("readme-token", ("rdme_",), "[a-z0-9]{70}", ("rdme_",)),
    VendorToken(
        "1password-token",
        ("ops_eyJ",),
        B64 + "{100,4000}+={0,3}",
        ("ops_eyj",),
        end=_B64_END,
    ),
    VendorToken(
        "1password-secret-key",
        ("A3-",),
        "[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        ("a3-",),
        dashed=True,
    ),
    VendorToken(
        "age-secret-key",
        ("AGE-SECRET-KEY-1",),
        "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        ("age-secret-key-1",),
        dashed=True,
    ),
    # Code hosting, CI and package registries
    VendorToken(
        "gitlab-token", ("GR1348941",), URLSAFE + "{20,64}+", ("gr1348941",), end=_URLSAFE_END
    ),
    VendorToken(
        "gitlab-token",
        ("glagent-", "glffct-", "glsoat-", "glcbt-", "glimt-"),
        URLSAFE + "{20,255}+",
        ("glagent-", "glffct-", "glsoat-", "glcbt-", "glimt-"),
        dashed=True,
        end=_URLSAFE_END,
    ),
    VendorToken("buildkite-token", ("bkua_",), B62 + "{40}", ("bkua_",)),
    VendorToken(
        "circleci-token", ("CCIPAT_",), B62 + "{22}_[a-f0-9]{40}", ("ccipat_",), dashed=True
    ),
    VendorToken("clojars-token", ("CLOJARS_",), B62 + "{60}", ("clojars_",)),
    VendorToken("rubygems-token", ("rubygems_",), "[a-f0-9]{48}", ("rubygems_",)),
    VendorToken(
        "sourcegraph-token",
        ("sgp_",),
        "(?:(?:" + HEX + "{16}|local)_)?" + HEX + "{40}",
        ("sgp_",),
        dashed=True,
    ),
    VendorToken(
        "figma-token",
        ("fig[dpr]_",),
        URLSAFE + "{40,64}+",
        ("figd_", "figp_", "figr_"),
        end=_URLSAFE_END,
    ),
    VendorToken("postman-key", ("PMAK-",), HEX + "{24}-" + HEX + "{34}", ("pmak-",)),
    VendorToken("frameio-token", ("fio-u-",), "[A-Za-z0-9_=-]{64}", ("fio-u-",), dashed=True),
    VendorToken("airtable-token", ("pat",), B62 + r"{14}\.[a-f0-9]{64}", ("pat",)),
    VendorToken("notion-token", ("ntn_",), "[0-9]{11}" + B62 + "{35}", ("ntn_",)),
    VendorToken("linear-key", ("lin_api_",), B62 + "{40}", ("lin_api_",), dashed=True),
    VendorToken("adobe-secret", ("p8e-",), B62 + "{32}", ("p8e-",)),
    VendorToken(
        "authress-key",
        ("sc_", "ext_", "scauth_", "authress_"),
        B62 + r"{5,30}\." + B62 + r"{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}+",
        (".acc_", ".acc-"),
        dashed=True,
        end=r"(?![A-Za-z0-9+/_=-])",
    ),
    VendorToken(
        "settlemint-token", ("sm_[aps]at_",), B62 + "{16}", ("sm_aat_", "sm_pat_", "sm_sat_")
    ),
    VendorToken("maxmind-key", (B62 + "{6}_",), B62 + "{29}_mmk", ("_mmk",), dashed=True),
    # Payments, commerce, messaging
    VendorToken(
        "sendgrid-key",
        (r"SG\.",),
        "[A-Za-z0-9_=.-]{60,80}+",
        ("sg.",),
        dashed=True,
        end=r"(?![A-Za-z0-9_=-])",
    ),
    VendorToken(
        "brevo-key",
        ("xkeysib-", "xsmtpsib-"),
        "[a-f0-9]{64}-" + B62 + "{16}",
        ("xkeysib-", "xsmtpsib-"),
    ),
    VendorToken("twilio-key", ("SK",), HEX + "{32}", ("sk",)),
    VendorToken(
        "square-token",
        ("sq0atp-", "sq0csp-", "EAAA"),
        URLSAFE + "{22,60}+",
        ("sq0atp-", "sq0csp-", "eaaa"),
        end=_URLSAFE_END,
    ),
    VendorToken(
        "shopify-token",
        ("shp(?:at|ca|pa|ss)_",),
        HEX + "{32}",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    VendorToken("stripe-key", ("[sr]k_prod_",), B62 + "{10,247}+", ("sk_prod_", "rk_prod_")),
    VendorToken("shippo-token", ("shippo_(?:live|test)_",), HEX + "{40}", ("shippo_",)),
    VendorToken(
        "duffel-token",
        ("duffel_(?:test|live)_",),
        "[A-Za-z0-9_=-]{43}",
        ("duffel_",),
        dashed=True,
        end=r"(?![A-Za-z0-9_=-])",
    ),
    VendorToken("easypost-key", ("EZ[AT]K",), B62 + "{54}", ("ezak", "eztk")),
    VendorToken(
        "flutterwave-key",
        ("FLW(?:SECK|PUBK)_TEST-", "FLW(?:SECK|PUBK)-"),
        "[a-hA-H0-9]{12,32}(?:-X)?",
        ("flwseck", "flwpubk"),
        dashed=True,
    ),
    VendorToken("facebook-token", ("EAA[MC]",), B62 + "{100,2000}+", ("eaam", "eaac")),
    VendorToken("intra42-secret", ("s-s4t2(?:ud|af)-",), HEX + "{64}", ("s-s4t2",), dashed=True),
)
"""Tokens with a documented literal prefix, in the order their rules run."""

# ----------------------------------------------------------------------------- shapes without
# a fixed prefix, each found from a literal it must hold.

DISCORD_BOT_TOKEN = (
    # base64 of the bot's numeric id (it starts M, N or O), a 6-character timestamp, an HMAC.
    # It may start inside a longer run (as detect-secrets' tests expect): the two dots and
    # the segment lengths are what tell it.
    r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}+" + r"(?![A-Za-z0-9_-])"
)
MAILCHIMP_KEY = r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])"
FACEBOOK_APP_TOKEN = r"(?<![A-Za-z0-9])[0-9]{15,16}(?:\||%7C)[A-Za-z0-9_-]{27,40}+(?![A-Za-z0-9_-])"
TEAMS_WEBHOOK = r"(?P<keep>\.webhook\.office\.com/webhookb2/)[A-Za-z0-9@/_-]{40,400}+"
SIDEKIQ_CREDENTIALS = (
    r"(?P<keep>BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM[ \t]{0,5}[:=][ \t]{0,5}"
    + r"(?:\\{0,3}[\"'])?)"
    + r"[0-9a-f]{8}:[0-9a-f]{8}(?![0-9a-f])"
)
CURL_USER = (
    # ``curl … -u user:password`` / ``--user "user:password"`` on the same command line
    # (continued with backslashes); the whole pair goes. The pair is up to four pieces glued
    # together, each quoted (``"…"``, ``\"…\"`` once JSON-escaped, ``'…'``) or bare:
    # ``"user:pass"``, ``kevin:'pass'``, ``"{id}":"{secret}"``.
    r"(?P<keep>curl(?<![A-Za-z0-9_-]curl)(?![A-Za-z0-9_-])(?:[^\n\\]|\\[^\n]|\\\n){0,1024}?"
    + r"[ \t](?:-u|--user)(?:[ \t]{1,5}|=))"
    + r"(?!\[REDACTED)(?=[^\s]{0,512}:)"
    + r"""(?:\\{0,3}"[^"\n\\]{0,256}+\\{0,3}"|'[^'\n]{0,256}+'|[^\s"'<>\\]{1,256}+){1,4}+"""
)
TELEGRAM_BOT_LOOSE = r"(?<![0-9])[0-9]{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])"

# ----------------------------------------------------------------------------- vendor-keyed

VENDOR_NAMES = (
    "adafruit",
    "airtable",
    "algolia",
    "alibaba",
    "asana",
    "atlassian",
    "confluence",
    "jira",
    "beamer",
    "bitbucket",
    "bittrex",
    "meraki",
    "cloudflare",
    "codecov",
    "cohere",
    "coinbase",
    "contentful",
    "datadog",
    "dnkey",
    "discord",
    "droneci",
    "dropbox",
    "etsy",
    "facebook",
    "fastly",
    "finicity",
    "finnhub",
    "flickr",
    "freshbooks",
    "gitter",
    "gocardless",
    "heroku",
    "hubspot",
    "intercom",
    "jfrog",
    "artifactory",
    "bintray",
    "kraken",
    "kucoin",
    "launchdarkly",
    "linear",
    "linkedin",
    "lob",
    "looker",
    "mailchimp",
    "mailgun",
    "mapbox",
    "mattermost",
    "messagebird",
    "netlify",
    "newrelic",
    "new_relic",
    "new-relic",
    "nytimes",
    "okta",
    "plaid",
    "privateai",
    "private_ai",
    "rapidapi",
    "sendbird",
    "sentry",
    "snyk",
    "sonar",
    "sourcegraph",
    "squarespace",
    "sumologic",
    "telegram",
    "travis",
    "trello",
    "twitch",
    "twitter",
    "typeform",
    "yandex",
    "zendesk",
    "contribsys",
    "railway",
    "postmark",
    "vercel",
    "ngrok",
    "pagerduty",
    "elevenlabs",
    "mistral",
    "deepseek",
    "openrouter",
    "fireworks",
    "anthropic",
    "openai",
    "gemini",
    "huggingface",
    "replicate",
    "supabase",
    "pusher",
    "mixpanel",
    "amplitude",
    "auth0",
    "clerk",
    "firebase",
    "circleci",
    "buildkite",
    "sidekiq",
)
"""Vendors whose tokens have no telling prefix: a value assigned to a key that names one of
them (``HEROKU_KEY = …``, ``cloudflare: "…"``, ``"artifactory", "…"``) is taken for a secret
when it looks machine-made (see ``VENDOR_VALUE``)."""

VENDOR_VALUE = (
    "(?:"
    # a UUID (Heroku, HubSpot, Snyk, Railway, Postmark keys)
    + "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    # hex of 32 or more, maybe with a data-centre suffix (Mailchimp ``-us12``)
    + "|[0-9a-fA-F]{32,128}+(?:-us[0-9]{1,2})?"
    # ``user:password`` of hex (Sidekiq's gem server credentials)
    + "|[0-9a-f]{8}:[0-9a-f]{8}"
    # random base62 of 20 or more, or URL-safe base64 of 32 or more, a digit among them
    + "|(?=[A-Za-z]{0,127}[0-9])"
    + B62
    + "{20,128}+(?![_=+/-])"
    + "|(?=[A-Za-z_=+/-]{0,127}[0-9])[A-Za-z0-9_=+/-]{32,128}+"
    + ")"
    + r"(?![A-Za-z0-9_=+/.:-])"
)

_SECRET_WORD = (
    "(?:"
    + "|".join(
        f"{word}|{word.upper()}|{word.capitalize()}"
        for word in (
            "key",
            "token",
            "secret",
            "password",
            "pass",
            "login",
            "auth",
            "credential",
            "credentials",
            "creds",
            "pat",
        )
    )
    + ")"
)


def _any_case(word: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)


_KEY_REST = (
    # the rest of the key: nothing, or anything ending in a secret word (``_API_KEY``,
    # ``Token``, ``.login``), then maybe one letter (``MAILCHIMPE_KEY`` is a typo seen in the wild)
    r"(?:[A-Za-z0-9_.-]{0,24}?"
    + _SECRET_WORD
    + r")?[A-Za-z]?"
    + r"""(?:(?:\\{0,3}["'`])?[ \t]{0,5}(?::{1,3}=|\?=|=>|[:=,]|[ \t]token[ \t]{0,5}=)[ \t]{0,5}"""
    + r"""(?:\\{0,3}["'`])?))"""
    + r"(?!\[REDACTED)"
    + VENDOR_VALUE
)


def vendor_keyed(name: str) -> str:
    """A value assigned to a key that starts with the vendor ``name`` (any case)."""
    # The look-behind comes after the first letter, so ``re`` jumps between the letters a
    # key can start with instead of trying every position.
    first, rest = _any_case(name[0]), _any_case(name[1:])
    return r"(?P<keep>" + first + r"(?<![A-Za-z0-9].)" + rest + _KEY_REST
