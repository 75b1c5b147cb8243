"""What an editor reads from ``hermes acp``: raw JSON-RPC lines in, and on stdout nothing but
JSON-RPC 2.0 answers — errors included —; a line that is not JSON is one log line on stderr."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from acp_harness import agent_env
from installed_hermes import hermes_command


def test_stdout_carries_only_json_rpc_and_errors_are_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new",
         "params": {"cwd": str(tmp_path), "mcpServers": []}},
        {"jsonrpc": "2.0", "id": 3, "method": "session/list", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": {"cursor": "nope"}},
        {"jsonrpc": "2.0", "id": 5, "method": "session/prompt",
         "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}},
        {"jsonrpc": "2.0", "id": 6, "method": "no/such_method", "params": {}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nope"}},
    ]  # fmt: skip
    finished = subprocess.run(
        [hermes_command(), "--home", str(home), "acp"],
        input="".join(json.dumps(request) + "\n" for request in requests) + "this is not json\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=agent_env(home, None),
    )
    assert finished.returncode == 0
    (logged,) = finished.stderr.splitlines()  # the line that is not JSON, in one line
    assert "Error parsing JSON-RPC message: JSONDecodeError" in logged
    answers = [json.loads(line) for line in finished.stdout.splitlines()]
    assert all(answer["jsonrpc"] == "2.0" for answer in answers)
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id) == [1, 2, 3, 4, 5, 6]
    assert by_id[1]["result"]["protocolVersion"] == 1
    assert by_id[2]["error"]["message"].startswith("no model is configured")
    assert by_id[3]["result"] == {"sessions": []}
    assert by_id[4]["error"]["message"] == "cursor 'nope' is not one this agent gave"
    assert by_id[5]["error"] == {"code": -32002, "message": "no session nope", "data": {"sessionId": "nope"}}
    assert by_id[6]["error"]["code"] == -32601
