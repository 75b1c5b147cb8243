"""The chat commands the gateway answers itself, on every platform (SPEC G3, G7, R4).

``/new [NAME]`` and ``/reset`` start the chat's next session (NAME is its title); ``/title
[NAME]`` sets or shows the title; ``/sethome`` makes this chat the platform's home channel;
``/branch`` continues the chat in a copy of its session; ``/stop`` interrupts the answer in
progress. Any other text — including unknown ``/words`` — goes to the agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

CommandName = Literal["new", "reset", "title", "sethome", "branch", "stop"]
COMMANDS: frozenset[str] = frozenset({"new", "reset", "title", "sethome", "branch", "stop"})


@dataclass(frozen=True, slots=True)
class ChatCommand:
    """A parsed gateway command."""

    name: CommandName
    argument: str = ""


def parse_command(text: str) -> ChatCommand | None:
    """The gateway command ``text`` is, or None (``/new@MyBot`` forms of bots included)."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    word, _, rest = stripped[1:].partition(" ")
    name = word.split("@", 1)[0].lower()
    if name not in COMMANDS:
        return None
    return ChatCommand(cast(CommandName, name), " ".join(rest.split()))
