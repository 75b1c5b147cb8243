"""A jsonl backup made the way users make one: sessions in a scratch store, exported with the
installed ``hermes sessions export``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hermes_hookspecs import Message

from hermes_core.store import SessionStore


def backup_of(
    folder: Path, hermes: str, *, sessions: int, messages: int
) -> tuple[Path, dict[str, str]]:
    """The backup's path and its sessions (id → title) in the order the backup holds them."""
    scratch = folder / "backup-source"
    made: dict[str, str] = {}
    with SessionStore.open(scratch) as store:
        for number in range(sessions):
            title = f"backed up {number}"
            session = store.create_session("cli", title=title, started_at=1_700_000_000 + number)
            store.append_messages(
                session.id,
                [
                    Message(role="user" if i % 2 == 0 else "assistant", content=f"{title} m{i}")
                    for i in range(messages)
                ],
            )
            store.end_session(session.id, "user_exit")
            made[session.id] = title
    backup = folder / "backup.jsonl"
    subprocess.run(
        [hermes, "--home", str(scratch), "sessions", "export", str(backup)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    order = [json.loads(line)["session"]["id"] for line in backup.read_text().splitlines()]
    return backup, {session_id: made[session_id] for session_id in order}
