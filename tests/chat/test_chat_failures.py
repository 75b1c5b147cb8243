"""Every failure of the model endpoint is one line and the chat stays usable; Ctrl-C stops an
answer; kill -9 mid-answer leaves a readable session; a broken store and a missing provider."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest
from chat_helpers import (
    API_KEY,
    chat_env,
    open_store,
    quit_chat,
    say,
    spawn_chat,
    wait_prompt,
    write_config,
)
from disks import SmallDisk
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply, ScriptedToolCall

from hermes_core.store import SessionStore

FAST_FAILURES = "model:\n  max_retries: 1\n  timeout_seconds: 1.5\n"


def error_then_prompt(child: pexpect.spawn, pattern: str) -> None:
    """One ``✗`` line matching ``pattern``, then the prompt again — no traceback."""
    child.expect(r"✗ ([^\r\n]*)")
    assert pattern in child.match.group(1), child.match.group(1)
    wait_prompt(child)
    assert "Traceback" not in (child.before or "")


def test_429_storm_hang_and_malformed_tool_call_each_one_line(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    write_config(tmp_path, FAST_FAILURES)
    server.add(Reply.failure(429, times=2))  # the first try and the one retry
    server.add(Reply(text="Recovered after the storm."))
    server.add(Reply.hang(4.0, times=2))
    server.add(Reply(text="Answering again."))
    server.add(Reply(tool_calls=[ScriptedToolCall("session_search", "{not json", "bad1")]))
    server.add(Reply(text="Sorry, my tool call was broken."))
    child = spawn_chat(chat_env(tmp_path, server), "chat")
    say(child, "first")
    error_then_prompt(child, "rate limiting requests (HTTP 429)")
    child.send("second\r")
    child.expect("Recovered after the storm.")
    say(child, "third")
    error_then_prompt(child, "did not answer within 1.5 s")
    child.send("fourth\r")
    child.expect("Answering again.")
    say(child, "search please")
    child.expect("Sorry, my tool call was broken.")
    session_id = quit_chat(child)
    with open_store(tmp_path) as store:
        messages = store.messages(session_id)
    users = [m.content for m in messages if m.role == "user"]
    assert users == ["first", "second", "third", "fourth", "search please"]
    tool = next(m for m in messages if m.role == "tool")
    assert tool.tool_call_id == "bad1" and "error" in tool.content


def test_a_wrong_key_is_one_line(tmp_path: Path, server: OpenAIStandIn) -> None:
    server.add(Reply(text="never sent"))
    env = chat_env(tmp_path, server, OPENAI_API_KEY="sk-wrong")
    child = spawn_chat(env, "chat")
    say(child, "hello?")
    error_then_prompt(child, "refused the request (HTTP 401)")
    child.send("/title still works\r")
    child.expect("Title set: still works")
    quit_chat(child)


def test_an_endpoint_that_is_down_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    write_config(tmp_path, FAST_FAILURES)
    env = chat_env(
        tmp_path,
        None,
        HERMES_MODEL_BASE_URL=f"http://127.0.0.1:{port}/v1",
        HERMES_MODEL="m",
        OPENAI_API_KEY=API_KEY,
    )
    child = spawn_chat(env, "chat")
    say(child, "anyone there?")
    error_then_prompt(child, "cannot reach the model endpoint")
    session_id = quit_chat(child, prompt_seen=True)
    with open_store(tmp_path) as store:
        assert [m.content for m in store.messages(session_id)] == ["anyone there?"]


def _sigint_ignored() -> None:
    """What a chat started by a script's background job inherits (bash ignores SIGINT in
    the background jobs of a shell without job control)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("inherited", ["default", "sigint-ignored"])
def test_ctrl_c_stops_the_answer_and_the_chat_goes_on(
    tmp_path: Path, server: OpenAIStandIn, inherited: str
) -> None:
    held = threading.Event()
    server.add(Reply(text="partial words then more words", hold=held, hold_after_chunks=3))
    server.add(Reply(text="Next answer."))
    preexec = _sigint_ignored if inherited == "sigint-ignored" else None
    try:
        child = spawn_chat(chat_env(tmp_path, server), "chat", preexec_fn=preexec)
        say(child, "talk slowly")
        child.expect("partial wor")
        child.sendintr()
        child.expect("Stopped. What was said so far is kept.")
        say(child, "again")
        child.expect("Next answer.")
        session_id = quit_chat(child)
    finally:
        held.set()
    with open_store(tmp_path) as store:
        messages = store.messages(session_id)
    assert messages[1].role == "assistant"
    assert messages[1].content.startswith("partial wor") and "[interrupted]" in messages[1].content
    assert [m.content for m in messages[2:]] == ["again", "Next answer."]


@pytest.mark.slow
def test_kill_9_mid_answer_leaves_a_readable_session(tmp_path: Path, server: OpenAIStandIn) -> None:
    held = threading.Event()
    server.add(
        Reply(text="streaming a long answer that never ends", hold=held, hold_after_chunks=2)
    )
    try:
        child = spawn_chat(chat_env(tmp_path, server), "chat")
        say(child, "the question that was acknowledged")
        child.expect("streamin")
        os.kill(child.pid, signal.SIGKILL)
        child.expect(pexpect.EOF)
        child.close()
    finally:
        held.set()
    assert child.signalstatus == signal.SIGKILL, "the hermes process was really killed"
    database = tmp_path / "home" / "state.db"
    check = sqlite3.connect(database)
    assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    check.close()
    with open_store(tmp_path) as store:
        (session,) = store.select_sessions(None)
        messages = store.messages(session.id)
    assert session.ended_at is None  # nobody ended it: the process died
    assert [(m.role, m.content) for m in messages] == [
        ("user", "the question that was acknowledged")
    ]


