"""One broken character never rejects a log (issue 23): a lone UTF-16 surrogate escaped in
JSON (high, low, a reversed pair) is replaced by U+FFFD, the line and the file are kept, and
the import says how many text fields it repaired. One sample of each importer's format,
under ``tests/data/hostile/``, imported with the installed ``hermes``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from installed_hermes import run_hermes_in

from hermes_core.store import SessionStore

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "hostile"
REPAIRED = [
    "high half \ufffd of a pair",
    "low half \ufffd alone",
    "reversed \ufffd\ufffd pair",
    "a whole emoji \U0001f600 stays",  # a real pair is not broken: kept as the emoji
]


def hermes_agent_store(folder: Path) -> Path:
    path = folder / "state.db"
    with sqlite3.connect(path) as connection:
        sql = (SAMPLES / "hermes-agent-lone-surrogates.sql").read_text(encoding="utf-8")
        connection.executescript(sql)
    connection.close()
    return path


@pytest.mark.parametrize(
    ("importer", "sample", "repaired"),
    [
        ("claude", "claude-lone-surrogates.jsonl", 3),
        # The title is taken from the first prompt: one field more.
        ("codex", "rollout-2026-03-14T08-30-00-0195d800-0000-7000-8000-00000000d800.jsonl", 4),
        ("hermes-agent", None, 4),  # three messages and one tool call's arguments
        ("jsonl", "backup-lone-surrogates.jsonl", 6),  # three messages, title, cwd, metadata
    ],
)
def test_a_lone_surrogate_is_repaired_and_every_turn_kept(
    tmp_path: Path, importer: str, sample: str | None, repaired: int
) -> None:
    path = SAMPLES / sample if sample else hermes_agent_store(tmp_path)
    home = tmp_path / "home"

    result = run_hermes_in(home, "sessions", "import", "--from", importer, str(path))

    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 imported" in result.stdout and "0 malformed line(s)" in result.stdout
    assert (
        f"Repaired input: {repaired} text field(s) with broken characters (lone UTF-16 "
        "surrogates), each replaced by U+FFFD and kept.\n"
    ) in result.stdout
    with SessionStore.open(home) as store:
        [session_id] = [row[0] for row in store.connection.execute("SELECT id FROM sessions")]
        texts = [message.content for message in store.messages(session_id)]
    for text in REPAIRED:
        assert any(text in content for content in texts), (text, texts)
    assert texts[-1].endswith("last answer")  # nothing after the broken lines was lost
    assert len(texts) >= 6


def test_a_restored_backup_keeps_its_repaired_title_and_fields(tmp_path: Path) -> None:
    home = tmp_path / "home"
    backup = SAMPLES / "backup-lone-surrogates.jsonl"
    assert run_hermes_in(home, "sessions", "import", "--from", "jsonl", str(backup)).returncode == 0
    with SessionStore.open(home) as store:
        session = store.get_session("20260302_090000_d80001")
    assert session.title == "surrogates \ufffd in a title"
    assert session.cwd == "/home/ana/\ufffd"
    assert session.metadata["note"] == "meta \ufffd"
