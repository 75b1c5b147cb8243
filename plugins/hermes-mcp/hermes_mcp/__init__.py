"""``hermes mcp``: the session archive served to any agent over the Model Context Protocol.

The entry point (:mod:`.plugin`) only adds the command; the server's modules load when it runs:
:mod:`.archive` (the tools and resources, independent of any transport), :mod:`.server`
(the MCP SDK's low-level server over them), :mod:`.http` (streamable HTTP with a bearer
token), :mod:`.freshness` (bringing new Claude Code / Codex lines in before an answer).
"""
