"""``/save``: a JSON snapshot in $HERMES_HOME/sessions/saved/, written atomically (and on a
full disk, not at all: one line, no temporary file)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from chat_helpers import chat_env, quit_chat, say, spawn_chat
from disks import fill, small_tmpfs
from hermes_hookspecs import Message, ToolCall
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
