"""``hermes acp`` as an editor drives it: a new session in the editor's folder, a prompt whose
answer streams back as ``agent_message_chunk`` updates and is stored (``hermes sessions show``
sees both turns), a cancelled turn that keeps what was said, and the one-line errors."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from acp import RequestError, text_block
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

from hermes_core.agent import INTERRUPTED_MARK
from hermes_core.store import SessionStore

__all__ = ["server"]

ANSWER = "Docker bridges containers through a virtual switch."


def test_a_prompt_streams_its_answer_and_both_turns_are_stored(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/feature-x\n", encoding="utf-8")
    server.add(Reply(text=ANSWER, chunk_chars=5, usage=(40, 9)))

    async def scenario() -> tuple[str, str, list[str], str]:
        async with hermes_acp(home, server) as agent:
            created = await agent.conn.new_session(cwd=str(project), mcp_servers=[])
            answer = await asyncio.wait_for(
                agent.conn.prompt(
                    session_id=created.session_id,
                    prompt=[text_block("How does docker networking work?")],
                ),
                STEP_TIMEOUT,
            )
            chunks = agent.editor.agent_text(created.session_id)
        return created.session_id, answer.stop_reason, chunks, await agent.stderr()

    session_id, stop_reason, chunks, stderr = run(scenario())
    assert stop_reason == "end_turn"
    assert len(chunks) > 1, "the answer arrives in pieces"
    assert "".join(chunks) == ANSWER
    assert "Traceback" not in stderr

    env = agent_env(home, server)
    messages = shown_messages(home, env, session_id)
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "How does docker networking work?"),
        ("assistant", ANSWER),
    ]
    session = shown_session(home, env, session_id)
    assert session["source"] == "acp"
    assert session["workspace"] == str(project.resolve())
    assert session["model"] == "standin-model"
    assert session["end_reason"] == "user_exit"  # the editor closed the connection
    with SessionStore.open(home) as store:
        assert store.get_session(session_id).git_branch == "feature-x"


def test_cancel_stops_the_turn_and_keeps_what_was_said(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    release = threading.Event()
    story = "First part. Second part never comes."
    server.add(Reply(text=story, chunk_chars=6, hold=release, hold_after_chunks=2))
    server.add(Reply(text="Still here."))

    async def scenario() -> tuple[str, str, list[str], str]:
        async with hermes_acp(home, server) as agent:
            created = await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            sid = created.session_id
            turn = asyncio.ensure_future(
                agent.conn.prompt(session_id=sid, prompt=[text_block("Tell me a long story")])
            )
            await agent.editor.wait_for_text(sid, 2)
            await agent.conn.cancel(session_id=sid)
            cancelled = await asyncio.wait_for(turn, STEP_TIMEOUT)
            said = "".join(agent.editor.agent_text(sid))
            again = await asyncio.wait_for(
                agent.conn.prompt(session_id=sid, prompt=[text_block("Are you there?")]),
                STEP_TIMEOUT,
            )
            assert again.stop_reason == "end_turn"
        return sid, cancelled.stop_reason, [said], await agent.stderr()

    try:
        sid, stop_reason, (said,), stderr = run(scenario())
    finally:
        release.set()
    assert stop_reason == "cancelled"
    assert said.startswith("First part.")
    assert "Traceback" not in stderr
    messages = shown_messages(home, agent_env(home, server), sid)
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "Tell me a long story"),
        ("assistant", f"{said}\n\n{INTERRUPTED_MARK}"),
        ("user", "Are you there?"),
        ("assistant", "Still here."),
    ]


def test_unknown_session_and_missing_model_are_one_line_errors(tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def scenario() -> tuple[list[RequestError], str]:
        errors: list[RequestError] = []
        async with hermes_acp(home, None) as agent:
            for call in (
                agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[]),
                agent.conn.load_session(
                    cwd=str(tmp_path), session_id="20260101_000000_abcdef", mcp_servers=[]
                ),
                agent.conn.prompt(session_id="20260101_000000_abcdef", prompt=[text_block("hi")]),
                agent.conn.new_session(cwd="relative/dir", mcp_servers=[]),
            ):
                with pytest.raises(RequestError) as caught:
                    await asyncio.wait_for(call, STEP_TIMEOUT)
                errors.append(caught.value)
            listed = await agent.conn.list_sessions()
            assert listed.sessions == []
        return errors, await agent.stderr()

    errors, stderr = run(scenario())
    no_model, unknown_load, unknown_prompt, relative = errors
    assert str(no_model).startswith("no model is configured: set model.provider")
    assert "\n" not in str(no_model)
    assert str(unknown_load) == "no session 20260101_000000_abcdef"
    assert unknown_load.code == -32002
    assert str(unknown_prompt) == "no session 20260101_000000_abcdef"
    assert "not an absolute path" in str(relative)
    assert stderr == ""


def test_a_model_failure_is_one_line_and_the_prompt_is_kept(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    server.add(Reply.failure(400, message="the stand-in refuses this one"))

    async def scenario() -> tuple[str, RequestError, str]:
        async with hermes_acp(home, server) as agent:
            sid = (await agent.conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            with pytest.raises(RequestError) as caught:
                await asyncio.wait_for(
                    agent.conn.prompt(session_id=sid, prompt=[text_block("Hello?")]),
                    STEP_TIMEOUT,
                )
        return sid, caught.value, await agent.stderr()

    sid, error, stderr = run(scenario())
    assert "the stand-in refuses this one" in str(error)
    assert "\n" not in str(error)
    assert "Traceback" not in stderr
    messages = shown_messages(home, agent_env(home, server), sid)
    assert [(m["role"], m["content"]) for m in messages] == [("user", "Hello?")]
