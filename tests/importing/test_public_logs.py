"""Real agent logs from public open-source repositories (tests/data/importing/public, origins in
its PROVENANCE.md) imported through the installed ``hermes sessions import``.

Every expected figure below was worked out by reading the log by hand, not by copying our
output: the prompts and answers, the tools run, the token totals (a Claude Code message's usage
counted once per message id, as Claude Code repeats it on each record of one message; a Codex
rollout's last cumulative ``token_count``, whose input includes its cached input), the model
and the working folder. Each log is imported from a private copy, twice: the second import
changes nothing and the copy's bytes and modification times stay as they were."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from claude_helpers import fingerprint
from installed_hermes import run_hermes_in

PUBLIC = Path(__file__).resolve().parents[1] / "data" / "importing" / "public"
CLAUDE_PROJECTS = Path("claude") / "projects"
CODEX_SESSIONS = Path("codex") / "sessions"


@dataclass(frozen=True)
class Delegate:
    """A subagent log that comes along with its session."""

    title: str
    model: str
    tokens: dict[str, int]
    prompt: str  # how its one prompt begins
    tools: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Expected:
    """What one public log holds, read off the file by hand."""

    log: Path  # relative to PUBLIC
    prompts: list[str]
    answers: int
    tools: list[str]  # the tools run, in order, shown as "[ran tool: NAME]" notes
    tokens: dict[str, int]
    model: str
    workspace: str
    in_answers: list[str] = field(default_factory=list)
    not_prompts: list[str] = field(default_factory=list)
    delegates: list[Delegate] = field(default_factory=list)

    @property
    def source(self) -> str:
        return "Claude Code" if self.log.parts[0] == "claude" else "Codex CLI"


LOGS: dict[str, Expected] = {
    # Claude Code 2.1.14, `claude -p` run by a plugin's snapshot tests; a Stop hook's feedback
    # (isMeta) comes back as a user record and is no prompt.
    "claude-2.1.14-stop-hook": Expected(
        log=CLAUDE_PROJECTS / "-tmp-tmp74wiyiny" / "de3b8b19-5bc0-4a2a-934a-1b6806567e25.jsonl",
        prompts=['Write a shell script called hello.sh that prints "Hello world" and run it.'],
        answers=1,
        tools=["Write", "Bash"],
        tokens={"input": 3, "output": 29, "cache_write": 3539, "cache_read": 71036},
        model="claude-opus-4-5-20251101",
        workspace="/tmp/tmp74wiyiny",
        in_answers=["made it executable", "The script outputs `Hello world` as expected."],
        not_prompts=["Stop hook feedback"],
    ),
    # Claude Code 2.0.64 through Bedrock: three prompts, six tools, one message's usage
    # repeated on four records, and two sibling warm-up agents (isSidechain), one of them on
    # another model without cache figures.
    "claude-2.0.64-sidechains": Expected(
        log=CLAUDE_PROJECTS / "-tmp-private" / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
        prompts=[
            "create hello.py, md and js",
            "update py with one liner comment",
            "delete js",
        ],
        answers=3,
        tools=["Write", "Write", "Write", "Read", "Edit", "Bash"],
        tokens={"input": 33, "output": 806, "cache_write": 37172, "cache_read": 214627},
        model="claude-sonnet-4-5-20250929",
        workspace="/tmp/private",
        in_answers=["I've deleted hello.js."],
        delegates=[
            Delegate(
                title="Claude Code warm-up agent 36541525",
                model="claude-sonnet-4-5-20250929",
                tokens={"input": 3, "output": 3, "cache_write": 16976, "cache_read": 0},
                prompt="Warmup",
            ),
            Delegate(
                title="Claude Code warm-up agent 50243ee8",
                model="converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0",
                tokens={"input": 16878, "output": 237, "cache_write": 0, "cache_read": 0},
                prompt="Warmup",
            ),
        ],
    ),
    # Claude Code 2.1.7: a thinking block, a stop_hook_summary system record, and fifteen
    # `summary` records about other conversations (none of their leafUuids is in this file).
    "claude-2.1.7-thinking": Expected(
        log=CLAUDE_PROJECTS
        / "-Users-User-repo-codemie-ai-codemie-code"
        / "3fb74381-1bf4-475e-8c6f-442d872b1bcf.jsonl",
        prompts=["show tools"],
        answers=1,
        tools=[],
        tokens={"input": 10, "output": 574, "cache_write": 30383, "cache_read": 0},
        model="claude-sonnet-4-5-20250929",
        workspace="/Users/User/repo/codemie-ai/codemie-code",
        in_answers=["# Available Tools"],
    ),
    # Claude Code 2.1.7: a prompt naming an agent, thinking blocks, a Task call whose
    # subagent writes <session>/subagents/agent-a485154.jsonl (sidechain records carrying
    # agentId); the subagent's log is a prefix of whole records (15 of its lines).
    "claude-2.1.7-task-subagent": Expected(
        log=CLAUDE_PROJECTS
        / "-Users-User-repo-codemie-ai-codemie-code"
        / "e9fb405b-169f-40eb-9396-7e75076f045d.jsonl",
        prompts=[
            '@"solution-architect (agent)" analyze existing CLI command and create '
            "specification for adding missing CLI commands. follow best practices in CLI to "
            "add valuable commands"
        ],
        answers=1,
        tools=["Task", "Bash", "Bash", "Bash", "Bash", "Bash", "Bash"],
        tokens={"input": 82, "output": 1244, "cache_write": 61416, "cache_read": 154285},
        model="claude-sonnet-4-5-20250929",
        workspace="/Users/User/repo/codemie-ai/codemie-code",
        in_answers=["The solution-architect agent has completed the analysis."],
        delegates=[
            Delegate(
                title="Claude Code subagent: Analyze the existing CLI command structure in "
                "this CodeMie…",
                model="claude-sonnet-4-5-20250929",
                tokens={"input": 5205, "output": 716, "cache_write": 35226, "cache_read": 0},
                prompt="Analyze the existing CLI command structure in this CodeMie CLI project",
                tools=["Glob", "Glob", "Read", "Read", "Read", "Read", "Read", "Read", "Grep"],
            )
        ],
    ),
    # Claude Code 2.1.39: hook_progress records, thinking, five Bash calls; the session's log is
    # a prefix of whole records (its first 47 lines), its compaction agent's log
    # (<session>/subagents/agent-acompact-*.jsonl, two isMeta records before the compaction
    # prompt) is whole, with the one-record usage Claude Code leaves there (6 output tokens).
    "claude-2.1.39-compaction-agent": Expected(
        log=CLAUDE_PROJECTS
        / "-home-USER-projects-spotter-worktrees-spotter-gqc"
        / "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        prompts=["Implement spotter-gqc"],
        answers=1,
        tools=["Bash", "Bash", "Bash", "Bash", "Bash"],
        tokens={"input": 4, "output": 637, "cache_write": 9494, "cache_read": 43721},
        model="claude-opus-4-6",
        workspace="/home/USER/projects/spotter-worktrees/spotter-gqc",
        in_answers=['Let me start by understanding what "spotter-gqc" means'],
        delegates=[
            Delegate(
                title="Claude Code compaction agent acompact-fffbd0",
                model="claude-opus-4-6",
                tokens={"input": 3, "output": 6, "cache_write": 2487, "cache_read": 166758},
                prompt="Your task is to create a detailed summary of the conversation so far",
            )
        ],
    ),
    # Codex CLI 0.77.0 `codex exec` on a custom provider: AGENTS.md and environment context
    # as user items, ghost_snapshot, reasoning, three shell calls, a null token_count; the
    # log ends mid-turn, before any answer text.
    "codex-0.77.0-exec": Expected(
        log=CODEX_SESSIONS
        / "2026/01/02/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
        prompts=["what is current repository about? summarize purpuse and explain goals"],
        answers=1,
        tools=["shell", "shell", "shell"],
        tokens={"input": 22474 - 14848, "output": 300, "cache_write": 0, "cache_read": 14848},
        model="gpt-5-1-codex-2025-11-13",
        workspace="/Users/Nikita_Levyankov/repos/EPMCDME/codemie-ai/codemie-code",
        not_prompts=["AGENTS.md instructions", "<environment_context>"],
    ),
    # Codex CLI 0.125.0 in the terminal UI (codex-tui): a developer message, a git block in
    # session_meta, reasoning, an exec_command call; a prefix of whole records (its first 11
    # lines), so the turn's answer is not in it.
    "codex-0.125.0-tui": Expected(
        log=CODEX_SESSIONS
        / "2026/05/11/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
        prompts=["show tools"],
        answers=1,
        tools=["exec_command"],
        tokens={"input": 18703, "output": 167, "cache_write": 0, "cache_read": 0},
        model="gpt-5.5",
        workspace="/Users/Sample_User/repos/codemie-ai/codemie-code",
        not_prompts=["<permissions instructions>", "AGENTS.md instructions"],
    ),
}


def hermes(home: Path, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``hermes`` with the copied Claude Code and Codex folders under ``root``
    and no real home folder to wander into."""
    env = {
        "CLAUDE_CONFIG_DIR": str(root / "claude"),
        "CODEX_HOME": str(root / "codex"),
        "HOME": str(root.parent / "nobody"),
    }
    return run_hermes_in(home, *args, env=env)


