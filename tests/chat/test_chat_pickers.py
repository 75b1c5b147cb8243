"""The pickers that lead into the chat: ``sessions browse`` (Enter resumes) and
``--resume @claude`` (the import picker, then straight into the imported conversation)."""

from __future__ import annotations

import shutil
from pathlib import Path

from chat_helpers import chat_env, open_store, quit_chat, say, spawn_chat, styled
from hermes_hookspecs import Message
from standins.openai_server import OpenAIStandIn, Reply

CLAUDE_SAMPLES = Path(__file__).resolve().parents[1] / "data" / "importing" / "claude" / "projects"


def test_enter_in_browse_resumes_the_session_in_the_chat(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    with open_store(tmp_path) as store:
        target = store.create_session("cli", title="browse target", cwd=str(tmp_path))
        store.append_messages(
            target.id, [Message("user", "plan the garden"), Message("assistant", "Tomatoes first.")]
        )
        store.end_session(target.id, "user_exit")
    server.add(Reply(text="Then basil."))
    child = spawn_chat(chat_env(tmp_path, server), "sessions", "browse")
    child.expect("type to search")
    child.send("browse target")
    child.expect("1 shown")
    child.send("\r")
    child.expect("Resumed browse target")
    child.expect(styled("● plan the garden"))
    say(child, "and after that?")
    child.expect("Then basil.")
    assert quit_chat(child) == target.id
    with open_store(tmp_path) as store:
        assert [m.content for m in store.messages(target.id)][-1] == "Then basil."


def test_resume_at_claude_imports_the_picked_log_and_continues_it(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    config = tmp_path / ".claude"
    shutil.copytree(CLAUDE_SAMPLES, config / "projects", symlinks=True)
    server.add(Reply(text="Tabs are now handled."))
    env = chat_env(
        tmp_path,
        server,
        CLAUDE_CONFIG_DIR=str(config),
        HERMES_PLUGINS=("hermes-import-claude,hermes-model-openai"),
    )
    child = spawn_chat(env, "--resume", "@claude")
    child.expect("Import sessions")
    child.send("lexer")
    child.expect("1 shown")
    child.send("\r")
    child.expect(r"✓ Imported the Claude Code conversation as (\S+)")
    imported = child.match.group(1)
    child.expect(f"Resumed .*{imported}")
    child.expect(styled("● Why does the lexer choke on tabs"))
    say(child, "is it fixed now?")
    child.expect("Tabs are now handled.")
    assert quit_chat(child) == imported
    with open_store(tmp_path) as store:
        session = store.get_session(imported)
        messages = store.messages(imported)
    assert session.source == "claude-code"
    assert [m.content for m in messages[-2:]] == ["is it fixed now?", "Tabs are now handled."]
