"""``/save``: a JSON snapshot in $HERMES_HOME/sessions/saved/, written atomically (and on a
full disk, not at all: one line, no temporary file)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pexpect
from chat_helpers import chat_env, quit_chat, say, spawn_chat
from disks import fill, small_tmpfs
from hermes_hookspecs import Message, ToolCall
from hostile_ids import legacy_session_with_id
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.chat.snapshot import SNAPSHOT_FORMAT, save_snapshot, snapshot_path
from hermes_core.store import SessionStore


def test_a_snapshot_holds_the_session_and_every_message(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with SessionStore.open(home) as store:
        session = store.create_session("cli", title="snap me", cwd="/w")
        store.append_messages(
            session.id,
            [
                Message("user", "héllo 世界"),
                Message("assistant", "", tool_calls=(ToolCall("session_search", "{}", "c1"),)),
                Message("tool", "[]", tool_call_id="c1", tool_name="session_search"),
                Message("assistant", "done"),
            ],
        )
        path = save_snapshot(store, home, session.id)
        assert (
            path
            == snapshot_path(home, session.id)
            == home / "sessions" / "saved" / (f"{session.id}.json")
        )
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["format"] == SNAPSHOT_FORMAT
        assert document["session"]["title"] == "snap me"
        assert [m["role"] for m in document["messages"]] == [
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert document["messages"][0]["content"] == "héllo 世界"
        assert document["messages"][1]["tool_calls"][0]["name"] == "session_search"
        store.append_message(session.id, Message("user", "more"))
        save_snapshot(store, home, session.id)  # saving again replaces it
        again = json.loads(path.read_text(encoding="utf-8"))
        assert len(again["messages"]) == 5
        assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left


def test_save_on_a_full_disk_is_one_line_and_leaves_no_temporary_file(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    """``/save`` in a real chat, with the snapshot folder on a full tmpfs (the store beside
    it is not): one line, the chat goes on, nothing is left in the folder."""
    server.add(Reply(text="First answer."), Reply(text="Second answer."))
    saved = tmp_path / "home" / "sessions" / "saved"
    with small_tmpfs(saved):
        fill(saved)
        child = spawn_chat(chat_env(tmp_path, server), "chat")
        child.logfile_read = transcript = io.StringIO()
        say(child, "first question")
        child.expect("First answer.")
        say(child, "/save")
        child.expect(r"cannot write (\S+): the disk is full; nothing was written")
        assert Path(child.match.group(1)).parent == saved
        say(child, "second question")
        child.expect("Second answer.")
        quit_chat(child)
        assert "Traceback" not in transcript.getvalue()
        assert transcript.getvalue().count("the disk is full") == 1
        assert [p.name for p in saved.iterdir()] == ["filler"]


def test_save_in_a_chat_resumed_on_a_hostile_legacy_id_stays_in_the_saved_folder(
    tmp_path: Path, server: OpenAIStandIn
) -> None:
    """A store made before ids were checked holds a session whose id climbs out of any folder
    (``../../../escaped``: from sessions/saved/ that is ``tmp_path/escaped.json``). Resumed in
    a real chat, ``/save`` writes the snapshot inside sessions/saved/ under a safe name, and
    the snapshot keeps the id exactly."""
    hostile = "../../../escaped"
    home = tmp_path / "home"
    legacy_session_with_id(home, hostile)
    server.add(Reply(text="New answer."))
    child = spawn_chat(chat_env(tmp_path, server), "--resume", hostile)
    child.logfile_read = transcript = io.StringIO()
    say(child, "one more question")
    child.expect("New answer.")
    say(child, "/save")
    child.expect(r"Saved a snapshot to (\S+)")
    say(child, "/exit")
    child.expect(pexpect.EOF)
    saved = home / "sessions" / "saved"
    files = list(saved.iterdir())
    assert len(files) == 1 and files[0].name.endswith(".json")
    assert ".." not in files[0].name and "/" not in files[0].name
    document = json.loads(files[0].read_text(encoding="utf-8"))
    assert document["session"]["id"] == hostile
    assert [m["content"] for m in document["messages"]][-1] == "New answer."
    assert not (tmp_path / "escaped.json").exists()
    assert {p.name for p in tmp_path.iterdir()} <= {"home", "user"}
    assert "Traceback" not in transcript.getvalue()
