"""``/save``: a JSON snapshot in $HERMES_HOME/sessions/saved/, written atomically."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_hookspecs import Message, ToolCall

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
