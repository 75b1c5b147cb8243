"""What an import reports: one :class:`FileOutcome` per file, and the run's summary."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path


class FileStatus(Enum):
    """What happened to one file."""

    IMPORTED = "imported"
    APPENDED = "appended"
    UNCHANGED = "unchanged"
    NO_CONVERSATION = "no conversation"
    CHANGED = "changed"
    """Rewritten since its import (not appended to): left alone."""
    UNREADABLE = "unreadable"
    UNRECOGNISED = "unrecognised"
    """No installed importer reads it."""


FAILURES = frozenset({FileStatus.UNREADABLE, FileStatus.UNRECOGNISED})


@dataclass(slots=True)
class StoredSession:
    """One session an import wrote (or appended to)."""

    session_id: str
    title: str | None
    messages: int
    """Messages written by this import."""
    delegate: bool = False
    restored: bool = False
    """Kept its own id (a backup restore)."""


@dataclass(slots=True)
class FileOutcome:
    """The result of importing one file."""

    path: Path
    status: FileStatus
    importer: str | None = None
    label: str | None = None
    """The importer's human label (``Claude Code``)."""
    sessions: list[StoredSession] = field(default_factory=list)
    """The sessions written, the file's own (top-level) ones first."""
    session_id: str | None = None
    """The file's session: the one created, appended to, or found already imported."""
    detail: str = ""
    """Why a file was skipped or could not be read."""
    notes: list[str] = field(default_factory=list)
    """Things worth a line: a backup session already in the store, a title given a suffix."""
    warnings: Counter[str] = field(default_factory=Counter)
    """Skipped input by reason (``malformed line``, ``unknown record type``…)."""
    appended: list[StoredSession] = field(default_factory=list)
    """Sessions of a database file that were here already and got new messages."""
    routes_added: int = 0
    """Gateway routing rows a database file brought (chats this store did not route yet)."""
    repaired_texts: int = 0
    """Text fields kept with broken characters (lone surrogates) replaced by U+FFFD."""
    unreadable_records: list[str] = field(default_factory=list)
    """Records the importer could not read, each ``line 7: <why>`` (a backup's damaged
    lines): the file's readable records were imported, these were not, and the run fails."""

    @property
    def top_level(self) -> list[StoredSession]:
        return [stored for stored in self.sessions if not stored.delegate]

    @property
    def delegates(self) -> list[StoredSession]:
        return [stored for stored in self.sessions if stored.delegate]


def is_malformed(reason: str) -> bool:
    """Whether a warning counts as a malformed line in the summary."""
    lowered = reason.lower()
    return "malformed" in lowered or "utf-8" in lowered or "invalid" in lowered


@dataclass(slots=True)
class ImportSummary:
    """Totals over a run."""

    files: Counter[FileStatus] = field(default_factory=Counter)
    warnings: Counter[str] = field(default_factory=Counter)
    sessions_written: int = 0
    unreadable_records: int = 0
    repaired_texts: int = 0

    def add(self, outcome: FileOutcome) -> None:
        self.files[outcome.status] += 1
        self.warnings.update(outcome.warnings)
        self.unreadable_records += len(outcome.unreadable_records)
        self.repaired_texts += outcome.repaired_texts
        self.sessions_written += len(outcome.sessions) + len(outcome.appended)

    @property
    def malformed_lines(self) -> int:
        return sum(count for reason, count in self.warnings.items() if is_malformed(reason))

    @property
    def succeeded(self) -> int:
        """Files imported, appended to, or found already imported."""
        return sum(
            self.files[status]
            for status in (FileStatus.IMPORTED, FileStatus.APPENDED, FileStatus.UNCHANGED)
        )

    @property
    def failed(self) -> int:
        return sum(self.files[status] for status in FAILURES)

    @property
    def lost_records(self) -> bool:
        """Whether some file held records that could not be read (the run must fail)."""
        return self.unreadable_records > 0

    def line(self) -> str:
        """``Summary: 2 imported, 1 appended, …`` — file counts, zeros included, so the line
        reads the same in every run — then how many sessions were written when any were."""
        files = self.files
        parts = [
            f"{files[FileStatus.IMPORTED]} imported",
            f"{files[FileStatus.APPENDED]} appended",
            f"{files[FileStatus.UNCHANGED]} unchanged",
            f"{files[FileStatus.NO_CONVERSATION]} with no conversation",
            f"{self.malformed_lines} malformed line(s) skipped",
            f"{files[FileStatus.UNREADABLE] + files[FileStatus.UNRECOGNISED]} unreadable",
        ]
        if files[FileStatus.CHANGED]:
            parts.append(f"{files[FileStatus.CHANGED]} changed since import (skipped)")
        if self.unreadable_records:
            parts.append(f"{self.unreadable_records} record(s) that could not be read")
        line = "Summary: " + ", ".join(parts) + "."
        # The counts above are files; a backup or a log with subagents holds several sessions.
        if self.sessions_written:
            line += f" Sessions written: {self.sessions_written}."
        return line

    def skipped_line(self) -> str | None:
        """The other skipped input by reason, when there was any."""
        others = [
            f"{count} {counted(reason, count)}" for reason, count in sorted(self.warnings.items())
            if not is_malformed(reason)
        ]  # fmt: skip
        return "Skipped input: " + ", ".join(others) + "." if others else None

    def repaired_line(self) -> str | None:
        """What was kept with broken characters replaced, when anything was."""
        if not self.repaired_texts:
            return None
        return (
            f"Repaired input: {self.repaired_texts} text field(s) with broken characters "
            "(lone UTF-16 surrogates), each replaced by U+FFFD and kept."
        )


_PHRASE_ENDS = (" undone", " by ", " with ", " without ", " in ", " of ", " from ", " (", " that ")
"""Where the noun phrase at the start of a skip reason ends: its last word is the noun."""


def counted(reason: str, count: int) -> str:
    """A skip ``reason`` (a singular phrase: ``unknown record type``, ``message undone by a
    rewind``) read after ``count``: its head noun in the plural unless ``count`` is one
    (``2 unknown record types``, ``2 messages undone by a rewind``)."""
    if count == 1:
        return reason
    end = min((at for at in map(reason.find, _PHRASE_ENDS) if at > 0), default=len(reason))
    head, rest = reason[:end], reason[end:]
    start = head.rfind(" ") + 1
    noun = head[start:]
    if not noun.isalpha() or noun.endswith("s"):
        return reason  # a name (``tool_calls``) or a plural already
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        plural = noun[:-1] + "ies"
    elif noun.endswith(("x", "ch", "sh")):
        plural = noun + "es"
    else:
        plural = noun + "s"
    return head[:start] + plural + rest
