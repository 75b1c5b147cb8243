"""``hermes mcp --import claude``: a line appended to a Claude Code log between two calls is
found by the second call, with no daemon and no import command in between; off by default."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from installed_hermes import hermes_command
from mcp import ClientSession
from mcp_archive import payload, server_environment, talk

SESSION = "5e55e55e-aaaa-4bbb-8ccc-000000000042"


def claude_line(uuid: str, parent: str | None, role: str, text: str, second: int) -> str:
    record: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/gamma",
        "sessionId": SESSION,
        "version": "2.0.37",
        "type": role,
        "uuid": uuid,
        "timestamp": f"2026-11-30T10:00:{second:02d}.000Z",
        "message": {"role": role, "content": text}
        if role == "user"
        else {
            "id": f"msg_{uuid}",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-7",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 5},
        },
    }
    if role == "assistant":
        record["requestId"] = f"req_{uuid}"
    return json.dumps(record) + "\n"


def claude_log(config: Path) -> Path:
    log = config / "projects" / "-work-gamma" / f"{SESSION}.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text(
        claude_line("u1", None, "user", "sketch the heron feeder", 1)
        + claude_line("a1", "u1", "assistant", "heron feeder sketched", 2),
        encoding="utf-8",
    )
    return log


def test_import_brings_in_a_line_appended_between_two_calls(tmp_path: Path) -> None:
    config = tmp_path / "claude"
    log = claude_log(config)

    async def scenario(session: ClientSession) -> Any:
        first = payload(await session.call_tool("session_search", {"query": "heron"}))
        before = payload(await session.call_tool("session_search", {"query": "kingfisher"}))
        with log.open("a", encoding="utf-8") as appended:
            appended.write(claude_line("u2", "a1", "user", "now add a kingfisher perch", 3))
        after = payload(await session.call_tool("session_search", {"query": "kingfisher"}))
        return first, before, after

    first, before, after = talk(
        tmp_path / "home",
        scenario,
        "--import",
        "claude",
        "--import-every",
        "0",
        env=server_environment(CLAUDE_CONFIG_DIR=str(config)),
    )
    (found,) = first["results"]
    assert found["source"] == "claude-code"
    assert before["results"] == []
    (grown,) = after["results"]
    assert grown["session_id"] == found["session_id"]  # appended to the same session
    assert "kingfisher" in grown["snippet"]


def test_without_import_the_logs_are_left_alone(tmp_path: Path) -> None:
    config = tmp_path / "claude"
    claude_log(config)

    async def scenario(session: ClientSession) -> Any:
        return payload(await session.call_tool("session_search", {"query": "heron"}))

    found = talk(
        tmp_path / "home", scenario, env=server_environment(CLAUDE_CONFIG_DIR=str(config))
    )
    assert found["results"] == []


def test_an_unknown_importer_is_one_line(tmp_path: Path) -> None:
    finished = subprocess.run(
        [hermes_command(), "--home", str(tmp_path / "home"), "mcp", "--import", "claude,nosuch"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=server_environment(),
        timeout=120,
    )
    assert finished.returncode == 1
    assert finished.stderr.count("\n") == 1 and "nosuch" in finished.stderr
