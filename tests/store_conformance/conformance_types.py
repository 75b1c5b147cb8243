"""What the conformance tests share besides fixtures (imported by name: a module called
``conftest`` resolves to whichever conftest loaded last)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hermes_hookspecs import Message, Session

from hermes_core.store.protocol import Store


@dataclass
class EventLog:
    """A ``StoreEvents`` that remembers what it was told."""

    started: list[str] = field(default_factory=list)
    ended: list[tuple[str, str]] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    title: str | None = None
    """What ``generate_title`` answers."""

    def session_started(self, session: Session) -> None:
        self.started.append(session.id)

    def session_ended(self, session: Session, reason: str) -> None:
        assert session.ended_at is not None or reason == "deleted"
        self.ended.append((session.id, reason))

    def generate_title(self, session: Session, messages: Sequence[Message]) -> str | None:
        self.titles.append(session.id)
        return self.title


StoreFactory = Callable[..., Store]
