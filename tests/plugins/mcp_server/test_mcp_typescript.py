"""Interoperability: the TypeScript MCP SDK's client (``@modelcontextprotocol/sdk``, the
family Claude Code and Codex speak) against the installed ``hermes mcp`` over stdio —
initialise, list tools, each form of ``session_search``, a filter, a resource, bad arguments
and an unknown id.

Needs node and ``npm ci`` in ``tests/plugins/mcp_server/ts`` (CI's ``.ci/run`` does both);
elsewhere it skips with the reason, under ``CI=true`` it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from installed_hermes import hermes_command
from mcp_archive import build_archive, server_environment

CLIENT = Path(__file__).parent / "ts"


def node_or_skip() -> str:
    node = shutil.which("node")
    reason = None
    if node is None:
        reason = "node is not installed (the TypeScript SDK's client needs it)"
    elif not (CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        reason = f"the TypeScript SDK is not installed: run 'npm ci' in {CLIENT}"
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    assert node is not None
    return node


def structured(call: dict[str, Any]) -> dict[str, Any]:
    assert not call.get("isError"), call
    data: dict[str, Any] = json.loads(call["content"][0]["text"])
    assert call["structuredContent"] == data
    return data


def test_the_typescript_sdk_client_searches_reads_and_gets_errors(tmp_path: Path) -> None:
    node = node_or_skip()
    archive = build_archive(tmp_path / "home")
    alpha_new = archive.ids["alpha_new"]
    anchor = archive.messages["alpha_new"][10]
    calls = [
        {"query": "flamingo"},
        {"session_id": alpha_new, "around_message_id": anchor, "window": 1},
        {"session_id": alpha_new},
        {},
        {"query": "flamingo", "cwd": "/work/alpha"},
        {"query": "flamingo", "limit": "lots"},
        {"session_id": "no-such-session"},
    ]
    scenario = {
        "command": hermes_command(),
        "args": ["--home", str(archive.home), "mcp"],
        "env": server_environment(),
        "calls": [{"name": "session_search", "arguments": args} for args in calls],
        "reads": [
            f"hermes://session/{archive.ids['beta']}",
            "hermes://session/no-such-session",
        ],
    }
    scenario_file = tmp_path / "scenario.json"
    scenario_file.write_text(json.dumps(scenario), encoding="utf-8")
    finished = subprocess.run(
        [node, str(CLIENT / "interop.mjs"), str(scenario_file)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
        cwd=CLIENT,
    )
    assert finished.returncode == 0, finished.stderr
    answers = json.loads(finished.stdout)

    assert answers["server"]["name"] == "hermes"
    assert {tool["name"] for tool in answers["tools"]} == {"session_search", "session_info"}
    discovery, scroll, read, browse, filtered, bad, unknown = answers["calls"]
    assert structured(discovery)["form"] == "discovery"
    assert len(structured(discovery)["results"]) == 3
    assert [m["id"] for m in structured(scroll)["messages"]] == archive.messages["alpha_new"][9:12]
    assert structured(read)["session_id"] == alpha_new
    assert structured(browse)["sessions"][0]["session_id"] == alpha_new
    assert [r["session_id"] for r in structured(filtered)["results"]] == [
        archive.ids["alpha_old"]
    ]
    assert bad["isError"] and "limit must be an integer" in bad["content"][0]["text"]
    assert unknown["isError"] and "no-such-session" in unknown["content"][0]["text"]
    markdown, missing = answers["reads"]
    (content,) = markdown["result"]["contents"]
    assert content["mimeType"] == "text/markdown"
    assert "flamingo dashboard colours for the beta site" in content["text"]
    assert "no-such-session" in missing["error"]["message"]