def private_copy(tmp_path: Path) -> Path:
    """The public logs copied (modification times kept) to a folder of this test's own."""
    root = tmp_path / "logs"
    shutil.copytree(PUBLIC, root)
    return root


def imported(output: str) -> list[tuple[str, str]]:
    """``(source, session id)`` of every "✓ Imported" line."""
    return re.findall(r"✓ Imported (Claude Code|Codex CLI) session as (\S+):", output)


def shown(home: Path, root: Path, session_id: str) -> dict[str, Any]:
    result = hermes(home, root, "sessions", "show", session_id, "--json")
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def texts(session: dict[str, Any], role: str) -> list[str]:
    return [m["content"] or "" for m in session["messages"] if m["role"] == role]


def notes(session: dict[str, Any]) -> list[str]:
    """The tools an assistant ran, in order, from their ``[ran tool: NAME]`` notes."""
    return [
        name
        for text in texts(session, "assistant")
        for name in re.findall(r"^\[ran tool: ([^\]]+)\]$", text, re.MULTILINE)
    ]


@pytest.mark.parametrize("name", sorted(LOGS))
def test_a_public_log_imports_with_the_facts_it_holds(name: str, tmp_path: Path) -> None:
    expected = LOGS[name]
    root = private_copy(tmp_path)
    before = fingerprint(root)
    home = tmp_path / "home"

    first = hermes(home, root, "sessions", "import", str(root / expected.log))

    assert first.returncode == 0, first.stdout + first.stderr
    sessions = imported(first.stdout)
    assert len(sessions) == 1, first.stdout
    source, session_id = sessions[0]
    assert source == expected.source
    assert "0 malformed line(s) skipped, 0 unreadable" in first.stdout
    session = shown(home, root, session_id)
    assert texts(session, "user") == expected.prompts
    assert len(texts(session, "assistant")) == expected.answers
    assert session["message_count"] == len(expected.prompts) + expected.answers
    assert session["title"].startswith(f"Imported from {expected.source}: ")
    assert expected.prompts[0][:20] in session["title"]
    assert notes(session) == expected.tools
    assert session["tokens"] == expected.tokens
    assert session["model"] == expected.model
    assert session["workspace"] == expected.workspace
    answers = "\n".join(texts(session, "assistant"))
    for part in expected.in_answers:
        assert part in answers
    everything = "\n".join(texts(session, "user"))
    for part in expected.not_prompts:
        assert part not in everything

    again = hermes(home, root, "sessions", "import", str(root / expected.log))
    assert again.returncode == 0, again.stdout + again.stderr
    assert imported(again.stdout) == []
    assert "0 imported, 0 appended, 1 unchanged" in again.stdout
    assert shown(home, root, session_id) == session
    assert fingerprint(root) == before  # foreign files: only read


