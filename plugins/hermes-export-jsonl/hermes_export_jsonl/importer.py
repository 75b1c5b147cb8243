"""The ``jsonl`` importer: restores a backup written by the ``jsonl`` exporter.

A pure reader: it yields each session with its stored form as ``snapshot`` and its messages
with their own timestamps; the core's import engine keeps the ids, titles, lineage and pins,
skips sessions it already has, and suffixes clashing titles.

A backup is the user's data, so nothing in it is dropped quietly:

* a file whose first record is of a format version this reader does not know is refused
  whole, before anything is yielded (a newer Hermes wrote it: upgrade to read it);
* a record that cannot be read (not JSON, a missing or wrong field, a message without a role
  or text, a line cut short) is named by its line and the reason, and raised together with
  the others as :class:`~hermes_hookspecs.UnreadableRecords` once every readable record has
  been yielded — the restore keeps those and fails;
* lines that are not backup records by design (a ``--only user-prompts`` prompt, a
  ``--lineage logical`` line) are skipped and counted in ``warnings``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hermes_hookspecs import ImportCandidate, ImportedSession, UnreadableRecords

from .shape import (
    PROMPT_FORMAT,
    SESSION_FORMAT,
    SHAPE_VERSION,
    ShapeError,
    message_from_dict,
    session_from_dict,
)

_SNIFF_BYTES = 1 << 16


class _NotARecord(Exception):
    """A line that is, by design, not a backup record: skipped and counted."""


class JsonlBackupImporter:
    """Reads ``hermes sessions export`` jsonl backups."""

    name = "jsonl"
    label = "Hermes jsonl backup"

    def discover(self, env: Mapping[str, str]) -> Iterable[ImportCandidate]:
        """Backups live wherever their owner put them: nothing is discovered."""
        return ()

    def sniff(self, path: Path) -> bool:
        """True when the first line of ``path`` is a backup object."""
        try:
            with path.open("rb") as handle:
                first = handle.readline(_SNIFF_BYTES)
            data = json.loads(first)
        except (OSError, ValueError):
            return False
        return isinstance(data, dict) and data.get("format") == SESSION_FORMAT

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        """Stream the sessions of the backup at ``path``, from byte offset ``resume_from``;
        :class:`UnreadableRecords` at the end when some lines could not be read."""
        offset = _offset(resume_from)
        skipped: dict[str, int] = {}
        problems: list[str] = []
        with path.open("rb") as handle:
            number = _lines_before(handle, offset)
            handle.seek(offset)
            first_record = True
            for raw in handle:
                number += 1
                offset += len(raw)
                if not raw.strip():
                    continue
                try:
                    if first_record:
                        _refuse_unknown_version(raw, path)
                    first_record = False
                    imported = _imported(raw)
                except _NotARecord as reason:
                    skipped[str(reason)] = skipped.get(str(reason), 0) + 1
                    continue
                except ShapeError as error:
                    cut = "" if raw.endswith(b"\n") else " (the file ends inside this line)"
                    problems.append(f"line {number}: {error}{cut}")
                    continue
                imported.cursor = str(offset)
                imported.warnings, skipped = skipped, {}
                yield imported
        if problems:
            raise UnreadableRecords(problems)


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        return max(int(cursor), 0)
    except ValueError:
        return 0


def _lines_before(handle: Any, offset: int) -> int:
    """How many lines end before byte ``offset`` (line numbers stay true on a resumed read)."""
    if offset == 0:
        return 0
    count = 0
    remaining = offset
    while remaining > 0:
        chunk = handle.read(min(remaining, 1 << 20))
        if not chunk:
            break
        count += chunk.count(b"\n")
        remaining -= len(chunk)
    return count


def _refuse_unknown_version(raw: bytes, path: Path) -> None:
    """Refuse the whole file when its first record is of another format version: a newer
    Hermes wrote it, and reading it as version 1 could restore it wrongly."""
    try:
        data = json.loads(raw)
    except ValueError:
        return  # reported as that line's problem
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
        return
    version = data.get("version")
    if version is not None and version != SHAPE_VERSION:
        raise ValueError(
            f"{path.name} is a backup of format version {version}; this Hermes reads version "
            f"{SHAPE_VERSION} only (upgrade hermes-export-jsonl); nothing was restored"
        )


def _imported(raw: bytes) -> ImportedSession:
    data = _record(raw)
    session = session_from_dict(data.get("session"))
    raw_messages = data.get("messages")
    if raw_messages is None:
        raise ShapeError("no 'messages' list")
    if not isinstance(raw_messages, list):
        raise ShapeError("'messages' is not a list")
    messages = [message_from_dict(item, number) for number, item in enumerate(raw_messages, 1)]
    return ImportedSession(
        foreign_id=session.id,
        source=session.source,
        messages=iter(messages),
        title_hint=session.title,
        started_at=session.started_at,
        ended_at=session.ended_at,
        cwd=session.cwd,
        git_branch=session.git_branch,
        model=session.model,
        input_tokens=session.input_tokens,
        output_tokens=session.output_tokens,
        cache_read_tokens=session.cache_read_tokens,
        cache_write_tokens=session.cache_write_tokens,
        parent_foreign_id=session.parent_session_id if session.parent_kind == "delegate" else None,
        snapshot=session,
    )


def _record(raw: bytes) -> dict[str, Any]:
    """The line's object once it is known to be a version-1 session record."""
    try:
        data = json.loads(raw)
    except UnicodeDecodeError as error:
        raise ShapeError("not UTF-8 text") from error
    except json.JSONDecodeError as error:
        raise ShapeError(f"not valid JSON ({error.msg} at character {error.pos + 1})") from error
    if not isinstance(data, dict):
        raise ShapeError("not a JSON object")
    kind = data.get("format")
    if kind == PROMPT_FORMAT:
        raise _NotARecord("not a session backup line")
    if kind is None:
        raise ShapeError("record has no 'format'")
    if kind != SESSION_FORMAT:
        raise ShapeError(f"record's format {kind!r} is not {SESSION_FORMAT!r}")
    version = data.get("version")
    if version is None:
        raise ShapeError("record has no 'version'")
    if version != SHAPE_VERSION:
        raise ShapeError(f"format version {version!r}; this Hermes reads version {SHAPE_VERSION}")
    if data.get("lineage"):
        # A --lineage logical line joins several sessions: restoring it would duplicate them.
        raise _NotARecord("not a backup line (a --lineage logical export)")
    return data
