"""Every real Claude Code log in ../shared/fixtures, read by the importer: what comes out per
file, and that thinking, tool output and injected text never leak into it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from claude_helpers import IMPORTER, read_all
from reading_helpers import FIXTURES

CLAUDE = FIXTURES / "claude"

# file → (messages of its session, delegate children, the title after the prefix)
EXPECTED: dict[str, tuple[int, int, str | None]] = {
    "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": (2, 2, "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください"),
    "326189cf-5676-4237-8cde-1ce80aae4a9f.jsonl": (2, 0, "please fix these"),
    "4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl": (0, 0, None),
    "4fe49c7c-ff82-4ac7-b3f2-79c22036bd58.jsonl": (0, 0, None),
    "agent-3be551df.jsonl": (2, 0, "Claude Code warm-up agent 3be551df"),
    "4379d1bf-ccb1-414e-a856-9791b73f3af2.jsonl": (2, 0, "Can you please add margin-bottom to the details element whe…"),
    "5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl": (2, 0, "I keep getting mysterious build errors when MDX files have…"),
    "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl": (14, 0, "Ok, so there's isn't much to see here, mostly one idea abou…"),
    "a95fea4a-b88a-4e49-ac07-4cc323d8700c.jsonl": (0, 0, None),
    "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl": (4, 1, "OK, we're going to make a little experiment here. Pretend w…"),
    "agent-a36efb2a1231c41e2.jsonl": (2, 0, "Round 2: alice comparison"),
    "29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl": (2, 1, "Use the Explore task in sub-agents with Haiku model to give…"),
    "agent-a2271d1.jsonl": (2, 0, "Give me a comprehensive overview of the code organization i…"),
    "2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl": (2, 0, "Search if claude -p can make use of WebSearch and Task tool…"),
    "stage0-claude-small.SCRUBBED-COMPOSITE.jsonl": (8, 1, "Stage0 small fixture"),
    "session-01.jsonl": (2, 0, "[REDACTED_PROMPT]"),
}  # fmt: skip


def fixture_files() -> list[Path]:
    if not CLAUDE.is_dir():
        return []
    return sorted(CLAUDE.rglob("*.jsonl"))


needs_fixtures = pytest.mark.skipif(
    not CLAUDE.is_dir(), reason=f"the shared real logs are not here ({CLAUDE})"
)


@needs_fixtures
def test_every_fixture_file_has_an_expectation() -> None:
    assert sorted(p.name for p in fixture_files()) == sorted(EXPECTED)


def hidden_texts(path: Path) -> list[str]:
    """Text the importer must leave behind: thinking, tool output, injected meta text."""
    found: list[str] = []
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks: list[Any] = content if isinstance(content, list) else []
        if record.get("isMeta") is True:
            if isinstance(content, str):
                found.append(content)
            found.extend(b.get("text", "") for b in blocks if isinstance(b, dict))
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "thinking":
                found.append(block.get("thinking") or "")
            if block.get("type") == "tool_result" and isinstance(block.get("content"), str):
                found.append(block["content"])
    # Short strings ("done", a commit hash the reply quotes) match by accident; long ones not.
    return [text.strip() for text in found if len(text.strip()) > 60]


WHOLE_TITLES = {
    "agent-3be551df.jsonl",  # a warm-up agent: named for what it is
    "stage0-claude-small.SCRUBBED-COMPOSITE.jsonl",  # renamed in Claude Code (custom-title)
}
"""Files whose title is taken whole, without the import prefix."""


@needs_fixtures
@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name[:24])
def test_fixture_maps_to_the_expected_conversation(path: Path) -> None:
    messages, children, title = EXPECTED[path.name]
    # A subagent transcript is claimed only when its session's transcript is gone: that of
    # agent-3be551df (session 58edcfae…) is not in the fixtures; the nested ones' are.
    assert IMPORTER.sniff(path) is ((not path.name.startswith("agent-") and path.stat().st_size > 0)
                                    or path.name == "4fe49c7c-ff82-4ac7-b3f2-79c22036bd58.jsonl"
                                    or path.name == "agent-3be551df.jsonl")  # fmt: skip
    main, *rest = read_all(path)
    assert len(main.messages) == messages
    assert len(rest) == children
    assert all(child.session.parent_foreign_id == main.session.foreign_id for child in rest)
    assert all(child.messages for child in rest)
    prefix = (
        "Claude Code subagent: "
        if path.name.startswith("agent-")
        else "Imported from Claude Code: "
    )
    if path.name in WHOLE_TITLES:
        prefix = ""
    assert main.session.title_hint == (prefix + title if title else None)
    if messages:
        if "COMPOSITE" not in path.name:  # record shapes from many sessions, not one
            assert main.messages[0].role == "user"
        assert main.session.started_at is not None
        assert (
            main.session.ended_at is not None and main.session.ended_at >= main.session.started_at
        )
        offset = int((main.session.cursor or "").split(":")[0])
        assert offset == path.stat().st_size or 0 < offset < path.stat().st_size
        assert main.session.input_tokens > 0 and main.session.output_tokens > 0
    everything = [m for read in (main, *rest) for m in read.messages]
    for earlier, later in itertools.pairwise(everything):
        if earlier in main.messages and later in main.messages:
            assert (earlier.role, later.role) != ("assistant", "assistant")
    joined = "\n".join(m.content for m in everything)
    for hidden in hidden_texts(path):
        assert hidden not in joined, hidden[:80]
    assert "<command-name>" not in joined and "<system-reminder>" not in joined
    assert "<local-command-stdout>" not in joined
    assert main.session.warnings.get("malformed line", 0) == 0


@needs_fixtures
def test_cwd_comes_from_the_records_not_the_folder_name() -> None:
    path = CLAUDE / "daaain-claude-code-log/projects/-Users-dain-workspace-danieldemmel-me-next"
    [read] = read_all(path / "5ed31c36-bca8-40fd-8d24-f1a1f0af7901.jsonl")
    assert read.session.cwd == "/Users/dain/workspace/danieldemmel.me-next"  # the "." survives


@needs_fixtures
def test_the_image_prompt_becomes_a_placeholder() -> None:
    path = CLAUDE / "daaain-claude-code-log/projects/-Users-dain-workspace-danieldemmel-me-next"
    [read] = read_all(path / "4379d1bf-ccb1-414e-a856-9791b73f3af2.jsonl")
    assert read.messages[0].content.startswith("[image]\n\nCan you please add margin-bottom")
    assert "iVBOR" not in read.text and "base64" not in read.text


@needs_fixtures
def test_the_2_1_subagent_keeps_its_description_from_meta_json() -> None:
    folder = CLAUDE / "daaain-claude-code-log/projects/-experiments-worktrees"
    _main, child = read_all(folder / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
    assert child.session.foreign_id == "a36efb2a1231c41e2"
    assert child.session.title_hint == "Claude Code subagent: Round 2: alice comparison"
