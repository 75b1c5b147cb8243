"""Importing a Codex rollout while Codex is still writing it: whenever imports run and however
often, the store ends up with what one import of the final rollout gives (same messages, same
token totals), through the installed ``hermes``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from codex_helpers import (
    ROLLOUT_NAME,
    agent_event,
    assistant_item,
    meta,
    tokens,
    tool_call,
    user_event,
    user_item,
)
from installed_hermes import run_hermes_in

from hermes_core.store import SessionStore

LINES = [
    meta(),
    user_item("Why is the cache test flaky?", 1),
    user_event("Why is the cache test flaky?", 1),
    agent_event("Looking at the test first.", 2),
    assistant_item("Looking at the test first.", 2),
    tool_call("shell", "c1", 3),
    tokens(1200, 80, 3),
    agent_event("It sleeps instead of waiting on the event.", 4),
    tool_call("apply_patch", "c2", 5),
    tokens(2600, 190, 5),
    agent_event("Fixed: it now waits on the event.", 6),
    tokens(3100, 240, 6),
    user_event("Run it fifty times", 7),
    user_item("Run it fifty times", 7),
    tool_call("shell", "c3", 8),
    tokens(4000, 260, 8),
    agent_event("50 of 50 passed.", 9),
    assistant_item("50 of 50 passed.", 9),
    tokens(4500, 300, 9),
]


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_hermes_in(home, *args, env={"HERMES_PLUGINS": "hermes-import-codex"})


def stored(home: Path) -> tuple[list[tuple[str, str]], tuple[int, int], int]:
    with SessionStore.open(home) as store:
        [session] = store.select_sessions(None)
        messages = [(m.role, m.content) for m in store.messages(session.id)]
        return messages, (session.input_tokens, session.output_tokens), session.message_count


def import_cuts(tmp_path: Path, name: str, cuts: list[int]) -> Path:
    """Write the rollout up to each cut in turn (it only grows), importing after each."""
    log = tmp_path / name / ROLLOUT_NAME
    log.parent.mkdir()
    home = tmp_path / f"{name}-home"
    for cut in cuts:
        log.write_text("".join(LINES[:cut]), encoding="utf-8")
        result = hermes(home, "sessions", "import", "--from", "codex", str(log))
        assert result.returncode == 0, result.stdout + result.stderr
    return home


@pytest.mark.parametrize(
    "cuts",
    [
        [3],  # the prompt written once, its twin not yet
        [4, 6],  # mid-answer, then after a tool call
        [5, 8, 10],  # many imports during one long answer
        [12, 13],  # between turns, then a prompt with no answer yet
        list(range(2, len(LINES))),  # after every line
    ],
    ids=["half-prompt", "mid-answer", "often", "between-turns", "every-line"],
)
def test_imports_during_a_live_session_give_what_one_import_of_the_final_rollout_gives(
    tmp_path: Path, cuts: list[int]
) -> None:
    expected = stored(import_cuts(tmp_path, "fresh", [len(LINES)]))
    assert expected[0][0] == ("user", "Why is the cache test flaky?")
    assert expected[1] == (4500, 300)
    home = import_cuts(tmp_path, "live", [*cuts, len(LINES)])
    assert stored(home) == expected
