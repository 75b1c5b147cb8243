"""``hermes mcp --http``: streamable HTTP on 127.0.0.1, behind a bearer token.

The SDK's session manager serves ``/mcp`` inside a Starlette app run by uvicorn on a socket
bound to 127.0.0.1 only. Every request must carry ``Authorization: Bearer <token>``
(compared in constant time); anything else is a 401 before the MCP layer sees it. The SDK's
DNS-rebinding guard accepts only local ``Host`` and ``Origin`` headers.
"""

from __future__ import annotations

import contextlib
import hmac
import sys
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from hermes_core.loopback import LOOPBACK, listen_on_loopback

PATH = "/mcp"


class BearerTokenGate:
    """ASGI middleware: only requests with the right bearer token pass."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        given = dict(scope.get("headers") or ()).get(b"authorization", b"")
        if hmac.compare_digest(given, self._expected):
            await self._app(scope, receive, send)
            return
        response = JSONResponse(
            {"error": "missing or wrong bearer token"},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="hermes mcp"'},
        )
        await response(scope, receive, send)


def http_app(server: Server[Any, Any], token: str, port: int) -> ASGIApp:
    """The ASGI app: ``/mcp`` (streamable HTTP) behind the token gate."""
    local = [f"{LOOPBACK}:{port}", f"localhost:{port}", LOOPBACK, "localhost"]
    manager = StreamableHTTPSessionManager(
        app=server,
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=local,
            allowed_origins=[f"http://{host}" for host in local],
        ),
    )

    async def handle(scope: Scope, receive: Receive, send: Send) -> None:
        await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    starlette = Starlette(routes=[Mount(PATH, app=handle)], lifespan=lifespan)
    return BearerTokenGate(starlette, token)


def serve_http(server: Server[Any, Any], token: str, port: int) -> None:
    """Serve until interrupted; prints the address (with the port chosen, for ``--port 0``)
    on stderr once the socket listens."""
    import uvicorn

    listener = listen_on_loopback(port)
    bound = listener.getsockname()[1]
    config = uvicorn.Config(
        http_app(server, token, bound), log_level="warning", lifespan="on", access_log=False
    )
    print(f"hermes mcp: serving on http://{LOOPBACK}:{bound}{PATH}", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[listener])
