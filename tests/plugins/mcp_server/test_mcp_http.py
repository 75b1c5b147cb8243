"""``hermes mcp --http``: streamable HTTP on 127.0.0.1 behind a bearer token — refused
without one, 401 for a missing or wrong token, the SDK's HTTP client served with the right
one."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from installed_hermes import hermes_command
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_archive import Archive, build_archive, payload, server_environment

TOKEN = "t0k3n-for-the-http-test-5b9e1c7d2a"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Archive:
    return build_archive(tmp_path_factory.mktemp("mcp") / "home")


@pytest.fixture
def served(archive: Archive) -> Iterator[str]:
    """A running ``hermes mcp --http --port 0``; yields its URL (read from its start line)."""
    process = subprocess.Popen(
        [hermes_command(), "--home", str(archive.home), "mcp", "--http", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=server_environment(HERMES_MCP_TOKEN=TOKEN),
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("hermes mcp: serving on http://127.0.0.1:"), line
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


def test_http_without_a_token_refuses_to_start(archive: Archive) -> None:
    for extra, env in (([], {}), (["--token", "short"], {})):
        finished = subprocess.run(
            [hermes_command(), "--home", str(archive.home), "mcp", "--http", *extra],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=server_environment(**env),
            timeout=120,
        )
        assert finished.returncode == 1
        assert finished.stderr.count("\n") == 1 and "Traceback" not in finished.stderr
        assert "token" in finished.stderr


def test_a_missing_or_wrong_token_is_401(served: str) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    for authorization in (None, "Bearer wrong-token-0000000000000", f"Basic {TOKEN}", TOKEN):
        sent = dict(headers)
        if authorization is not None:
            sent["Authorization"] = authorization
        response = httpx.post(served, json=request, headers=sent, timeout=30)
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")


def test_the_sdk_http_client_with_the_token_searches(served: str, archive: Archive) -> None:
    async def run() -> Any:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(served, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            found = payload(await session.call_tool("session_search", {"query": "pelican"}))
            return tools, found

    tools, found = anyio.run(run)
    assert tools == {"session_search", "session_info"}
    assert [r["session_id"] for r in found["results"]] == [archive.ids["alpha_new"]]


def test_the_server_listens_on_loopback_only(served: str) -> None:
    port = int(served.rsplit(":", 1)[1].split("/")[0])
    assert served == f"http://127.0.0.1:{port}/mcp"
    assert Path("/proc/net/tcp").exists()
    listening = [
        line.split()[1]
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
        if line.split()[3] == "0A"  # LISTEN
    ]
    assert f"0100007F:{port:04X}" in listening
    assert f"00000000:{port:04X}" not in listening
