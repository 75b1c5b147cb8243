"""Resuming a compression continuation nothing was said in yet, in a pseudo-terminal: the
recap shows the summary it was seeded with, not "(no messages yet)" (issue 29)."""

from __future__ import annotations

from pathlib import Path

from chat_helpers import chat_env, quit_chat, say, spawn_chat, styled
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.agent import COMPRESSION_PROMPT

COMPRESSION_MARK = COMPRESSION_PROMPT[:40]


def test_resuming_a_fresh_continuation_shows_its_summary(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    server.add(Reply(text="Sure, let's plan the release."))
    server.add(Reply(text="We planned the v2 release: freeze Friday.", match=COMPRESSION_MARK))
    env = chat_env(tmp_path, server)
    child = spawn_chat(env, "chat")
    say(child, "let's plan the v2 release")
    child.expect("Sure, let's plan the release.")
    say(child, "/compress")
    child.expect(r"Compressed into (\d{8}_\d{6}_[0-9a-f]+)")
    continuation = child.match.group(1)
    assert quit_chat(child) == continuation
    child = spawn_chat(env, "--resume", continuation)
    child.expect(f"Resumed {continuation}|Resumed .*\\({continuation}\\)")
    child.expect("Continued from \\S+; the summary it starts from:")
    child.expect(styled("≡ We planned the v2 release: freeze Friday."))
    before = child.before or ""
    quit_chat(child)
    assert "(no messages yet)" not in before