@pytest.mark.parametrize("name", sorted(name for name in LOGS if LOGS[name].delegates))
def test_the_subagents_come_along_as_delegates(name: str, tmp_path: Path) -> None:
    expected = LOGS[name]
    root = private_copy(tmp_path)
    home = tmp_path / "home"

    result = hermes(home, root, "sessions", "import", str(root / expected.log))

    assert result.returncode == 0, result.stdout + result.stderr
    [(_, parent)] = imported(result.stdout)
    [line] = [row for row in result.stdout.splitlines() if "subagent session(s)" in row]
    children = [shown(home, root, child) for child in re.findall(r"\d{8}_\d{6}_\w+", line)]
    assert len(children) == len(expected.delegates)
    by_title = {child["title"]: child for child in children}
    for delegate in expected.delegates:
        child = by_title[delegate.title]
        assert child["parent_session_id"] == parent
        assert child["parent_kind"] == "delegate"
        assert child["model"] == delegate.model
        assert child["tokens"] == delegate.tokens
        assert child["workspace"] == expected.workspace
        [prompt] = texts(child, "user")
        assert prompt.startswith(delegate.prompt)
        assert len(texts(child, "assistant")) == 1
        assert notes(child) == delegate.tools


def test_all_public_logs_at_once_then_again_changes_nothing(tmp_path: Path) -> None:
    root = private_copy(tmp_path)
    before = fingerprint(root)
    home = tmp_path / "home"
    delegates = sum(len(expected.delegates) for expected in LOGS.values())

    first = hermes(home, root, "sessions", "import", "--all")

    assert first.returncode == 0, first.stdout + first.stderr
    assert len(imported(first.stdout)) == len(LOGS)
    assert f"Summary: {len(LOGS)} imported, 0 appended, 0 unchanged" in first.stdout
    assert f"Sessions written: {len(LOGS) + delegates}." in first.stdout
    again = hermes(home, root, "sessions", "import", "--all")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"0 imported, 0 appended, {len(LOGS)} unchanged" in again.stdout
    assert fingerprint(root) == before
