"""``kill -9`` of ``hermes acp`` in the middle of a streamed answer: every turn the editor had
an answer for, and the prompt it was waiting on, are in the store; a new ``hermes acp`` loads
the session and goes on with it."""

from __future__ import annotations

import asyncio
import signal
import threading
from pathlib import Path

import pytest
from acp import text_block
from acp_harness import (
    STEP_TIMEOUT,
    agent_env,
    hermes_acp,
    run,
    server,
    shown_messages,
    shown_session,
)
from standins.openai_server import OpenAIStandIn, Reply

__all__ = ["server"]


@pytest.mark.slow
def test_kill_9_mid_turn_loses_no_acknowledged_message(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    release = threading.Event()
    server.add(Reply(text="The first answer, whole."))
    server.add(Reply(text="A second answer cut short", chunk_chars=3, hold=release,
                     hold_after_chunks=2))  # fmt: skip
    server.add(Reply(text="Back again."))

    async def crash() -> tuple[str, int]:
        async with hermes_acp(home, server) as agent:
            sid = (await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            first = await asyncio.wait_for(
                agent.conn.prompt(session_id=sid, prompt=[text_block("One")]), STEP_TIMEOUT
            )
            assert first.stop_reason == "end_turn"
            turn = asyncio.ensure_future(
                agent.conn.prompt(session_id=sid, prompt=[text_block("Two")])
            )
            await agent.editor.wait_for_text(sid, len(agent.editor.agent_text(sid)) + 2)
            agent.process.send_signal(signal.SIGKILL)
            returncode = await agent.process.wait()
            turn.cancel()
            return sid, returncode

    try:
        sid, returncode = run(crash())
    finally:
        release.set()
    assert returncode == -signal.SIGKILL
    env = agent_env(home, server)
    assert [(m["role"], m["content"]) for m in shown_messages(home, env, sid)] == [
        ("user", "One"),
        ("assistant", "The first answer, whole."),
        ("user", "Two"),
    ]

    async def again() -> tuple[list[str], str]:
        async with hermes_acp(home, server) as agent:
            await agent.conn.load_session(cwd=str(tmp_path), session_id=sid, mcp_servers=[])
            replayed = agent.editor.user_text(sid)
            answer = await asyncio.wait_for(
                agent.conn.prompt(session_id=sid, prompt=[text_block("Three")]), STEP_TIMEOUT
            )
            return replayed, answer.stop_reason

    replayed, stop_reason = run(again())
    assert replayed == ["One", "Two"]
    assert stop_reason == "end_turn"
    assert [(m["role"], m["content"]) for m in shown_messages(home, env, sid)][-2:] == [
        ("user", "Three"),
        ("assistant", "Back again."),
    ]


def test_sigterm_mid_turn_keeps_what_was_said_and_ends_the_session(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    release = threading.Event()
    server.add(Reply(text="Half of this is said", chunk_chars=4, hold=release,
                     hold_after_chunks=2))  # fmt: skip

    async def stop() -> tuple[str, int, str]:
        async with hermes_acp(home, server) as agent:
            sid = (await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            turn = asyncio.ensure_future(
                agent.conn.prompt(session_id=sid, prompt=[text_block("Talk")])
            )
            await agent.editor.wait_for_text(sid, 2)
            agent.process.send_signal(signal.SIGTERM)
            returncode = await asyncio.wait_for(agent.process.wait(), STEP_TIMEOUT)
            turn.cancel()
            return sid, returncode, await agent.stderr()

    try:
        sid, returncode, stderr = run(stop())
    finally:
        release.set()
    assert returncode == 0
    assert "Traceback" not in stderr
    env = agent_env(home, server)
    shown = shown_session(home, env, sid)
    assert [(m["role"], m["content"]) for m in shown["messages"]] == [
        ("user", "Talk"),
        ("assistant", "Half of \n\n[interrupted]"),  # the two pieces that arrived
    ]
    assert shown["end_reason"] == "user_exit"
