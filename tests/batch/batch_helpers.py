"""Shared by the ``hermes batch`` tests: the installed ``hermes`` pointed at the stand-in
OpenAI-compatible server (tests/standins/openai_server.py) on 127.0.0.1, a home of its own."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.builtins.model_titles import TITLE_PROMPT

API_KEY = "sk-standin-batch"
TITLE_MARK = TITLE_PROMPT[:40]
"""Text only the automatic-title request carries (its system prompt)."""


@pytest.fixture
def server() -> Iterator[OpenAIStandIn]:
    """The stand-in endpoint; automatic-title requests always get the same short answer."""
    with OpenAIStandIn(api_key=API_KEY) as standin:
        standin.add(Reply(text="Batch title", match=TITLE_MARK, times=None, usage=(5, 2)))
        yield standin


def batch_env(tmp_path: Path, server: OpenAIStandIn) -> dict[str, str]:
    """The environment of a batch run: its own home, the stand-in as the model endpoint."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HERMES_", "OPENAI_"))
    }
    env["HERMES_HOME"] = str(tmp_path / "home")
    env["HOME"] = str(tmp_path / "user")
    env["HERMES_MODEL_BASE_URL"] = server.base_url
    env["HERMES_MODEL"] = "standin-model"
    env["OPENAI_API_KEY"] = API_KEY
    return env


def hermes(
    env: dict[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The installed ``hermes ARGS…`` run to its end, output captured, no terminal."""
    return subprocess.run(
        [hermes_command(), *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )


def spawn_batch(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """``hermes batch ARGS…`` started in the background, output captured."""
    return subprocess.Popen(
        [hermes_command(), "batch", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )


def batch_sessions(env: dict[str, str]) -> list[dict[str, Any]]:
    """What ``hermes sessions list --source batch --json`` lists."""
    listed = hermes(env, "sessions", "list", "--source", "batch", "--json", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    sessions: list[dict[str, Any]] = json.loads(listed.stdout)
    return sessions


def write_jsonl(path: Path, *lines: object) -> Path:
    """A batch file: each line a JSON object, or written as it is when it is a string."""
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path
