"""Importing a log while the other tool is still writing it: whenever imports run — mid-answer,
mid-tool-call, between turns — and however often, the store ends up with what one import of
the final log gives (same messages, same token totals), through the installed ``hermes``.
An import killed while it reads the growing turn again loses nothing either."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from claude_helpers import SESSION, chain, lines, prompt, text
from installed_hermes import run_hermes_in
from test_import_crash import kill_mid_import

from hermes_core.store import SessionStore


def answer(
    uuid: str, second: int, block: dict[str, Any], message_id: str, out: int
) -> dict[str, Any]:
    """One assistant record (Claude Code writes one per content block of an API message,
    each with the usage so far)."""
    message = {
        "id": message_id, "type": "message", "role": "assistant", "model": "claude-opus-4-7",
        "content": [block], "usage": {"input_tokens": 100, "cache_read_input_tokens": 1000,
                                      "output_tokens": out},
    }  # fmt: skip
    return chain("assistant", uuid, None, second, message=message, sessionId=SESSION)


def tool_result(uuid: str, second: int, call_id: str) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}]
    return chain("user", uuid, None, second, message={"role": "user", "content": content},
                 sessionId=SESSION)  # fmt: skip


RECORDS = [
    prompt("u1", 1, "Fix the flaky test in parser_test.py", sessionId=SESSION),
    answer("a1", 2, {"type": "thinking", "thinking": "look first"}, "m1", 5),
    answer("a2", 3, text("Let me read the test."), "m1", 9),
    answer("a3", 4, {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}, "m1", 20),
    tool_result("r1", 5, "t1"),
    answer("a4", 6, text("The test depends on dict order."), "m2", 12),
    answer("a5", 7, {"type": "tool_use", "id": "t2", "name": "Edit", "input": {}}, "m2", 30),
    tool_result("r2", 8, "t2"),
    answer("a6", 9, text("Fixed: it now sorts the keys."), "m3", 15),
    prompt("u2", 10, "Run the whole suite", sessionId=SESSION),
    answer("a7", 11, {"type": "tool_use", "id": "t3", "name": "Bash", "input": {}}, "m4", 8),
    tool_result("r3", 12, "t3"),
    answer("a8", 13, text("All 212 tests pass."), "m5", 11),
]


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_hermes_in(home, *args, env={"HERMES_PLUGINS": "hermes-import-claude"})


def stored(home: Path) -> tuple[list[tuple[str, str]], tuple[int, int], int]:
    """(role, content) of every message, the token totals and the message count of the one
    imported session."""
    with SessionStore.open(home) as store:
        [session] = store.select_sessions(None)
        messages = [(m.role, m.content) for m in store.messages(session.id)]
        return messages, (session.input_tokens, session.output_tokens), session.message_count


def fresh_import(tmp_path: Path) -> tuple[list[tuple[str, str]], tuple[int, int], int]:
    log = tmp_path / "final" / f"{SESSION}.jsonl"
    log.parent.mkdir()
    log.write_bytes(lines(*RECORDS))
    result = hermes(tmp_path / "fresh", "sessions", "import", str(log))
    assert result.returncode == 0, result.stderr
    return stored(tmp_path / "fresh")


@pytest.mark.parametrize(
    "cuts",
    [
        [3],  # mid-answer: the first text block written, the tool call not yet
        [4, 5],  # after a tool call, then after its result
        [2, 6, 7, 9],  # many imports during one long turn
        [9, 10],  # between turns: a prompt not answered yet
        [11],  # the second turn under way
        list(range(1, len(RECORDS))),  # after every record
    ],
    ids=["mid-answer", "mid-tool", "often", "between-turns", "second-turn", "every-record"],
)
def test_imports_during_a_live_session_give_what_one_import_of_the_final_log_gives(
    tmp_path: Path, cuts: list[int]
) -> None:
    expected = fresh_import(tmp_path)
    log = tmp_path / "live" / f"{SESSION}.jsonl"
    log.parent.mkdir()
    home = tmp_path / "home"
    for cut in [*cuts, len(RECORDS)]:
        log.write_bytes(lines(*RECORDS[:cut]))  # the tool appends; the log only grows
        result = hermes(home, "sessions", "import", str(log))
        assert result.returncode == 0, result.stdout + result.stderr
    assert stored(home) == expected
    again = hermes(home, "sessions", "import", str(log))
    assert "already imported" in again.stdout
    assert stored(home) == expected


def test_the_final_answer_replaces_the_partial_one_it_grew_from(tmp_path: Path) -> None:
    log = tmp_path / "live" / f"{SESSION}.jsonl"
    log.parent.mkdir()
    home = tmp_path / "home"
    log.write_bytes(lines(*RECORDS[:3]))
    assert hermes(home, "sessions", "import", str(log)).returncode == 0
    assert stored(home)[0] == [
        ("user", "Fix the flaky test in parser_test.py"),
        ("assistant", "Let me read the test."),
    ]
    log.write_bytes(lines(*RECORDS[:9]))
    grown = hermes(home, "sessions", "import", str(log))
    assert grown.returncode == 0, grown.stderr
    assert "was read again" in grown.stdout
    [_, final] = stored(home)[0]
    assert final[0] == "assistant" and final[1].endswith("Fixed: it now sorts the keys.")


@pytest.mark.slow
def test_an_import_killed_while_reading_the_open_turn_again_loses_nothing(
    tmp_path: Path,
) -> None:
    expected = fresh_import(tmp_path)
    log = tmp_path / "live" / f"{SESSION}.jsonl"
    log.parent.mkdir()
    home = tmp_path / "home"
    log.write_bytes(lines(*RECORDS[:7]))
    assert hermes(home, "sessions", "import", str(log)).returncode == 0
    log.write_bytes(lines(*RECORDS))
    kill_mid_import(home, log, stall_after=0)

    finished = hermes(home, "sessions", "import", str(log))
    assert finished.returncode == 0, finished.stderr
    assert stored(home) == expected
    verdict = hermes(home, "sessions", "repair", "--check-only")
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert json.dumps(stored(home)[0]).count("All 212 tests pass.") == 1
