"""On a terminal ``hermes batch`` draws a ``rich`` progress bar, then lists each prompt."""

from __future__ import annotations

from pathlib import Path

import pexpect
from batch_helpers import batch_env
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply


def test_a_terminal_gets_a_progress_bar_then_the_summary(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    server.add(Reply(text="ok", times=None))
    file = tmp_path / "p.txt"
    file.write_text("one\ntwo\n", encoding="utf-8")
    env = batch_env(tmp_path, server)
    env["TERM"] = "xterm-256color"
    child = pexpect.spawn(
        hermes_command(),
        ["batch", str(file)],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(24, 100),
    )
    child.expect("━")  # the bar
    child.expect(r"line 1: done in \S+")
    child.expect(r"line 2: done in \S+")
    child.expect("2 done, 0 failed")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
