"""The gate in front of every route: Host check, token cookie, writes and CSRF, headers.

- ``Host`` must name this server (``127.0.0.1:PORT`` or ``localhost:PORT``): a page on
  another site that rebinds its DNS name to 127.0.0.1 still sends its own name, and is refused.
- The token of the printed URL (``?token=…``) is checked in constant time, kept as an
  HttpOnly, SameSite=Strict cookie named after the port, and removed from the address by a
  redirect; every later request needs the cookie. Other local users and other web pages
  do not have it.
- Anything but GET/HEAD is a write: refused unless ``--allow-writes``, and then only with the
  page's CSRF value in ``X-Hermes-CSRF`` and, when the browser sends one, our own ``Origin``.
- Every answer says: no sniffing, no framing, no referrer, no caching, and (unless the route
  set its own) ``Content-Security-Policy: default-src 'none'``.
"""

from __future__ import annotations

import hmac
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .settings import ServeSettings

SAFE_METHODS = frozenset({"GET", "HEAD"})
CSRF_HEADER = "x-hermes-csrf"
READ_ONLY = (
    "this server is read-only: start it with 'hermes serve --allow-writes' to change sessions"
)

_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
_DEFAULT_POLICY = b"default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


class Guard:
    """ASGI middleware enforcing the rules of the module docstring."""

    def __init__(self, app: ASGIApp, settings: ServeSettings) -> None:
        self._app = app
        self._settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self._app(scope, receive, send)
            return
        send = _with_headers(send)
        headers = {key.lower(): value for key, value in scope.get("headers") or ()}
        host = headers.get(b"host", b"").decode("latin-1")
        if host not in self._settings.allowed_hosts:
            await _refuse(send, 403, "unknown Host header: open the address hermes serve printed")
            return
        query = scope.get("query_string", b"").decode("latin-1")
        given = dict(parse_qsl(query)).get("token")
        if given is not None and scope["method"] in SAFE_METHODS:
            if not self._matches(given):
                await _refuse(send, 403, "wrong token: open the address hermes serve printed")
                return
            await self._remember(scope, query, send)
            return
        if not self._matches(_cookie(headers, self._settings.cookie_name)):
            await _refuse(send, 403, "no token: open the address hermes serve printed")
            return
        if scope["method"] not in SAFE_METHODS:
            problem = self._write_problem(headers)
            if problem:
                await _refuse(send, 403, problem)
                return
        await self._app(scope, receive, send)

    def _matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(
            given.encode("utf-8", "replace"), self._settings.token.encode()
        )

    def _write_problem(self, headers: dict[bytes, bytes]) -> str | None:
        if not self._settings.allow_writes:
            return READ_ONLY
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1") not in self._settings.origins:
            return "a write from another origin is refused"
        csrf = headers.get(CSRF_HEADER.encode(), b"")
        if not hmac.compare_digest(csrf, self._settings.csrf.encode()):
            return "a write without this page's CSRF value is refused: reload the page"
        return None

    async def _remember(self, scope: Scope, query: str, send: Send) -> None:
        """Keep the token as a cookie, and send the browser to the address without it."""
        rest = urlencode([(k, v) for k, v in parse_qsl(query) if k != "token"])
        location = scope.get("path", "/") + (f"?{rest}" if rest else "")
        cookie = (
            f"{self._settings.cookie_name}={self._settings.token}; Path=/; HttpOnly; "
            "SameSite=Strict"
        )
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("utf-8")),
                    (b"set-cookie", cookie.encode()),
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def _cookie(headers: dict[bytes, bytes], name: str) -> str | None:
    raw = headers.get(b"cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw.decode("latin-1"))
    except Exception:  # a malformed Cookie header is no token
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers") or [])
            names = {name.lower() for name, _ in headers}
            headers.extend(h for h in _HEADERS if h[0] not in names)
            if b"content-security-policy" not in names:
                headers.append((b"content-security-policy", _DEFAULT_POLICY))
            message = {**message, "headers": headers}
        await send(message)

    return sending


async def _refuse(send: Send, status: int, reason: str) -> None:
    body = (reason + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
