"""``hermes mcp`` over stdio: what Claude Code, Codex and Claude Desktop start.

Standard output carries the protocol and nothing else: while the server runs, anything the
process prints by accident goes to standard error instead.
"""

from __future__ import annotations

import io
import sys
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def serve_stdio(server: Server[Any, Any]) -> None:
    """Serve one client on stdin/stdout until it closes stdin."""
    protocol_out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
    sys.stdout = sys.stderr

    async def run() -> None:
        async with stdio_server(stdout=anyio.wrap_file(protocol_out)) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)
