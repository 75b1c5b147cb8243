"""Restoring a damaged backup (issue 23): every record that can be read is restored, each one
that cannot is named by its line and reason, nothing of it is written, and the command fails;
a backup of an unknown format version is refused whole before anything is written. Run
through the installed ``hermes``, as users run it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installed_hermes import hermes_command, run_hermes_in
from store_helpers_import import backup_of

from hermes_core.store import SessionStore
from hermes_core.store.errors import SessionNotFound


def damaged(backup: Path, line: int, where: str, name: str) -> str:
    """Remove ``name`` from record ``line`` (1-based) of ``backup``: from the record itself,
    its session, or its first message. The id of the session that record held."""
    lines = backup.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[line - 1])
    session_id: str = record["session"]["id"]
    target = {"record": record, "session": record["session"], "message": record["messages"][0]}
    del target[where][name]
    lines[line - 1] = json.dumps(record)
    backup.write_text("".join(text + "\n" for text in lines), encoding="utf-8")
    return session_id


def stored_messages(home: Path, session_id: str) -> list[str] | None:
    with SessionStore.open(home) as store:
        try:
            store.get_session(session_id)
        except SessionNotFound:
            return None
        return [message.content for message in store.messages(session_id)]


@pytest.mark.parametrize(
    ("where", "name", "reason"),
    [
        ("session", "id", "session has no 'id'"),
        ("session", "source", "session has no 'source'"),
        ("session", "started_at", "session has no 'started_at'"),
        ("record", "format", "record has no 'format'"),
        ("record", "version", "record has no 'version'"),
        ("message", "role", "message 1 has no 'role'"),
        ("message", "content", "message 1 has no 'content'"),
    ],
)
def test_a_record_missing_a_field_is_named_and_every_other_one_restored(
    tmp_path: Path, where: str, name: str, reason: str
) -> None:
    backup, sessions = backup_of(tmp_path, hermes_command(), sessions=3, messages=2)
    lost = damaged(backup, 2, where, name)
    target = tmp_path / "target"

    result = run_hermes_in(target, "sessions", "import", "--from", "jsonl", str(backup))

    assert result.returncode == 1, result.stdout + result.stderr
    assert f"hermes: {backup} line 2: {reason}\n" in result.stderr
    assert "Traceback" not in result.stderr
    assert "1 record(s) that could not be read" in result.stdout
    for session_id, title in sessions.items():
        messages = stored_messages(target, session_id)
        if session_id == lost:
            assert messages is None  # nothing half-written
        else:
            assert messages == [f"{title} m0", f"{title} m1"]


def test_a_mended_backup_restores_the_rest_on_the_next_import(tmp_path: Path) -> None:
    backup, sessions = backup_of(tmp_path, hermes_command(), sessions=2, messages=2)
    original = backup.read_text(encoding="utf-8")
    lost = damaged(backup, 1, "session", "started_at")
    target = tmp_path / "target"
    first = run_hermes_in(target, "sessions", "import", "--from", "jsonl", str(backup))
    assert first.returncode == 1
    again = run_hermes_in(target, "sessions", "import", "--from", "jsonl", str(backup))
    assert again.returncode == 1  # not taken for a file already imported
    assert f"hermes: {backup} line 1: session has no 'started_at'\n" in again.stderr

    backup.write_text(original, encoding="utf-8")
    mended = run_hermes_in(target, "sessions", "import", "--from", "jsonl", str(backup))

    assert mended.returncode == 0, mended.stdout + mended.stderr
    assert stored_messages(target, lost) == [f"{sessions[lost]} m0", f"{sessions[lost]} m1"]


def test_a_backup_of_an_unknown_format_version_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    backup, sessions = backup_of(tmp_path, hermes_command(), sessions=2, messages=2)
    lines = backup.read_text(encoding="utf-8").splitlines()
    newer = [json.loads(line) | {"version": 99} for line in lines]
    backup.write_text("".join(json.dumps(record) + "\n" for record in newer), encoding="utf-8")
    target = tmp_path / "target"

    result = run_hermes_in(target, "sessions", "import", "--from", "jsonl", str(backup))

    assert result.returncode == 1
    assert result.stderr == (
        f"hermes: {backup}: cannot import: backup.jsonl is a backup of format version 99; "
        "this Hermes reads version 1 only (upgrade hermes-export-jsonl); nothing was restored\n"
    )
    assert all(stored_messages(target, session_id) is None for session_id in sessions)


def test_a_backup_with_no_readable_record_fails_and_says_so(tmp_path: Path) -> None:
    backup = tmp_path / "backup.jsonl"
    backup.write_text('{"format": "hermes-session", "version": 1, "session": {}}\n{oops\n')

    result = run_hermes_in(
        tmp_path / "target", "sessions", "import", "--from", "jsonl", str(backup)
    )

    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"hermes: {backup}: no record in it could be read",
        f"hermes: {backup} line 1: session has no 'id'",
        f"hermes: {backup} line 2: not valid JSON (Expecting property name enclosed in double "
        "quotes at character 2)",
    ]
