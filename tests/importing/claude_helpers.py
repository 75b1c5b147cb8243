"""Shared pieces of the import tests: the Claude Code samples, reading helpers, record
builders and a store to import into."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_hookspecs import Message
from hermes_import_claude.importer import ClaudeCodeImporter
from reading_helpers import Read

DATA = Path(__file__).resolve().parents[1] / "data" / "importing" / "claude"
PROJECTS = DATA / "projects"
PARSER = PROJECTS / "-home-ana-src-parser"
S21 = PARSER / "11111111-aaaa-4bbb-8ccc-000000000001.jsonl"
"""Claude Code 2.1 layout: subagent under ``<id>/subagents/``, thinking, meta, image…"""
S20 = PARSER / "22222222-aaaa-4bbb-8ccc-000000000002.jsonl"
"""Claude Code 2.0 layout: a sibling ``agent-*.jsonl`` naming this session."""
S10 = PROJECTS / "-home-ana-web" / "33333333-aaaa-4bbb-8ccc-000000000003.jsonl"
"""Claude Code 1.0 layout: two subagents inline (``isSidechain``), a slash command."""
SUMMARY_ONLY = PROJECTS / "-home-ana-empty" / "44444444-aaaa-4bbb-8ccc-000000000004.jsonl"
SNAPSHOT_ONLY = PROJECTS / "-home-ana-empty" / "55555555-aaaa-4bbb-8ccc-000000000005.jsonl"
EMPTY = PROJECTS / "-home-ana-empty" / "66666666-aaaa-4bbb-8ccc-000000000006.jsonl"

IMPORTER = ClaudeCodeImporter()


def read_all(path: Path, cursor: str | None = None) -> list[Read]:
    """Everything ``read`` yields for ``path``, each session's messages consumed in turn (as
    the core does)."""
    found = []
    for session in IMPORTER.read(path, cursor):
        messages = list(session.messages)
        found.append(Read(session, messages))
    return found


def copy_tree(destination: Path) -> Path:
    """A private copy of the sample ``projects`` tree under ``destination/.claude``; returns
    the Claude config folder (for ``CLAUDE_CONFIG_DIR``)."""
    config = destination / ".claude"
    shutil.copytree(PROJECTS, config / "projects", symlinks=True)
    return config


def fingerprint(root: Path) -> dict[str, tuple[str, int]]:
    """SHA-256 and modification time of every file under ``root``."""
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path)] = (digest, path.stat().st_mtime_ns)
    return found


# ---------------------------------------------------------------------- record builders

SESSION = "77777777-aaaa-4bbb-8ccc-000000000007"
CWD = "/home/bo/proj"


def chain(kind: str, uuid: str, parent: str | None, second: int, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "uuid": uuid,
        "timestamp": f"2026-05-01T12:00:{second:02d}.000Z",
        "sessionId": SESSION,
        "cwd": CWD,
        "gitBranch": "main",
        "version": "2.1.114",
    }
    record.update(extra)
    return record


def prompt(uuid: str, second: int, content: Any, **extra: Any) -> dict[str, Any]:
    return chain("user", uuid, None, second, message={"role": "user", "content": content}, **extra)


def reply(
    uuid: str,
    second: int,
    block: dict[str, Any],
    *,
    message_id: str,
    usage: dict[str, int] | None = None,
    model: str = "claude-opus-4-7",
    **extra: Any,
) -> dict[str, Any]:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "usage": usage or {"input_tokens": 1, "output_tokens": 1},
    }
    return chain("assistant", uuid, None, second, message=message, **extra)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def messages_of(reads: list[Read]) -> Iterator[Message]:
    for read in reads:
        yield from read.messages
