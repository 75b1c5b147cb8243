"""The page around the sessions: head with its Content-Security-Policy, toolbar, sidebar.

The style sheet and the script ship as package files (``page.css``, ``page.js``) and are
inlined; each carries the export's random nonce, the only thing the policy lets run.
"""

from __future__ import annotations

import secrets
from functools import cache
from importlib.resources import files

from .render import text


@cache
def asset(name: str) -> str:
    """The text of a packaged asset (``page.css`` or ``page.js``)."""
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def new_nonce() -> str:
    """A fresh random CSP nonce (base64url, 128 bits) for one export."""
    return secrets.token_urlsafe(16)


def content_security_policy(nonce: str, *, connect_self: bool = False) -> str:
    """Nothing may load; only the page's own nonce-tagged style and script may apply.

    ``connect_self`` (a page served by ``hermes serve``) lets the script fetch from the
    page's own origin, and nothing else."""
    connect = " connect-src 'self';" if connect_self else ""
    return (
        "default-src 'none'; "
        f"style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}';{connect} "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )


def page_start(title: str, nonce: str, multi: bool) -> str:
    """Everything before the first session: head, toolbar and the opening of ``<main>``."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(nonce)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="generator" content="hermes-export-html">\n'
        f"<title>{text(title)}</title>\n"
        f'<style nonce="{nonce}">\n{asset("page.css")}</style>\n'
        f'</head><body class="{"multi" if multi else "single"}"><div class="layout">\n'
        '<header class="top"><h1>Hermes sessions</h1>'
        '<button type="button" class="theme" id="theme-toggle" data-state="auto">'
        "Theme: auto</button></header>\n"
        '<main id="sessions">\n'
    )


def sidebar_start() -> str:
    """The opening of the sidebar, which follows ``<main>`` (the grid shows it on the left)."""
    return (
        '<nav id="sidebar" aria-label="Sessions">'
        '<input type="search" id="search" placeholder="Search sessions" autocomplete="off" '
        'aria-label="Search sessions"><div class="muted" id="match-count"></div><ul>'
    )


def sidebar_end() -> str:
    """The closing of the sidebar."""
    return "</ul></nav>\n"


def page_end(nonce: str) -> str:
    """The script and the closing tags."""
    return f'</div><script nonce="{nonce}">\n{asset("page.js")}</script>\n</body></html>\n'
