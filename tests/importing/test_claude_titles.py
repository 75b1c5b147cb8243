"""Titles of imported Claude Code conversations: the name the person gave with ``/rename``
(``custom-title``) is taken whole, Claude Code's own ``ai-title`` comes before the first
prompt, and the agents Claude Code runs for itself (cache warm-up, compaction) are named for
what they are, by their own id — through the installed ``hermes``."""

from __future__ import annotations

import json
from pathlib import Path

from claude_helpers import SESSION, lines, prompt, reply, text, write
from installed_hermes import run_hermes_in


def titles(home: Path, *files: Path) -> list[str]:
    """Import ``files`` into ``home`` with the installed command; every stored title."""
    env = {"HERMES_PLUGINS": "hermes-import-claude"}
    result = run_hermes_in(home, "sessions", "import", *map(str, files), env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    listed = run_hermes_in(home, "sessions", "list", "--all", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    return sorted(session["title"] for session in json.loads(listed.stdout))


def conversation(*extra: dict[str, object]) -> bytes:
    return lines(
        prompt("u1", 1, "Why does the build fail on CI only?", sessionId=SESSION),
        reply("a1", 2, text("A missing env var."), message_id="m1", sessionId=SESSION),
        *extra,
    )


def test_a_rename_in_claude_code_is_the_title_and_the_last_one_wins(tmp_path: Path) -> None:
    renamed = write(
        tmp_path / "logs" / f"{SESSION}.jsonl",
        conversation(
            {"type": "ai-title", "sessionId": SESSION, "aiTitle": "CI build failure"},
            {"type": "custom-title", "sessionId": SESSION, "customTitle": "first name"},
            {"type": "custom-title", "sessionId": SESSION, "customTitle": "  CI   env vars "},
        ),
    )
    assert titles(tmp_path / "home", renamed) == ["CI env vars"]


def test_claude_codes_own_title_comes_before_the_first_prompt(tmp_path: Path) -> None:
    named = write(
        tmp_path / "logs" / f"{SESSION}.jsonl",
        conversation({"type": "ai-title", "sessionId": SESSION, "aiTitle": "CI build failure"}),
    )
    plain = write(tmp_path / "other" / f"{SESSION[:-1]}8.jsonl", conversation())
    assert titles(tmp_path / "home", named, plain) == [
        "Imported from Claude Code: CI build failure",
        "Imported from Claude Code: Why does the build fail on CI only?",
    ]


def test_warm_up_and_compaction_agents_are_named_for_what_they_are(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-home-ana-app"
    session = write(folder / f"{SESSION}.jsonl", conversation())
    subagents = folder / SESSION / "subagents"
    for agent, first in (("a1b2c3", "Warmup"), ("a4d5e6", "Warmup"),
                         ("acompact-77aa", "Summarise the conversation so far"),
                         ("a7f8a9", "Find every TODO in src/")):  # fmt: skip
        write(
            subagents / f"agent-{agent}.jsonl",
            lines(
                prompt("s1", 3, first, sessionId=SESSION, isSidechain=True, agentId=agent),
                reply(
                    "s2",
                    4,
                    text("Done."),
                    message_id=f"m-{agent}",
                    sessionId=SESSION,
                    isSidechain=True,
                    agentId=agent,
                ),
            ),
        )
    assert titles(tmp_path / "home", session) == [
        "Claude Code compaction agent acompact-77aa",
        "Claude Code subagent: Find every TODO in src/",
        "Claude Code warm-up agent a1b2c3",
        "Claude Code warm-up agent a4d5e6",
        "Imported from Claude Code: Why does the build fail on CI only?",
    ]
