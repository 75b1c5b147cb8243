"""Where Claude Code keeps transcripts, and what a folder of them holds.

The root is ``$CLAUDE_CONFIG_DIR`` when set, else ``~/.claude``; transcripts live in
``<root>/projects/<folder>/<session-id>.jsonl``. Folder names encode a working directory
lossily, so they are enumerated, never decoded: the working directory comes from the records.
Subagent transcripts sit next to their session (``agent-*.jsonl``, Claude Code 2.0) or under
``<session-id>/subagents/`` (2.1); they belong to their session and are not sessions of their
own — unless that session's transcript is gone (deleted, or cleaned up by Claude Code's
``cleanupPeriodDays``): such an *orphaned* subagent transcript is imported on its own. Links
leading out of the projects folder and anything that is not a regular file are skipped.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

AGENT_PREFIX = "agent-"
SUFFIX = ".jsonl"
HEAD_BYTES = 64 * 1024
"""How much of a file ``sniff`` and discovery read to recognise and describe it."""

_CLAUDE_TYPES = frozenset({
    "user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation",
    "progress", "attachment", "permission-mode", "last-prompt",
})  # fmt: skip


def projects_root(env: Mapping[str, str]) -> Path | None:
    """``$CLAUDE_CONFIG_DIR/projects``, else ``$HOME/.claude/projects``."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(configured).expanduser() / "projects"
    home = env.get("HOME") or env.get("USERPROFILE")
    if not home:
        try:
            home = str(Path.home())
        except RuntimeError:
            return None
    return Path(home) / ".claude" / "projects"


def is_agent_file(path: Path) -> bool:
    """A subagent transcript (``agent-*.jsonl``)."""
    return path.name.startswith(AGENT_PREFIX) and path.name.endswith(SUFFIX)


