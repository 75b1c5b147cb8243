"""Interoperability: the TypeScript ACP SDK's client (``@agentclientprotocol/sdk``, the
reference implementation editors build on) against the installed ``hermes acp`` over stdio —
initialise, a new session, a streamed prompt, the session list and an unknown session.

Needs node and ``npm ci`` in ``tests/plugins/acp_agent/ts`` (CI's ``.ci/run`` does both);
elsewhere it skips with the reason, under ``CI=true`` it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from acp_harness import agent_env, server, shown_messages
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply

__all__ = ["server"]

CLIENT = Path(__file__).parent / "ts"
ANSWER = "Editors and agents meet over JSON-RPC."


def node_or_skip() -> str:
    node = shutil.which("node")
    reason = None
    if node is None:
        reason = "node is not installed (the TypeScript ACP SDK's client needs it)"
    elif not (CLIENT / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
        reason = f"the TypeScript ACP SDK is not installed: run 'npm ci' in {CLIENT}"
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    assert node is not None
    return node


def test_the_typescript_sdk_client_creates_prompts_and_lists(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    node = node_or_skip()
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    server.add(Reply(text=ANSWER, chunk_chars=6))
    env = agent_env(home, server)
    scenario = {
        "command": hermes_command(),
        "args": ["--home", str(home), "acp"],
        "env": env,
        "cwd": str(project),
        "prompt": "What is ACP?",
        "unknownSession": "20260101_000000_abcdef",
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
    assert "Traceback" not in finished.stderr
    seen = json.loads(finished.stdout)

    assert seen["initialized"]["protocolVersion"] == 1
    assert seen["initialized"]["agentCapabilities"]["loadSession"] is True
    assert seen["initialized"]["agentInfo"]["name"] == "hermes"
    session_id = seen["created"]["sessionId"]
    assert seen["prompted"] == {"stopReason": "end_turn"}
    chunks = [
        update["update"]["content"]["text"]
        for update in seen["updates"]
        if update["sessionId"] == session_id
        and update["update"]["sessionUpdate"] == "agent_message_chunk"
    ]
    assert len(chunks) > 1
    assert "".join(chunks) == ANSWER
    (listed,) = seen["listed"]["sessions"]
    assert listed["sessionId"] == session_id
    assert listed["cwd"] == str(project.resolve())
    assert seen["unknown"] == {"code": -32002, "message": "no session 20260101_000000_abcdef"}
    assert seen["exitCode"] == 0
    assert [(m["role"], m["content"]) for m in shown_messages(home, env, session_id)] == [
        ("user", "What is ACP?"),
        ("assistant", ANSWER),
    ]
