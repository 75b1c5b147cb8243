"""Through the installed ``hermes``: ``sessions export --redact`` in every format removes the
secret kinds issue 23 names from user text, assistant text, tool output and tool-call
arguments, and leaves clean text byte for byte as an export without redaction writes it."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from hermes_hookspecs import Message, ToolCall
from installed_hermes import run_hermes_in
from issue23_samples import CLEAN_CONTROLS, ISSUE_23_KINDS

from hermes_core.store import SessionStore

FORMATS = ("jsonl", "md", "qmd", "html", "trace")
NONCE = re.compile(rb"nonce(?:-|=\")[A-Za-z0-9_+/=-]+")


def _messages(texts: list[str]) -> list[Message]:
    """Each text in the four places a secret turns up."""
    messages: list[Message] = []
    for number, text in enumerate(texts):
        call_id = f"call-{number}"
        messages += [
            Message("user", text, timestamp=4.0 * number + 1),
            Message(
                "assistant",
                f"noted: {text}",
                timestamp=4.0 * number + 2,
                tool_calls=(ToolCall("shell", json.dumps({"command": text}), call_id),),
            ),
            Message(
                "tool", text, timestamp=4.0 * number + 3, tool_call_id=call_id, tool_name="shell"
            ),
        ]
    return messages


def _store(home: Path, texts: list[str]) -> None:
    with SessionStore.open(home) as store:
        session = store.create_session("cli", title="deploy notes")
        store.append_messages(session.id, _messages(texts))
        store.end_session(session.id, "user_exit")


def _export(home: Path, out: Path, fmt: str, *flags: str) -> dict[str, bytes]:
    result = run_hermes_in(
        home, "sessions", "export", str(out), "--format", fmt, "--min-messages", "0", *flags
    )
    assert result.returncode == 0, result.stderr
    if out.is_file():  # jsonl and html write one file
        return {fmt: out.read_bytes()}
    files = {
        str(path.relative_to(out)): path.read_bytes()
        for path in sorted(out.rglob("*"))
        # The manifest records when the export ran.
        if path.is_file() and path.name != "manifest.jsonl"
    }
    assert files, f"{fmt} wrote no session file"
    return files


def _readings(data: bytes) -> list[str]:
    """The file as written and with JSON string escapes undone (tool-call arguments are
    JSON inside JSON)."""
    text = data.decode("utf-8")
    unescaped = text.replace('\\"', '"').replace("\\\\", "\\").replace("\\n", "\n")
    return [text, unescaped, html.unescape(text)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_redacted_export_holds_none_of_the_secrets(tmp_path: Path, fmt: str) -> None:
    home = tmp_path / "home"
    _store(home, [text for text, _secret in ISSUE_23_KINDS.values()])
    plain = _export(home, tmp_path / "plain", fmt, "--no-redact")
    assert any(
        secret in reading
        for data in plain.values()
        for reading in _readings(data)
        for _text, secret in ISSUE_23_KINDS.values()
    ), "the unredacted export should hold the secrets (or this test could not fail)"
    redacted = _export(home, tmp_path / "redacted", fmt, "--redact")
    leaked = sorted(
        kind
        for kind, (_text, secret) in ISSUE_23_KINDS.items()
        for data in redacted.values()
        for reading in _readings(data)
        if secret in reading
    )
    assert not leaked


@pytest.mark.parametrize("fmt", FORMATS)
def test_redacted_export_of_clean_text_is_byte_identical(tmp_path: Path, fmt: str) -> None:
    home = tmp_path / "home"
    _store(home, list(CLEAN_CONTROLS))
    plain = _export(home, tmp_path / "plain", fmt, "--no-redact")
    redacted = _export(home, tmp_path / "redacted", fmt, "--redact")
    assert _comparable(redacted) == _comparable(plain)
    for control in CLEAN_CONTROLS:
        assert any(
            control in reading for data in redacted.values() for reading in _readings(data)
        ), control


def _comparable(files: dict[str, bytes]) -> dict[str, bytes]:
    """The files less what differs between two exports by design: the lines of the Markdown
    front matter that say when the export ran and whether it was redacted, and the page's
    per-export script nonce (html)."""
    return {
        name: NONCE.sub(
            b"nonce",
            b"".join(
                line
                for line in data.splitlines(keepends=True)
                if not line.startswith((b"exported_at: ", b"redacted: "))
            ),
        )
        for name, data in files.items()
    }