def regular_file_inside(path: Path, root: Path) -> bool:
    """``path`` is a regular file, and (when it is a link) its target stays under ``root``."""
    try:
        if path.is_symlink():
            target = path.resolve()
            resolved_root = root.resolve()
            if target != resolved_root and resolved_root not in target.parents:
                return False
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def session_files(root: Path) -> Iterator[Path]:
    """Every session transcript under the projects folder ``root`` (subagents excluded)."""
    try:
        folders = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return
    resolved_root = root.resolve()
    for folder in folders:
        folder_path = Path(folder.path)
        try:
            if folder.is_symlink():
                target = folder_path.resolve()
                if resolved_root not in target.parents:
                    continue
            if not folder.is_dir():
                continue
            entries = sorted(os.scandir(folder_path), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if not name.endswith(SUFFIX) or name.startswith(AGENT_PREFIX):
                continue
            path = Path(entry.path)
            if regular_file_inside(path, root):
                yield path


def orphaned_subagent_files(root: Path) -> Iterator[Path]:
    """The subagent transcripts whose session transcript is gone: under
    ``<folder>/<session-id>/subagents/`` when ``<folder>/<session-id>.jsonl`` is missing
    (2.1: found from directory listings alone), and Claude Code 2.0's sibling
    ``<folder>/agent-*.jsonl`` files whose first record names a session with no transcript
    in the folder (those name their session only inside: the head of each is read)."""
    try:
        folders = sorted(os.scandir(root), key=lambda entry: entry.name)
    except OSError:
        return
    for folder in folders:
        try:
            if folder.is_symlink() or not folder.is_dir():
                continue
            with os.scandir(folder.path) as listing:
                entries = {entry.name: entry.is_dir(follow_symlinks=False) for entry in listing}
        except OSError:
            continue
        folder_path = Path(folder.path)
        for name in sorted(entries):
            if not entries[name] or name + SUFFIX in entries:
                continue
            nested = folder_path / name / "subagents"
            for path in _agent_files(nested):
                if regular_file_inside(path, folder_path):
                    yield path
        for name in sorted(entries):
            if entries[name] or not (name.startswith(AGENT_PREFIX) and name.endswith(SUFFIX)):
                continue
            path = folder_path / name
            if not regular_file_inside(path, folder_path):
                continue
            session_id = first_session_id(path)
            if session_id is not None and session_id + SUFFIX not in entries:
                yield path


def is_orphaned_subagent_file(path: Path) -> bool:
    """A subagent transcript whose session transcript is not where Claude Code keeps it:
    ``<session-id>.jsonl`` beside the ``<session-id>/subagents/`` folder (2.1), or beside
    the ``agent-*.jsonl`` file, named by its records (2.0)."""
    if not is_agent_file(path):
        return False
    if path.parent.name == "subagents":
        session_folder = path.parent.parent
        return not (session_folder.parent / (session_folder.name + SUFFIX)).exists()
    session_id = first_session_id(path)
    return session_id is not None and not (path.parent / (session_id + SUFFIX)).exists()


def subagent_files(session_path: Path, session_id: str) -> list[Path]:
    """The subagent transcripts of the session stored at ``session_path``: those under
    ``<session-id>/subagents/`` and the sibling ``agent-*.jsonl`` files whose records name
    this session."""
    folder = session_path.parent
    nested = folder / session_path.stem / "subagents"
    found = [path for path in _agent_files(nested) if regular_file_inside(path, folder)]
    found.extend(
        path
        for path in _agent_files(folder)
        if regular_file_inside(path, folder) and first_session_id(path) == session_id
    )
    return found


def _agent_files(folder: Path) -> list[Path]:
    """The ``agent-*.jsonl`` entries of ``folder`` by name (names are compared, not paths:
    this runs once per imported session)."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(
                entry.name
                for entry in entries
                if entry.name.startswith(AGENT_PREFIX) and entry.name.endswith(SUFFIX)
            )
    except OSError:
        return []
    return [folder / name for name in names]


def first_records(path: Path, limit: int = HEAD_BYTES) -> list[dict[str, Any]]:
    """The complete, valid records within the first ``limit`` bytes of ``path``."""
    with open(path, "rb") as handle:
        head = handle.read(limit)
    records = []
    lines = head.split(b"\n")
    if len(head) == limit:
        lines = lines[:-1]  # the last piece may be cut
    for line in lines:
        line = line.strip().removeprefix(b"\xef\xbb\xbf")
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def first_session_id(path: Path) -> str | None:
    """The ``sessionId`` of the first record that has one, within the file's head."""
    try:
        for record in first_records(path, 16 * 1024):
            value = record.get("sessionId")
            if isinstance(value, str) and value:
                return value
    except OSError:
        return None
    return None


def looks_like_claude(records: list[dict[str, Any]]) -> bool:
    """Whether these records are Claude Code's: a known record type, with Claude's fields."""
    for record in records:
        kind = record.get("type")
        if kind not in _CLAUDE_TYPES:
            continue
        if kind == "summary" and "leafUuid" in record:
            return True
        if kind == "file-history-snapshot" and "messageId" in record:
            return True
        if "sessionId" in record and ("uuid" in record or "parentUuid" in record):
            return True
    return False


def agent_meta(agent_path: Path) -> dict[str, Any]:
    """The ``agent-<id>.meta.json`` next to a 2.1 subagent transcript, or ``{}``."""
    meta = agent_path.with_name(agent_path.name.removesuffix(SUFFIX) + ".meta.json")
    try:
        with open(meta, "rb") as handle:
            value = json.loads(handle.read(64 * 1024))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def count_prompts(path: Path, *, sidechain: bool = False) -> int:
    """A fast count of the human prompts in a transcript, for the picker: user records that
    carry no tool result and are not harness text (the full reader decides for real).
    ``sidechain``: the file is a subagent's own, whose records are all sidechain records."""
    count = 0
    with open(path, "rb") as handle:
        for line in handle:
            if b'"type":"user"' not in line and b'"type": "user"' not in line:
                continue
            if b'"tool_result"' in line or b'"isMeta":true' in line:
                continue
            if (b'"isSidechain":true' in line and not sidechain) or b"<command-name>" in line:
                continue
            if b"<local-command" in line or b"Caveat: The messages below" in line:
                continue
            count += 1
    return count
