"""Session ids an attacker would write into a log or a backup, and a store made before ids were
checked that holds one (built with ``sqlite3`` directly: the store's API refuses such ids)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_hookspecs import Message

from hermes_core.store import SessionStore

HOSTILE_IDS = (
    "../../../../tmp/x",
    "a/../../b",
    "..",
    "nul\x00id",
    '<img src=x onerror="alert(1)">',
    "/etc/passwd",
)
"""Each would leave a folder, or cannot be a file name, if joined to one as it is."""


def legacy_session_with_id(home: Path, session_id: str, *, title: str = "legacy") -> None:
    """Give ``home`` an ended session with two messages whose id is ``session_id``, written
    into the store file as an older Hermes would have let it in."""
    with SessionStore.open(home) as store:
        session = store.create_session("cli", title=title)
        store.append_messages(
            session.id, [Message("user", "old question"), Message("assistant", "old answer")]
        )
        store.end_session(session.id, "user_exit")
        made = session.id
    db = sqlite3.connect(home / "state.db")
    try:
        db.execute("PRAGMA foreign_keys = OFF")
        with db:
            db.execute("UPDATE sessions SET id = ? WHERE id = ?", (session_id, made))
            db.execute(
                "UPDATE messages SET session_id = ? WHERE session_id = ?", (session_id, made)
            )
    finally:
        db.close()
