"""The installed ``hermes`` chat in a pseudo-terminal against the stand-in model endpoint:
what a person sees, and what is in the store afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
from chat_helpers import (
    chat_env,
    open_store,
    quit_chat,
    say,
    spawn_chat,
    styled,
    wait_prompt,
    write_config,
)
from hermes_hookspecs import Message
from standins.openai_server import OpenAIStandIn, Reply, ScriptedToolCall

from hermes_core.agent import COMPRESSION_PROMPT

COMPRESSION_MARK = COMPRESSION_PROMPT[:40]


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


def test_the_model_calls_session_search_and_its_result_is_stored(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    with open_store(tmp_path) as store:
        earlier = store.create_session("cli", title="docker networking")
        store.append_messages(
            earlier.id,
            [
                Message("user", "why can't my compose containers reach each other"),
                Message("assistant", "Put them on one user-defined bridge network."),
            ],
        )
        store.end_session(earlier.id, "user_exit")
    server.add(
        Reply(tool_calls=[ScriptedToolCall("session_search", '{"query": "compose", "limit": 3}')])
    )
    server.add(Reply(text="Last time: one user-defined bridge network."))
    child = spawn_chat(chat_env(tmp_path, server))  # bare hermes is the chat
    say(child, "remember when we fixed the compose networking?")
    child.expect("session_search")
    child.expect("Last time: one user-defined bridge network.")
    session_id = quit_chat(child)
    with open_store(tmp_path) as store:
        messages = store.messages(session_id)
    call = messages[1].tool_calls[0]
    assert (messages[1].role, call.name) == ("assistant", "session_search")
    tool = messages[2]
    assert (tool.role, tool.tool_name, tool.tool_call_id) == ("tool", "session_search", call.id)
    payload = json.loads(tool.content)
    assert earlier.id in [result["session_id"] for result in payload["results"]]
    assert messages[3].content == "Last time: one user-defined bridge network."
    tools_offered = server.requests[0]["tools"]
    assert [t["function"]["name"] for t in tools_offered] == ["session_search"]


def test_title_compress_and_continue_by_name(tmp_path: Path, server: OpenAIStandIn) -> None:
    server.add(Reply(text="Sure, let's plan the release."))
    server.add(Reply(text="We planned the v2 release: freeze Friday.", match=COMPRESSION_MARK))
    server.add(Reply(text="Freeze is on Friday."))
    env = chat_env(tmp_path, server)
    child = spawn_chat(env, "chat")
    say(child, "/title")
    child.expect("This session has no title yet.")
    say(child, "/title release plan")
    child.expect("Title queued: release plan")
    say(child, "let's plan the v2 release")
    child.expect("Sure, let's plan the release.")
    say(child, "/title")
    child.expect("Title: release plan")
    say(child, "/compress")
    child.expect(r"Compressed into (\S+): release plan #2")
    continuation = child.match.group(1)
    say(child, "when is the freeze?")
    child.expect("Freeze is on Friday.")
    assert quit_chat(child) == continuation
    with open_store(tmp_path) as store:
        new = store.get_session(continuation)
        parent = store.get_session(new.parent_session_id or "")
        assert (parent.title, parent.end_reason, parent.message_count) == (
            "release plan",
            "compression",
            2,
        )
        assert new.parent_kind == "compression"
        assert [m.role for m in store.messages(continuation)] == ["system", "user", "assistant"]
    server.add(Reply(text="Yes, still Friday."))
    child = spawn_chat(env, "-c", "release plan")
    child.expect("Resumed release plan #2")
    child.expect(styled("● when is the freeze"))
    child.expect(styled("◆ Freeze is on Friday."))
    say(child, "still Friday?")
    child.expect("Yes, still Friday.")
    assert quit_chat(child) == continuation


def test_branch_continues_in_a_child_with_the_history(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    server.add(Reply(text="Option A is simpler."), Reply(text="Then B it is."))
    child = spawn_chat(chat_env(tmp_path, server), "chat")
    say(child, "/branch")
    child.expect("nothing to branch yet")
    say(child, "A or B?")
    child.expect("Option A is simpler.")
    say(child, "/branch")
    child.expect(r"Branched (\S+) into (\S+);")
    original, branch = child.match.group(1), child.match.group(2)
    say(child, "what if I pick B")
    child.expect("Then B it is.")
    assert quit_chat(child) == branch
    with open_store(tmp_path) as store:
        child_row = store.get_session(branch)
        assert (child_row.parent_session_id, child_row.parent_kind) == (original, "branch")
        assert [m.content for m in store.messages(branch)] == [
            "A or B?",
            "Option A is simpler.",
            "what if I pick B",
            "Then B it is.",
        ]
        assert store.get_session(original).end_reason == "branched"
        assert [m.content for m in store.messages(original)] == ["A or B?", "Option A is simpler."]


def test_new_save_help_and_unknown_commands(tmp_path: Path, server: OpenAIStandIn) -> None:
    server.add(Reply(text="First answer."), Reply(text="Second answer."))
    child = spawn_chat(chat_env(tmp_path, server), "chat")
    say(child, "/frobnicate now")
    child.expect("unknown command /frobnicate")
    say(child, "/help")
    child.expect("/compress")
    child.expect("/exit")
    say(child, "/save")
    child.expect("nothing to save yet")
    say(child, "first question")
    child.expect("First answer.")
    say(child, "/save")
    child.expect(r"Saved a snapshot to (\S+\.json)")
    saved = Path(child.match.group(1))
    say(child, "/new side quest")
    child.expect(r"New session titled “side quest” \(ended (\S+)\)")
    first = child.match.group(1)
    say(child, "second question")
    child.expect("Second answer.")
    say(child, "/exit")
    child.expect(r"Resume it with:  hermes --resume (\S+)")
    second = child.match.group(1)
    child.expect(pexpect.EOF)
    assert saved == tmp_path / "home" / "sessions" / "saved" / f"{first}.json"
    document = json.loads(saved.read_text(encoding="utf-8"))
    assert [m["content"] for m in document["messages"]] == ["first question", "First answer."]
    with open_store(tmp_path) as store:
        assert store.get_session(first).end_reason == "new_session"
        assert store.get_session(second).title == "side quest"
        assert store.get_session(second).end_reason == "user_exit"


def test_bare_continue_resumes_with_the_recap(tmp_path: Path, server: OpenAIStandIn) -> None:
    server.add(Reply(text="line one\nline two\nline three\nline four"), Reply(text="Welcome back."))
    env = chat_env(tmp_path, server)
    project = tmp_path / "project"
    project.mkdir()
    child = spawn_chat(env, "chat", cwd=project)
    say(child, "tell me a long story")
    child.expect("line four")
    first = quit_chat(child)
    child = spawn_chat(env, "-c", cwd=tmp_path)
    child.expect(f"↪ restored workspace dir: {project.resolve()}")
    child.expect(f"Resumed Stand-in chat \\({first}\\)|Resumed {first}")
    child.expect(styled("● tell me a long story"))
    child.expect(styled("◆ line one"))
    child.expect(styled("line three…"))
    wait_prompt(child)
    assert "line four" not in (child.before or "")
    child.send("back again\r")
    child.expect("Welcome back.")
    assert quit_chat(child) == first
    with open_store(tmp_path) as store:
        assert [m.content for m in store.messages(first)][2:] == ["back again", "Welcome back."]


def test_minimal_resume_display_is_one_line(tmp_path: Path, server: OpenAIStandIn) -> None:
    server.add(Reply(text="Noted."))
    write_config(tmp_path, "display:\n  resume_display: minimal\n")
    env = chat_env(tmp_path, server)
    project = tmp_path / "project"
    project.mkdir()
    child = spawn_chat(env, "chat", cwd=project)
    say(child, "note this")
    child.expect("Noted.")
    first = quit_chat(child)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    child = spawn_chat(env, "chat", "--resume", "latest", "--in", str(project), cwd=elsewhere)
    child.expect(f"↻ Resumed .*{first}.* — 2 messages")
    wait_prompt(child)
    assert "● note this" not in (child.before or "")
    assert "restored workspace dir" not in (child.before or "")  # --in implies no restore
    assert quit_chat(child, prompt_seen=True) == first


def test_paste_keeps_lines_and_resume_and_sessions_switch_sessions(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    with open_store(tmp_path) as store:
        other = store.create_session("cli", title="garden plans", cwd=str(tmp_path))
        store.append_messages(
            other.id, [Message("user", "what to plant"), Message("assistant", "Tomatoes.")]
        )
        store.end_session(other.id, "user_exit")
    server.add(Reply(text="Two lines received."), Reply(text="Back in the garden."))
    server.add(Reply(text="Picked from the list."))
    child = spawn_chat(chat_env(tmp_path, server), "chat")
    wait_prompt(child)
    child.send("\x1b[200~first line\nsecond line\x1b[201~")
    child.send("\r")
    child.expect("Two lines received.")
    say(child, "/resume garden pla")
    child.expect("No session|no session")  # a title must be whole: one line, chat goes on
    say(child, "/resume garden plans")
    child.expect("Resumed garden plans")
    child.expect(styled("● what to plant"))
    say(child, "and then?")
    child.expect("Back in the garden.")
    say(child, "/sessions")
    child.expect("type to search")
    child.send("first line")
    child.expect("1 shown")
    child.send("\r")
    child.expect(styled("● first line"))
    say(child, "one more")
    child.expect("Picked from the list.")
    first = quit_chat(child)
    with open_store(tmp_path) as store:
        contents = [m.content for m in store.messages(first)]
        assert contents[0] == "first line\nsecond line"
        assert contents[-2:] == ["one more", "Picked from the list."]
        assert [m.content for m in store.messages(other.id)][-2:] == [
            "and then?",
            "Back in the garden.",
        ]
    history = (tmp_path / "home" / "chat_history").read_text(encoding="utf-8")
    assert "and then?" in history
