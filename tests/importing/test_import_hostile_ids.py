"""A backup whose session ids would leave a folder (``../../x``, ``..``, a NUL, markup) is
restored through the installed ``hermes`` with new ids of the store's grammar, each reported
in a ``note:`` line, and nothing is written outside the home."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_hookspecs import Message
from hostile_ids import HOSTILE_IDS
from installed_hermes import run_hermes_in

from hermes_core.store import SessionStore
from hermes_core.store.ids import looks_like_session_id


def backup_with_ids(tmp_path: Path, ids: tuple[str, ...]) -> Path:
    """A jsonl backup made by ``hermes sessions export``, its sessions' ids replaced."""
    source = tmp_path / "source-home"
    with SessionStore.open(source) as store:
        for number in range(len(ids)):
            session = store.create_session("cli", title=f"restored {number}")
            store.append_message(session.id, Message("user", f"question {number}"))
    backup = tmp_path / "backup.jsonl"
    done = run_hermes_in(source, "sessions", "export", "--format", "jsonl", str(backup))
    assert done.returncode == 0, done.stderr
    lines = backup.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(ids)
    rewritten = []
    for line, hostile in zip(lines, ids, strict=True):
        record = json.loads(line)
        record["session"]["id"] = hostile
        for message in record["messages"]:
            message["session_id"] = hostile
        rewritten.append(json.dumps(record, ensure_ascii=False))
    backup.write_text("\n".join(rewritten) + "\n", encoding="utf-8")
    return backup


def test_a_backup_with_hostile_ids_is_restored_under_new_ids_each_noted(tmp_path: Path) -> None:
    backup = backup_with_ids(tmp_path, HOSTILE_IDS)
    home = tmp_path / "home"
    before = sorted(p.name for p in tmp_path.iterdir())

    done = run_hermes_in(home, "sessions", "import", "--from", "jsonl", str(backup))

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("  note: ")]
    for hostile in HOSTILE_IDS:
        assert any(
            f"session {hostile!r}: that is not a session id" in note and "restored as " in note
            for note in notes
        ), (hostile, done.stdout)
    with SessionStore.open(home) as store:
        sessions = store.list_sessions(limit=100)
        assert len(sessions) == len(HOSTILE_IDS)
        assert all(looks_like_session_id(s.id) for s in sessions)
        assert {s.title for s in sessions} == {f"restored {n}" for n in range(len(HOSTILE_IDS))}
        for session in sessions:
            assert f"restored as {session.id}" in done.stdout
            assert store.messages(session.id)[0].content.startswith("question ")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*before, "home"])
