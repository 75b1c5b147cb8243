"""Broken characters in imported text, repaired and counted — once, for every importer.

A JSON log may escape a lone UTF-16 surrogate (``"\\ud800"``: half of an emoji cut in two, a
reversed pair). Python reads it into text that UTF-8 cannot hold, and one such character
used to fail the whole file at the store. Every session an importer yields (a Claude Code or
Codex log, a backup, a Hermes Agent store, any plugin's format) passes through
:func:`repaired_sessions` on its way to the store: each lone surrogate in its text — session
fields, the snapshot of a backup with its metadata, routes, and each message's content,
reasoning and tool calls — becomes U+FFFD, the line and the file are kept, and each text
field repaired is counted on the file's :class:`~.outcomes.FileOutcome`
(``Repaired input:`` in the import's report). The store repairs the same way on its own
(:mod:`hermes_core.store.unicode_repair`), for text that reaches it by another road.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from hermes_hookspecs import ImportedSession, Message

from hermes_core.store.unicode_repair import needs_repair, repaired_text

from .outcomes import FileOutcome

_Fields = TypeVar("_Fields")

_SESSION_TEXT = ("foreign_id", "source", "title_hint", "cwd", "git_branch", "model",
                 "parent_foreign_id")  # fmt: skip


class _Tally:
    """Counts the text fields repaired for one file."""

    def __init__(self, outcome: FileOutcome) -> None:
        self.outcome = outcome

    def text(self, value: str) -> str:
        if not needs_repair(value):
            return value
        self.outcome.repaired_texts += 1
        return repaired_text(value)

    def value(self, value: Any) -> Any:
        """Text, and the text inside lists and objects (metadata), repaired."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(key): self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(item) for item in value)
        return value

    def fields(self, item: _Fields) -> _Fields:
        """A dataclass instance with every text (and container) field repaired."""
        changes = {}
        for field in dataclasses.fields(item):  # type: ignore[arg-type]
            before = getattr(item, field.name)
            after = self.value(before)
            if after is not before:
                changes[field.name] = after
        return dataclasses.replace(item, **changes) if changes else item  # type: ignore[type-var]

    def message(self, message: Message) -> Message:
        calls = tuple(self.fields(call) for call in message.tool_calls)
        repaired = self.fields(dataclasses.replace(message, tool_calls=()))
        return dataclasses.replace(repaired, tool_calls=calls)

    def messages(self, messages: Iterator[Message]) -> Iterator[Message]:
        for message in messages:
            yield self.message(message)


def repaired_sessions(
    sessions: Iterable[ImportedSession], outcome: FileOutcome
) -> Iterator[ImportedSession]:
    """``sessions`` with their text repaired as it is read (messages stay a stream); the
    count of repaired text fields grows on ``outcome``."""
    tally = _Tally(outcome)
    for imported in sessions:
        # A snapshot's fields are counted once, on the snapshot; the session's copies of them
        # are repaired alike.
        repair = repaired_text if imported.snapshot is not None else tally.text
        for name in _SESSION_TEXT:
            value = getattr(imported, name)
            if isinstance(value, str):
                setattr(imported, name, repair(value))
        if imported.snapshot is not None:
            imported.snapshot = tally.fields(imported.snapshot)
        imported.routes = [tally.fields(route) for route in imported.routes]
        imported.messages = tally.messages(iter(imported.messages))
        yield imported
