"""Finding Codex CLI rollouts in their default place, cheaply.

The root is ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``. Rollouts are
``rollout-*.jsonl`` files, date-sharded (``YYYY/MM/DD/``) or flat (the earliest builds); the
walk visits both. Symbolic links to directories are never followed; a symbolic link to a file
is kept only when it resolves to a regular file inside the root. Other non-regular files are
skipped, and so are empty files.

Two steps, so that ``hermes sessions import --all`` over an unchanged tree stays a walk
and a ``stat`` per file:

- :func:`listed` (``discover``): one ``stat``; the thread id and start time come from the
  file name (``rollout-<local time>-<uuid>.jsonl``), the end time is the modification time.
- :func:`described` (``describe``, for the picker): at most the first :data:`HEAD_BYTES`
  bytes, one ``read`` on a file opened read-only. From that head it takes the cwd, the start
  time from the header, and the first thing the person typed (the title). The turn count
  (the prompts) is exact when the whole file fits in the head, else unknown (None): counting
  the turns of a long log means reading all of it, which is the import's job. The header
  line is never decoded whole (it carries the system prompt); only the lines that may hold
  the first prompt are. About 75 µs per file on a warm cache.
"""

from __future__ import annotations

import dataclasses
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
_ID_FIELD = re.compile(rb'"id"\s*:\s*"([^"\\]{1,200})"')
_TIMESTAMP_FIELD = re.compile(rb'"timestamp"\s*:\s*"([^"\\]{1,64})"')
_USER_EVENT = b'"user_message"'
"""A literal, found with ``bytes.find`` (far cheaper than a regular expression over 64 KiB);
each hit is confirmed by decoding its line."""
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


def listed(path: Path, importer: str) -> ImportCandidate | None:
    """A rollout as ``discover`` offers it, from one ``stat``; None when it is empty."""
    try:
        status = path.stat()
    except OSError:
        return None
    if status.st_size == 0:
        return None
    file_uuid, named_start = records.file_identity(path)
    return ImportCandidate(
        importer=importer,
        path=path,
        foreign_id=file_uuid or path.stem,
        started_at=named_start,
        ended_at=status.st_mtime,
    )


def described(candidate: ImportCandidate) -> ImportCandidate:
    """``candidate`` with the picker's facts from the head of its file (see above).

    A file that fits in the head and holds no prompt gets ``turn_count`` 0.
    """
    try:
        with candidate.path.open("rb", buffering=0) as handle:
            status = os.fstat(handle.fileno())
            head = handle.read(HEAD_BYTES)
    except OSError:
        return candidate
    whole = len(head) >= status.st_size
    header_end = head.find(b"\n")
    header = head if header_end < 0 else head[:header_end]  # possibly cut: only searched
    lines = head if whole else head[: head.rfind(b"\n") + 1]  # a cut last line is no line
    title, turns = _first_prompt(lines, _positions(lines, _USER_EVENT), whole)
    file_uuid, _ = records.file_identity(candidate.path)
    meta_id = _field(_ID_FIELD, header) if file_uuid is None else None
    started = records.parse_timestamp(_field(_TIMESTAMP_FIELD, header[:512]))
    return dataclasses.replace(
        candidate,
        foreign_id=file_uuid or (meta_id.lower() if meta_id else candidate.foreign_id),
        title_guess=records.one_line_title(title, TITLE_GUESS_LIMIT) if title else None,
        cwd=_cwd_from_bytes(head) or _environment_cwd(lines),
        started_at=started if started is not None else candidate.started_at,
        ended_at=status.st_mtime,
        turn_count=turns if whole else None,
    )


def _first_prompt(head: bytes, event_prompts: list[int], whole: bool) -> tuple[str | None, int]:
    """The first prompt's text in ``head`` and how many prompts it holds.

    ``user_message`` events are the prompts when there are any (enveloped rollouts);
    otherwise the user messages that are not injected context (bare rollouts).
    """
    if event_prompts:
        title: str | None = None
        for position in event_prompts:
            title = _event_text(_line_at(head, position))
            if title:
                break
        return title, len(event_prompts)
    first: str | None = None
    turns = 0
    for match in _USER_ITEM.finditer(head):
        text = _item_text(_line_at(head, match.start()))
        if text:
            first = first or text
            turns += 1
            if not whole:
                break
    return first, turns


def _positions(data: bytes, needle: bytes) -> list[int]:
    found = []
    position = data.find(needle)
    while position >= 0:
        found.append(position)
        position = data.find(needle, data.find(b"\n", position) + 1 or len(data))
    return found


def _line_at(head: bytes, position: int) -> bytes:
    start = head.rfind(b"\n", 0, position) + 1
    end = head.find(b"\n", position)
    return head[start : end if end >= 0 else len(head)]


def _decoded(line: bytes) -> tuple[str, dict[str, Any]] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    classified = records.classify(record) if isinstance(record, dict) else None
    return None if classified is None else (classified[0], classified[1])


def _event_text(line: bytes) -> str | None:
    decoded = _decoded(line)
    if decoded is None or decoded[0] != "event_msg":
        return None
    text = decoded[1].get("message")
    if not isinstance(text, str) or records.is_injected(text):
        return None
    return records.typed_request(text).strip() or None


def _item_text(line: bytes) -> str | None:
    decoded = _decoded(line)
    if decoded is None or decoded[0] != "response_item" or decoded[1].get("type") != "message":
        return None
    texts, _ = records.content_parts(decoded[1].get("content"))
    typed = [records.typed_request(t) for t in texts if not records.is_injected(t)]
    return "\n".join(typed).strip() or None


def _field(pattern: re.Pattern[bytes], data: bytes) -> str | None:
    match = pattern.search(data)
    return match.group(1).decode("utf-8", "replace") if match else None


def _cwd_from_bytes(head: bytes) -> str | None:
    """The first ``"cwd": "…"`` in the head (the header's, or the first turn context's)."""
    match = _CWD_FIELD.search(head)
    if not match:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None


def _environment_cwd(lines: bytes) -> str | None:
    """The ``<cwd>`` of an ``<environment_context>`` (bare rollouts have no cwd field)."""
    position = lines.find(b"<environment_context>")
    if position < 0:
        return None
    decoded = _decoded(_line_at(lines, position))
    if decoded is None:
        return None
    texts, _ = records.content_parts(decoded[1].get("content"))
    return next(filter(None, map(records.environment_cwd, texts)), None)
