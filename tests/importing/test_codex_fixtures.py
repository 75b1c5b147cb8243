"""Every Codex CLI log in ../shared/fixtures reads into a meaningful transcript, unchanged.

Skipped with a reason when the shared fixtures are not present (they are never copied into
the repository). A new Codex file in the fixtures fails ``test_every_codex_fixture_is_covered``
until its expectations are written here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from codex_helpers import fingerprint, read_all
from hermes_import_codex.importer import CodexImporter
from reading_helpers import FIXTURES

pytestmark = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason=f"shared fixtures not found at {FIXTURES}"
)


@dataclass(frozen=True)
class Expected:
    foreign_id: str
    transcript_starts: list[tuple[str, str]]
    """The first messages' roles and how their content begins."""
    roles: str
    """The roles of the whole transcript, one letter each (u/a)."""
    cwd: str | None
    model: str | None
    tokens: tuple[int, int]
    """Input (its cached part left out) and output tokens."""
    warnings: dict[str, int]
    notes: tuple[str, ...] = ()
    """``[ran tool: …]`` notes expected somewhere in the assistant turns."""
    cached: int = 0
    """Codex's ``cached_input_tokens``: the session's cache reads."""


EXPECTED = {
    "codex/kvsankar-agent-history/session-01.jsonl": Expected(
        foreign_id="019e9625-802f-7e91-840a-cfe88d14117a",
        transcript_starts=[
            ("user", "[REDACTED_PROMPT]"),
            ("assistant", "[REDACTED_ASSISTANT_TEXT]"),
        ],
        roles="ua",
        cwd="/tmp/agent-history-real-agent/codex/workspace",
        model="gpt-5.5",
        tokens=(22539 - 20864, 10),
        cached=20864,
        warnings={},
    ),
    "codex/jazzyalex-agent-sessions/stage0-codex-small.SCRUBBED-COMPOSITE.jsonl": Expected(
        foreign_id="019fc8be-3658-7ca3-9e29-000000000000",
        transcript_starts=[("user", "List the files\n[image]"), ("assistant", "[ran tool: shell]")],
        roles="uauu",
        cwd="/tmp/repo",
        model="gpt-5.6-sol",
        tokens=(16341 - 3584, 81),
        cached=3584,
        warnings={},
        notes=(
            "shell",
            "tool_search",
            "web_search",
            "mcp__example__example_tool",
            "image_generation",
        ),
    ),
    "synthetic/daaain-codex/sessions/2026/01/02/"
    "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl": Expected(
        foreign_id="11111111-1111-4111-8111-111111111111",
        transcript_starts=[
            ("user", "List the synthetic files."),
            (
                "assistant",
                "[ran tool: exec_command]\n[ran tool: apply_patch]\n"
                "[ran tool: mcp__synthetic__lookup]\n\n"
                "The synthetic files are alpha.txt and beta.txt.",
            ),
        ],
        roles="ua",
        cwd="/workspace/synthetic-project",
        model="synthetic-model",
        tokens=(0, 0),
        warnings={"unknown record type": 1},
    ),
    "synthetic/daaain-codex/malformed/rollout-66666666-6666-4666-8666-666666666666.jsonl": Expected(
        foreign_id="66666666-6666-4666-8666-666666666666",
        transcript_starts=[("user", "Safe line before malformed input.")],
        roles="u",
        cwd="/workspace/synthetic-project",
        model=None,
        tokens=(0, 0),
        warnings={"malformed line": 1},
    ),
}


def codex_fixture_files() -> list[str]:
    """Every file of the fixtures that the ``codex`` importer claims, relative to FIXTURES."""
    if not FIXTURES.is_dir():
        return []
    importer = CodexImporter()
    return sorted(
        str(path.relative_to(FIXTURES))
        for path in FIXTURES.rglob("*.jsonl")
        if "claude" not in path.relative_to(FIXTURES).parts[0] and importer.sniff(path)
    )


def test_every_codex_fixture_is_covered() -> None:
    assert codex_fixture_files() == sorted(EXPECTED)


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_codex_fixture_reads_into_its_transcript(relative: str) -> None:
    path = FIXTURES / relative
    if not path.exists():
        pytest.skip(f"{relative} is not in the shared fixtures")
    expected = EXPECTED[relative]
    before = fingerprint(path)
    [found] = read_all(path)
    assert fingerprint(path) == before, "the foreign file changed"
    session = found.session
    assert session.foreign_id == expected.foreign_id
    assert session.source == "codex-cli"
    for (role, content), (expected_role, start) in zip(
        found.transcript, expected.transcript_starts, strict=False
    ):
        assert (role, content[: len(start)]) == (expected_role, start)
    assert "".join(role[0] for role, _ in found.transcript) == expected.roles
    assert session.cwd == expected.cwd
    assert session.model == expected.model
    assert (session.input_tokens, session.output_tokens) == expected.tokens
    assert (session.cache_read_tokens, session.cache_write_tokens) == (expected.cached, 0)
    assert session.warnings == expected.warnings
    assert session.cursor is not None
    offset = int(session.cursor.split(":")[0])  # the end, or the last prompt's line
    assert offset == path.stat().st_size or (session.open_tail > 0 and 0 < offset < path.stat().st_size)
    assert session.started_at is not None and session.ended_at is not None
    assert session.started_at <= session.ended_at
    assert (
        session.title_hint
        == "Imported from Codex CLI: " + expected.transcript_starts[0][1].split("\n")[0]
    )
    text = "\n".join(content for _, content in found.transcript)
    for name in expected.notes:
        assert f"[ran tool: {name}]" in text
    for left_behind in (
        "encrypted_content",
        "ENCRYPTED",
        "REDACTED_BASE_INSTRUCTIONS",
        "REDACTED_DEVELOPER_CONTEXT",
        "environment_context",
        "./alpha.txt",
    ):
        assert left_behind not in text


def test_claude_code_fixtures_are_not_claimed_by_codex() -> None:
    importer = CodexImporter()
    claimed = [p for p in (FIXTURES / "claude").rglob("*.jsonl") if importer.sniff(p)]
    assert claimed == []
