"""The ``jsonl`` importer: restores a backup written by the ``jsonl`` exporter.

A pure reader: it yields each session with its stored form as ``snapshot`` and its messages
with their own timestamps; the core's import engine keeps the ids, titles, lineage and pins,
skips sessions it already has, and suffixes clashing titles. Lines that are not backup
objects (malformed JSON, another shape, a prompt-only or ``--lineage logical`` export) are
skipped and counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from hermes_hookspecs import ImportCandidate, ImportedSession

from .shape import SESSION_FORMAT, ShapeError, message_from_dict, session_from_dict

_SNIFF_BYTES = 1 << 16


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
        """Stream the sessions of the backup at ``path``, from byte offset ``resume_from``."""
        offset = _offset(resume_from)
        skipped: dict[str, int] = {}
        with path.open("rb") as handle:
            handle.seek(offset)
            for raw in handle:
                offset += len(raw)
                if not raw.endswith(b"\n"):
                    # A line still being written: read it next time.
                    offset -= len(raw)
                    break
                if not raw.strip():
                    continue
                try:
                    imported = _imported(raw)
                except ShapeError as error:
                    reason = str(error) if str(error).startswith("not ") else "malformed line"
                    skipped[reason] = skipped.get(reason, 0) + 1
                    continue
                imported.cursor = str(offset)
                imported.warnings, skipped = skipped, {}
                yield imported


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        return max(int(cursor), 0)
    except ValueError:
        return 0


def _imported(raw: bytes) -> ImportedSession:
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise ShapeError("malformed line") from error
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
        raise ShapeError("not a session backup line")
    if data.get("lineage"):
        # A --lineage logical line joins several sessions: restoring it would duplicate them.
        raise ShapeError("not a backup line (a --lineage logical export)")
    session = session_from_dict(data.get("session"))
    raw_messages = data.get("messages") or []
    if not isinstance(raw_messages, list):
        raise ShapeError("messages is not a list")
    messages = [message_from_dict(item) for item in raw_messages]
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
        parent_foreign_id=session.parent_session_id if session.parent_kind == "delegate" else None,
        snapshot=session,
    )
