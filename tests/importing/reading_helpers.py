"""What the Claude Code and Codex reader tests share: where the real logs are, and a session
read to the end."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hermes_hookspecs import ImportedSession, Message

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"
"""The real logs next to the repository (``../shared/fixtures``); tests skip when absent."""


@dataclass
class Read:
    """One session read to the end: the session (final fields) and its messages."""

    session: ImportedSession
    messages: list[Message]

    @property
    def transcript(self) -> list[tuple[str, str]]:
        return [(message.role, message.content) for message in self.messages]

    @property
    def text(self) -> str:
        return "\n".join(message.content for message in self.messages)
