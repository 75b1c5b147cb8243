"""Shared pieces of the Codex CLI importer tests: samples, line builders, a reading helper."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hermes_import_codex.importer import CodexImporter
from reading_helpers import Read

DATA = Path(__file__).resolve().parents[1] / "data" / "importing" / "codex"
ENVELOPE_SAMPLE = (
    DATA
    / "sessions/2026/03/14/rollout-2026-03-14T09-30-00-0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
)
LEGACY_SAMPLE = (
    DATA / "legacy/rollout-2025-05-07T17-24-21-5f0c2a8e-9b1d-4c3e-a7f6-2d8e4b6c1a90.jsonl"
)

SESSION_ID = "0195b000-1111-7222-8333-444455556666"
ROLLOUT_NAME = f"rollout-2026-04-01T10-00-00-{SESSION_ID}.jsonl"


def read_all(path: Path, cursor: str | None = None) -> list[Read]:
    """Every session ``codex`` reads from ``path``, each with its messages consumed."""
    found = []
    for session in CodexImporter().read(path, cursor):
        found.append(Read(session, list(session.messages)))
    return found


def read_one(path: Path, cursor: str | None = None) -> Read:
    [found] = read_all(path, cursor)
    return found


def line(kind: str, payload: dict[str, Any], second: int = 0) -> str:
    """One envelope-format rollout line."""
    stamp = f"2026-04-01T08:{second // 60:02d}:{second % 60:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n"


def meta(session_id: str = SESSION_ID, cwd: str = "/work/demo", second: int = 0) -> str:
    return line(
        "session_meta",
        {"id": session_id, "timestamp": "2026-04-01T08:00:00.000Z", "cwd": cwd},
        second,
    )


def user_event(text: str, second: int = 0) -> str:
    return line("event_msg", {"type": "user_message", "message": text, "images": []}, second)


def user_item(text: str, second: int = 0, role: str = "user") -> str:
    content = [{"type": "input_text", "text": text}]
    return line("response_item", {"type": "message", "role": role, "content": content}, second)


def agent_event(text: str, second: int = 0) -> str:
    return line("event_msg", {"type": "agent_message", "message": text}, second)


def assistant_item(text: str, second: int = 0) -> str:
    content = [{"type": "output_text", "text": text}]
    return line(
        "response_item", {"type": "message", "role": "assistant", "content": content}, second
    )


def tool_call(name: str, call_id: str, second: int = 0) -> str:
    payload = {"type": "function_call", "name": name, "arguments": "{}", "call_id": call_id}
    return line("response_item", payload, second)


def tokens(total_in: int, total_out: int, second: int = 0, *, cached: int | None = None) -> str:
    """A ``token_count`` event of cumulative totals (``cached``: the cached part of the
    input, as Codex reports it in ``cached_input_tokens``)."""
    usage = {"input_tokens": total_in, "output_tokens": total_out}
    if cached is not None:
        usage["cached_input_tokens"] = cached
    info = {"total_token_usage": usage, "last_token_usage": usage}
    return line("event_msg", {"type": "token_count", "info": info}, second)


def write_rollout(directory: Path, *lines: str, name: str = ROLLOUT_NAME) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("".join(lines), encoding="utf-8")
    return path


def fingerprint(path: Path) -> tuple[str, int]:
    """SHA-256 and nanosecond mtime: what "left unchanged" means for a foreign file."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
