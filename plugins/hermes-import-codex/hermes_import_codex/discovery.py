"""Finding Codex CLI rollouts in their default place, cheaply.

The root is ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``. Rollouts are
``rollout-*.jsonl`` files, date-sharded (``YYYY/MM/DD/``) or flat (the earliest builds); the
walk visits both. Symbolic links to directories are never followed; a symbolic link to a file
is kept only when it resolves to a regular file inside the root. Other non-regular files are
skipped, and so are empty files.

What discovery reads, per file: one ``stat`` and at most the first :data:`HEAD_BYTES` bytes
(one ``read`` on a file opened read-only). From that head it takes the thread id (from the
file name, else the header), the cwd and the first thing the person typed (the picker's
title). The turn count is exact when the whole file fits in the head, else unknown (None):
counting the turns of a long log means reading all of it, which is the import's job.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hermes_hookspecs import ImportCandidate

from . import records

HEAD_BYTES = 64 * 1024
TITLE_GUESS_LIMIT = 60
_CWD_FIELD = re.compile(rb'"cwd"\s*:\s*("(?:[^"\\]|\\.)*")')
_USER_EVENT = b'"user_message"'
_USER_ITEM = re.compile(rb'"role"\s*:\s*"user"')


def sessions_root(env: Mapping[str, str]) -> Path:
    """Where Codex keeps its rollouts for the environment ``env``."""
    codex_home = env.get("CODEX_HOME")
    if codex_home:
        return Path(codex_home).expanduser() / "sessions"
    home = env.get("HOME")
    base = Path(home) if home else Path.home()
    return base / ".codex" / "sessions"


def is_rollout_name(name: str) -> bool:
    """True for ``rollout-*.jsonl``, the name Codex gives every session file."""
    return name.startswith("rollout-") and name.endswith(".jsonl")


def rollout_files(root: Path) -> Iterator[Path]:
    """Every rollout file under ``root`` (sorted per directory), symlinks checked."""
    try:
        real_root = root.resolve(strict=True)
    except OSError:
        return
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_symlink():
                    if is_rollout_name(entry.name) and _links_inside(entry.path, real_root):
                        yield Path(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) and is_rollout_name(entry.name):
                    yield Path(entry.path)
            except OSError:
                continue


def _links_inside(link: str, real_root: Path) -> bool:
    try:
        target = Path(link).resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return target.is_relative_to(real_root) and target.is_file()


def candidate(path: Path, importer: str) -> ImportCandidate | None:
    """The picker's view of one rollout, from its head; None when it holds no conversation."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(HEAD_BYTES)
            mtime = os.fstat(handle.fileno()).st_mtime
    except OSError:
        return None
    if size == 0:
        return None
    whole = len(head) >= size
    summary = _HeadSummary()
    lines = head.split(b"\n")
    if not whole:
        lines = lines[:-1]  # the last piece of a cut head is not a whole line
    for line in lines:
        summary.read_line(line)
        if summary.first_user_text is not None and not whole:
            break
    if summary.cwd is None:
        summary.cwd = _cwd_from_bytes(head)
    file_uuid, named_start = records.file_identity(path)
    turns: int | None = None
    if whole:
        turns = summary.event_turns if summary.event_turns else summary.item_turns
        if turns == 0:
            return None
    return ImportCandidate(
        importer=importer,
        path=path,
        foreign_id=file_uuid or summary.meta_id or path.stem,
        title_guess=(
            records.one_line_title(summary.first_user_text, TITLE_GUESS_LIMIT)
            if summary.first_user_text
            else None
        ),
        cwd=summary.cwd,
        started_at=summary.started_at if summary.started_at is not None else named_start,
        ended_at=mtime,
        turn_count=turns,
    )


class _HeadSummary:
    """The few facts the picker needs, gathered without building a transcript."""

    def __init__(self) -> None:
        self.meta_id: str | None = None
        self.cwd: str | None = None
        self.started_at: float | None = None
        self.first_user_text: str | None = None
        self.event_turns = 0
        self.item_turns = 0

    def read_line(self, line: bytes) -> None:
        is_event = _USER_EVENT in line
        is_item = not is_event and _USER_ITEM.search(line) is not None
        if not (is_event or is_item or (self.meta_id is None and b'"id"' in line)):
            return
        try:
            record = json.loads(line)
        except ValueError:
            return
        classified = records.classify(record) if isinstance(record, dict) else None
        if classified is None:
            return
        kind, payload, timestamp = classified
        if kind == "session_meta" and self.meta_id is None:
            self._header(payload, timestamp)
        elif kind == "event_msg" and payload.get("type") == "user_message":
            text = payload.get("message")
            if isinstance(text, str) and not records.is_injected(text):
                self._user_text(records.typed_request(text))
                self.event_turns += 1
        elif kind == "response_item" and payload.get("role") == "user":
            texts, _ = records.content_parts(payload.get("content"))
            typed = [records.typed_request(t) for t in texts if not records.is_injected(t)]
            if self.cwd is None:
                self.cwd = next(filter(None, map(records.environment_cwd, texts)), None)
            if any(text.strip() for text in typed):
                self._user_text("\n".join(typed))
                self.item_turns += 1

    def _header(self, payload: dict[str, Any], timestamp: float | None) -> None:
        meta_id = payload.get("id")
        self.meta_id = meta_id.lower() if isinstance(meta_id, str) and meta_id else ""
        cwd = payload.get("cwd")
        if isinstance(cwd, str) and cwd:
            self.cwd = cwd
        started = records.parse_timestamp(payload.get("timestamp"))
        self.started_at = started if started is not None else timestamp

    def _user_text(self, text: str) -> None:
        if self.first_user_text is None and text.strip():
            self.first_user_text = text.strip()


def _cwd_from_bytes(head: bytes) -> str | None:
    """The first ``"cwd": "…"`` in the head, for a header line longer than the head."""
    match = _CWD_FIELD.search(head)
    if not match:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None
