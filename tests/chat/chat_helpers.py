"""Shared by the end-to-end chat tests: the installed ``hermes`` in a pseudo-terminal, pointed
at the stand-in OpenAI-compatible server (tests/standins/openai_server.py) on 127.0.0.1."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.builtins.model_titles import TITLE_PROMPT
from hermes_core.store import SessionStore

API_KEY = "sk-standin-test"
PROMPT = "›"
"""The prompt mark (prompt_toolkit draws the space after it with cursor moves)."""
TITLE_MARK = TITLE_PROMPT[:40]
"""Text only the automatic-title request carries (its system prompt)."""


@pytest.fixture
def server() -> Iterator[OpenAIStandIn]:
    """The stand-in endpoint; automatic-title requests always get the same short answer."""
    with OpenAIStandIn(api_key=API_KEY) as standin:
        standin.add(Reply(text="Stand-in chat", match=TITLE_MARK, times=None, usage=(5, 2)))
        yield standin


def chat_env(tmp_path: Path, server: OpenAIStandIn | None, **extra: str) -> dict[str, str]:
    """The environment of a chat: its own home, the stand-in as the model endpoint."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HERMES_", "OPENAI_", "TMUX", "KITTY_", "WEZTERM_", "ZELLIJ"))
        and key not in ("WT_SESSION",)
    }
    env["HERMES_HOME"] = str(tmp_path / "home")
    env["HOME"] = str(tmp_path / "user")
    env["TERM"] = "xterm-256color"
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"  # pexpect is no terminal: it cannot answer a CPR
    if server is not None:
        env["HERMES_MODEL_BASE_URL"] = server.base_url
        env["HERMES_MODEL"] = "standin-model"
        env["OPENAI_API_KEY"] = API_KEY
    env.update(extra)
    return env


_ANSI = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"


def styled(text: str) -> str:
    """A regex for ``text`` as drawn by rich: style escapes may sit between any characters."""
    return _ANSI.join(re.escape(char) for char in text)


def write_config(tmp_path: Path, text: str) -> None:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text, encoding="utf-8")


def spawn_chat(
    env: dict[str, str],
    *args: str,
    cwd: Path | None = None,
    timeout: float = 30,
    preexec_fn: Callable[[], None] | None = None,
) -> pexpect.spawn:
    """``hermes ARGS…`` in a pseudo-terminal (``preexec_fn`` runs in the child before it
    starts, as a parent's settings it inherits)."""
    return pexpect.spawn(
        hermes_command(),
        list(args),
        env=env,
        cwd=str(cwd) if cwd else None,
        dimensions=(40, 140),
        encoding="utf-8",
        timeout=timeout,
        preexec_fn=preexec_fn,
    )


def wait_prompt(child: pexpect.spawn) -> None:
    child.expect_exact(PROMPT)


def say(child: pexpect.spawn, text: str) -> None:
    """Type a line and press Enter, at the prompt."""
    wait_prompt(child)
    child.send(text + "\r")


def quit_chat(child: pexpect.spawn, *, prompt_seen: bool = False) -> str:
    """Ctrl-D at the prompt; the id from the exit lines."""
    if not prompt_seen:
        wait_prompt(child)
    child.sendcontrol("d")
    child.expect(r"Resume it with:  hermes --resume (\d{8}_\d{6}_[0-9a-f]{6})")
    session_id = str(child.match.group(1))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    return session_id


def open_store(tmp_path: Path) -> SessionStore:
    return SessionStore.open(tmp_path / "home")
