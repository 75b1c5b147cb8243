"""The installed ``hermes`` chat in a pseudo-terminal against the stand-in model endpoint:
what a person sees, and what is in the store afterwards."""

from __future__ import annotations

import json
from pathlib import Path

from chat_helpers import open_store, quit_chat, say, spawn_chat, chat_env, wait_prompt
from standins.openai_server import OpenAIStandIn, Reply, ScriptedToolCall


def test_a_two_turn_chat_is_stored_with_usage_and_exit_prints_the_resume_command(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    server.add(Reply(text="Hello! How can I help?", usage=(20, 6)))
    server.add(Reply(text="Docker builds images from a Dockerfile.", usage=(40, 9)))
    child = spawn_chat(chat_env(tmp_path, server), "chat")
    child.expect("Hermes chat — standin-model")
    say(child, "hi there")
    child.expect("Hello! How can I help?")
    say(child, "what does docker build do?")
    child.expect("Docker builds images from a Dockerfile.")
    session_id = quit_chat(child)
    with open_store(tmp_path) as store:
        session = store.get_session(session_id)
        messages = store.messages(session_id)
    assert session.source == "cli" and session.end_reason == "user_exit"
    assert session.cwd is not None and session.model == "standin-model"
    assert [(m.role, m.content) for m in messages] == [
        ("user", "hi there"),
        ("assistant", "Hello! How can I help?"),
        ("user", "what does docker build do?"),
        ("assistant", "Docker builds images from a Dockerfile."),
    ]
    assert (session.input_tokens, session.output_tokens) >= (60, 15)
