"""The MCP server: the SDK's low-level ``Server`` over :mod:`.tools` and :mod:`.resources`.

The low-level server is used (not FastMCP) so the tool's schema is the agent tool's own JSON
schema, and its arguments reach the tool's own checks, whose one-line messages come back as
MCP tool errors (``isError``). A resource that does not exist is a JSON-RPC error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

from .freshness import Freshness
from .resources import SESSION_TEMPLATE, ArchiveResources, ResourceFailure
from .settings import ServerSettings
from .tools import ArchiveTools, ToolFailure

if TYPE_CHECKING:
    from hermes_core.plugins import PluginHost
    from hermes_core.store.protocol import Store

SERVER_NAME = "hermes"
RESOURCE_NOT_FOUND = -32002
"""The JSON-RPC error code MCP uses for an unknown resource."""

INSTRUCTIONS = (
    "The user's past AI-agent sessions (Hermes chat, messaging gateways, imported Claude Code, "
    "Codex and Hermes Agent history). Call session_search to recall earlier work before "
    "asking the user to repeat it; read hermes://session/{id} for a whole session as Markdown."
)


def server_version() -> str:
    try:
        return version("hermes-mcp")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def build_server(store: Store, host: PluginHost, settings: ServerSettings) -> Server[Any, Any]:
    """A server answering from ``store`` as ``settings`` say (transport not chosen yet)."""
    from hermes_core.exporting.redacting import record_redactor
    from hermes_core.redaction import Redactor

    redactor = Redactor.from_host(host) if settings.redact else None
    redact_value = redactor.redact_value if redactor is not None else None
    tools = ArchiveTools(store, allow_writes=settings.allow_writes)
    resources = ArchiveResources(
        store,
        host,
        redact_record=record_redactor(host) if settings.redact else None,
        redact_value=redact_value,
    )
    freshness = (
        Freshness(
            store,
            {name: host.importer(name) for name in settings.importers},
            every=settings.import_every,
        )
        if settings.importers
        else None
    )
    server: Server[Any, Any] = Server(SERVER_NAME, server_version(), instructions=INSTRUCTIONS)

    def bring_in_new_lines() -> None:
        if freshness is not None:
            freshness.refresh()

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return [
            types.Tool(name=d.name, description=d.description, inputSchema=d.input_schema)
            for d in tools.definitions()
        ]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            bring_in_new_lines()
            payload = tools.call(name, arguments)
        except ToolFailure as failure:
            return _tool_error(str(failure))
        except Exception as error:  # a defect of ours: say so, and keep serving
            print(f"hermes mcp: {name} failed: {error!r}", file=sys.stderr, flush=True)
            return _tool_error(f"internal error in {name}: {type(error).__name__}")
        if redact_value is not None:
            payload = redact_value(payload)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
            structuredContent=payload,
        )

    @server.list_resources()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_resources() -> list[types.Resource]:
        bring_in_new_lines()
        return [
            types.Resource(
                uri=AnyUrl(entry.uri),
                name=entry.name,
                description=entry.description,
                mimeType=entry.mime_type,
            )
            for entry in resources.listed()
        ]

    @server.list_resource_templates()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_resource_templates() -> list[types.ResourceTemplate]:
        return [
            types.ResourceTemplate(
                uriTemplate=SESSION_TEMPLATE,
                name="session",
                description="A stored session as Markdown; {id} is a session id, a unique id "
                "prefix or a title.",
                mimeType="text/markdown",
            )
        ]

    @server.read_resource()  # type: ignore[no-untyped-call, untyped-decorator]
    async def read_resource(uri: AnyUrl) -> Iterable[ReadResourceContents]:
        bring_in_new_lines()
        try:
            text, mime_type = resources.read(str(uri))
        except ResourceFailure as failure:
            raise McpError(types.ErrorData(code=RESOURCE_NOT_FOUND, message=str(failure))) from None
        return [ReadResourceContents(content=text, mime_type=mime_type)]

    return server


def _tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], isError=True
    )