def test_a_broken_store_gives_an_unrecorded_chat(tmp_path: Path, server: OpenAIStandIn) -> None:
    server.add(Reply(text="I still answer."))
    home = tmp_path / "home"
    home.mkdir()
    garbage = b"this is not a database" * 100
    (home / "state.db").write_bytes(garbage)
    child = spawn_chat(chat_env(tmp_path, server), "chat")
    child.expect("⚠ Session store unavailable")
    child.expect("hermes sessions repair")
    say(child, "are you there?")
    child.expect("I still answer.")
    wait_prompt(child)
    child.sendcontrol("d")
    child.expect("This chat was not recorded")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (home / "state.db").read_bytes() == garbage


def test_a_read_only_store_gives_an_unrecorded_chat_said_at_start(
    tmp_path: Path, server: OpenAIStandIn, make_immutable: Callable[[Path], None]
) -> None:
    """An immutable ``state.db`` (``chattr +i``: root cannot write it either) is read, but a
    chat would fail at its first message: it says so at start and records nothing."""
    server.add(Reply(text="Answered anyway."))
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        store.create_session("cli", title="kept as it was")
    make_immutable(home / "state.db")
    before = (home / "state.db").read_bytes()
    child = spawn_chat(chat_env(tmp_path, server), "chat")
    child.expect("⚠ Session store unavailable")
    child.expect("is read-only")
    child.expect("This chat is not recorded")
    say(child, "are you there?")
    child.expect("Answered anyway.")
    wait_prompt(child)
    assert "Traceback" not in (child.before or "")
    child.sendcontrol("d")
    child.expect("This chat was not recorded")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (home / "state.db").read_bytes() == before


def test_a_disk_filling_up_mid_chat_is_one_line_and_the_chat_goes_on(
    tmp_path: Path, server: OpenAIStandIn, small_disk: SmallDisk
) -> None:
    """The home on an 8 MB tmpfs that fills while the chat runs: the message that cannot be
    stored is one line (no answer is asked for what was not recorded), the next one, once
    there is room, is answered and kept, and nothing said before is lost."""
    server.add(Reply(text="First answer."), Reply(text="Second answer."))
    env = chat_env(tmp_path, server)
    env["HERMES_HOME"] = str(small_disk.mount / "home")
    child = spawn_chat(env, "chat")
    say(child, "before the disk filled")
    child.expect("First answer.")
    wait_prompt(child)  # the answer is stored before the prompt comes back
    small_disk.fill()
    child.send("no room for this\r")
    child.expect(r"✗ [^\r\n]*is full; nothing was written")
    small_disk.free()
    say(child, "once there was room")
    child.expect("Second answer.")
    assert "Traceback" not in (child.before or "")
    quit_chat(child)
    with SessionStore.open(small_disk.mount / "home") as store:
        (session,) = store.select_sessions(None)
        kept = [(m.role, m.content) for m in store.messages(session.id)]
    assert kept == [
        ("user", "before the disk filled"),
        ("assistant", "First answer."),
        ("user", "once there was room"),
        ("assistant", "Second answer."),
    ]


def test_no_provider_is_one_line_and_the_rest_still_works(tmp_path: Path) -> None:
    env = chat_env(tmp_path, None)
    for args in (["chat"], [], ["-c"]):
        done = subprocess.run(
            [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 1
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert "model.provider" in lines[0] and "HERMES_MODEL_BASE_URL" in lines[0]
        assert "OPENAI_API_KEY" in lines[0]
    listed = subprocess.run(
        [hermes_command(), "sessions", "list"], env=env, capture_output=True, text=True, timeout=30
    )
    assert listed.returncode == 0 and "No sessions" in listed.stdout
    demo = subprocess.run(
        [hermes_command(), "demo", "--into", str(tmp_path / "demo")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert demo.returncode == 0, demo.stderr


def test_unknown_and_ambiguous_resume_references_are_one_line(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    with open_store(tmp_path) as store:
        store.create_session("cli", session_id="20260301_101010_aaaaaa")
        store.create_session("cli", session_id="20260301_101010_aaaabb")
    env = chat_env(tmp_path, server)
    for args, expected in (
        (["--resume", "no-such-session"], "no session matches 'no-such-session'"),
        (["chat", "-c", "20260301_101010_aaaa"], "matches 2 sessions"),
        (["-r", "@claude"], "no Claude Code conversations were found"),
        (["--in", str(tmp_path / "missing")], "--in"),
    ):
        done = subprocess.run(
            [hermes_command(), *args], env=env, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 1, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], (args, done.stderr)


def test_a_missing_provider_plugin_is_one_line_at_the_first_message(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    env = chat_env(tmp_path, server, HERMES_PLUGINS="")  # hermes-model-openai not loaded
    child = spawn_chat(env, "chat")
    say(child, "hello?")
    error_then_prompt(child, "hermes-model-openai")
    child.send("/title kept anyway\r")
    child.expect("Title set: kept anyway")
    session_id = quit_chat(child)
    with open_store(tmp_path) as store:
        assert [m.content for m in store.messages(session_id)] == ["hello?"]
