"""Under tmux (a private server socket): two panes each chat, then a bare ``hermes -c`` in
each pane resumes that pane's own session — the per-terminal crumbs of SPEC R1."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from chat_helpers import chat_env, open_store
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply

TMUX = shutil.which("tmux")
pytestmark = [
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
    pytest.mark.slow,
]


class Tmux:
    """A tmux server of its own (``-L``), killed at teardown."""

    def __init__(self, env: dict[str, str]) -> None:
        self.socket = f"hermes-test-{os.getpid()}-{time.monotonic_ns()}"
        self.env = env

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            [TMUX or "tmux", "-L", self.socket, "-f", "/dev/null", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
        return done.stdout

    def screen(self, pane: str) -> str:
        return self("capture-pane", "-p", "-J", "-S", "-200", "-t", pane)

    def wait_for(self, pane: str, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.screen(pane))
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"pane {pane} never showed {pattern!r}:\n{self.screen(pane)}")
            time.sleep(0.2)

    def type(self, pane: str, text: str) -> None:
        self("send-keys", "-t", pane, "-l", text)
        self("send-keys", "-t", pane, "Enter")


@pytest.fixture
def tmux(tmp_path: Path, server: OpenAIStandIn) -> Iterator[Tmux]:
    env = chat_env(tmp_path, server, SHELL="/bin/sh", PS1="$ ")
    session = Tmux(env)
    session("new-session", "-d", "-s", "chat", "-x", "200", "-y", "50", "/bin/sh")
    session("split-window", "-t", "chat", "-h", "/bin/sh")
    try:
        yield session
    finally:
        subprocess.run(
            [TMUX or "tmux", "-L", session.socket, "kill-server"], capture_output=True, timeout=20
        )


def test_continue_in_each_pane_resumes_that_panes_own_session(
    tmp_path: Path, server: OpenAIStandIn, tmux: Tmux
) -> None:
    server.add(Reply(text="Answer for alpha.", match="alpha question"))
    server.add(Reply(text="Answer for beta.", match="beta question"))
    panes = tmux("list-panes", "-t", "chat", "-F", "#{pane_id}").split()
    assert len(panes) == 2
    hermes = shlex.quote(hermes_command())
    ids = {}
    for pane, word in zip(panes, ("alpha", "beta"), strict=True):
        tmux.type(pane, f"{hermes} chat")
        tmux.wait_for(pane, "Hermes chat")
        tmux.type(pane, f"the {word} question")
        tmux.wait_for(pane, f"Answer for {word}.\\s*\n›")
    # the beta pane's session is the most recent one: a bare -c without crumbs would take it
    for pane in panes:
        tmux("send-keys", "-t", pane, "C-d")
        ids[pane] = tmux.wait_for(pane, r"hermes --resume (\d{8}_\d{6}_[0-9a-f]{6})").group(1)
    assert len(set(ids.values())) == 2
    tmux("send-keys", "-t", panes[0], "clear", "Enter")
    tmux("send-keys", "-t", panes[1], "clear", "Enter")
    for pane, word in zip(panes, ("alpha", "beta"), strict=True):
        tmux.type(pane, f"{hermes} -c")
        tmux.wait_for(pane, f"Resumed .*{ids[pane]}")
        tmux.wait_for(pane, f"● the {word} question")
        tmux.wait_for(pane, r"╯\s*\n›")  # the prompt is up and reading
        tmux("send-keys", "-t", pane, "C-d")
        tmux.wait_for(pane, f"hermes --resume {ids[pane]}")
    with open_store(tmp_path) as store:
        for pane, word in zip(panes, ("alpha", "beta"), strict=True):
            assert store.messages(ids[pane])[0].content == f"the {word} question"
