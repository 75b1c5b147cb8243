"""``hermes sessions export --format html|trace`` through the installed command (subprocesses).

The sessions live in a real store under a temporary ``HERMES_HOME``; uploads go to the LOCAL
STAND-IN of the Hugging Face Hub in ``hub_standin`` (never to huggingface.co).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest
from hermes_hookspecs import Message, ToolCall
from hub_standin import StandInHub
from installed_hermes import hermes_command
from trace_checks import assert_claude_trace_shape, parse_trace

from hermes_core.store import SessionStore

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def run(
    *args: str, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    installed = hermes_command()
    environment = {**os.environ, "HOME": str(home.parent), "HERMES_HOME": str(home), **(env or {})}
    for name in ("HERMES_DEBUG", "HF_TOKEN", "HF_ENDPOINT"):
        if name not in (env or {}):
            environment.pop(name, None)
    return subprocess.run(
        [installed, *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def fill_home(home: Path) -> tuple[str, str]:
    """Two ended sessions: a coding one with a tool call (and a secret), and a chat."""
    store = SessionStore.open(home)
    try:
        coding = store.create_session(
            "cli",
            title="Fix the parser",
            started_at=1767258000.0,
            cwd="/home/ana/parser",
            model="claude-sonnet-4-6",
        )
        store.append_messages(
            coding.id,
            [
                Message("user", f"Why does it fail? my token is {SECRET}", timestamp=1767258001.0),
                Message(
                    "assistant",
                    "Let me run the tests.",
                    timestamp=1767258002.0,
                    tool_calls=(ToolCall("terminal", '{"command": "pytest -q"}', id="call_1"),),
                ),
                Message(
                    "tool",
                    "1 failed",
                    timestamp=1767258003.0,
                    tool_call_id="call_1",
                    tool_name="terminal",
                ),
                Message("assistant", "Guard the empty case.", timestamp=1767258004.0),
            ],
        )
        store.end_session(coding.id, "user_exit", ended_at=1767258005.0)
        chat = store.create_session("telegram", title="Weekend plans", started_at=1767344400.0)
        store.append_messages(
            chat.id,
            [
                Message("user", "Suggest a hike near Sintra.", timestamp=1767344401.0),
                Message("assistant", "Azenhas do Mar to Praia da Ursa.", timestamp=1767344402.0),
            ],
        )
        store.end_session(chat.id, "user_exit", ended_at=1767344403.0)
        return coding.id, chat.id
    finally:
        store.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def test_cli_html_one_session_to_a_file(home: Path, tmp_path: Path) -> None:
    coding, _ = fill_home(home)
    target = tmp_path / "one.html"
    result = run(
        "sessions", "export", str(target), "--format", "html", "--session-id", coding, home=home
    )
    assert result.returncode == 0, result.stderr
    page = target.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page
    assert "Why does it fail?" in page
    assert 'id="sidebar"' not in page


def test_cli_html_several_sessions_get_a_sidebar(home: Path, tmp_path: Path) -> None:
    fill_home(home)
    target = tmp_path / "all.html"
    result = run(
        "sessions", "export", str(target), "--format", "html", "--newer-than", "3650d", home=home
    )
    assert result.returncode == 0, result.stderr
    page = target.read_text(encoding="utf-8")
    assert page.count('class="pick"') == 2
    assert "Weekend plans" in page and "Fix the parser" in page


def test_cli_trace_one_session_goes_to_stdout(home: Path) -> None:
    coding, _ = fill_home(home)
    result = run(
        "sessions", "export", "--format", "trace", "--session-id", coding, "--no-redact", home=home
    )
    assert result.returncode == 0, result.stderr
    records = parse_trace(result.stdout.encode())
    assert_claude_trace_shape(records, coding)
    assert SECRET in result.stdout


def test_cli_trace_never_shows_a_secret_by_default(home: Path) -> None:
    coding, _ = fill_home(home)
    result = run("sessions", "export", "--format", "trace", "--session-id", coding, home=home)
    assert SECRET not in result.stdout
    if importlib.util.find_spec("hermes_core.redaction") is None:
        # No redaction engine in this installation: the export is refused, in one line.
        assert result.returncode == 1
        assert result.stdout == ""
        assert len(result.stderr.strip().splitlines()) == 1
        assert "redaction" in result.stderr
        return
    assert result.returncode == 0, result.stderr
    records = parse_trace(result.stdout.encode())
    assert_claude_trace_shape(records, coding)
    prompt = next(r for r in records if r["type"] == "user")
    assert prompt["message"]["content"].startswith("Why does it fail? my token is ")


def test_cli_trace_bulk_writes_a_file_per_session(home: Path, tmp_path: Path) -> None:
    coding, chat = fill_home(home)
    folder = tmp_path / "traces"
    result = run(
        "sessions",
        "export",
        str(folder),
        "--format",
        "trace",
        "--newer-than",
        "3650d",
        "--no-redact",
        home=home,
    )
    assert result.returncode == 0, result.stderr
    for session_id in (coding, chat):
        data = (folder / f"{session_id}.trace.jsonl").read_bytes()
        assert_claude_trace_shape(parse_trace(data), session_id)


def test_cli_trace_upload_without_token_is_one_line(home: Path) -> None:
    coding, _ = fill_home(home)
    result = run(
        "sessions",
        "export",
        "--format",
        "trace",
        "--session-id",
        coding,
        "--upload",
        "--no-redact",
        home=home,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("hermes: ") and "HF_TOKEN" in lines[0]
    assert "Traceback" not in result.stderr


def test_cli_trace_upload_to_standin_hub_is_private(home: Path, tmp_path: Path) -> None:
    fill_home(home)
    with StandInHub(token="hf_cli_token", user="ana") as hub:
        env = {"HF_TOKEN": "hf_cli_token", "HF_ENDPOINT": hub.endpoint, "NO_PROXY": "127.0.0.1"}
        result = run(
            "sessions",
            "export",
            "--format",
            "trace",
            "--newer-than",
            "3650d",
            "--upload",
            "--no-redact",
            home=home,
            env=env,
        )
        assert result.returncode == 0, result.stderr
        repo = hub.state.repos["ana/hermes-traces"]
        assert repo.private is True
        assert len(repo.files) == 2
        for name, data in repo.files.items():
            assert_claude_trace_shape(parse_trace(data), name.removesuffix(".trace.jsonl"))
        assert "uploaded 2 trace(s)" in result.stderr


def test_cli_trace_upload_public_to_standin_hub(home: Path) -> None:
    coding, _ = fill_home(home)
    with StandInHub(token="hf_cli_token", user="ana") as hub:
        env = {"HF_TOKEN": "hf_cli_token", "HF_ENDPOINT": hub.endpoint, "NO_PROXY": "127.0.0.1"}
        result = run(
            "sessions",
            "export",
            "--format",
            "trace",
            "--session-id",
            coding,
            "--upload",
            "--public",
            "--no-redact",
            home=home,
            env=env,
        )
        assert result.returncode == 0, result.stderr
        assert hub.state.repos["ana/hermes-traces"].private is False


def test_cli_html_refuses_upload(home: Path, tmp_path: Path) -> None:
    coding, _ = fill_home(home)
    result = run(
        "sessions", "export", "--format", "html", "--session-id", coding, "--upload", home=home
    )
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
