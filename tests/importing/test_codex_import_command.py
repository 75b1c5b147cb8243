"""``hermes sessions import`` with the codex importer, end to end: the installed ``hermes`` in a
subprocess, the real entry point, a real store (read back with ``SessionStore``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from codex_helpers import (
    ENVELOPE_SAMPLE,
    LEGACY_SAMPLE,
    agent_event,
    fingerprint,
    line,
    meta,
    tokens,
    user_event,
)
from installed_hermes import hermes_command

from hermes_core.store import SessionStore

IMPORTED = re.compile(r"Imported Codex CLI session as (?P<id>\S+): (?P<title>.*)")


def run_hermes(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [hermes_command()]
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "CODEX_", "CLAUDE_"))
    }
    (tmp_path / "claude").mkdir(exist_ok=True)
    env.update(
        HOME=str(tmp_path / "home"),
        HERMES_HOME=str(tmp_path / "hermes-home"),
        CODEX_HOME=str(tmp_path / "codex"),
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
        COLUMNS="200",
    )
    return subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def imported_ids(output: str) -> list[str]:
    return [match["id"] for match in IMPORTED.finditer(output)]


def codex_home(tmp_path: Path) -> Path:
    """``$CODEX_HOME/sessions`` with a date-sharded rollout and a flat legacy one."""
    sessions = tmp_path / "codex" / "sessions"
    sharded = sessions / "2026" / "03" / "14"
    sharded.mkdir(parents=True)
    shutil.copy(ENVELOPE_SAMPLE, sharded / ENVELOPE_SAMPLE.name)
    shutil.copy(LEGACY_SAMPLE, sessions / LEGACY_SAMPLE.name)
    return sessions


def test_importing_a_rollout_stores_an_ended_session_and_prints_how_to_resume(
    tmp_path: Path,
) -> None:
    log = codex_home(tmp_path) / "2026" / "03" / "14" / ENVELOPE_SAMPLE.name
    before = fingerprint(log)
    result = run_hermes(tmp_path, "sessions", "import", "--from", "codex", str(log))
    assert result.returncode == 0, result.stderr
    [session_id] = imported_ids(result.stdout)
    assert f"hermes --resume {session_id}" in result.stdout
    assert fingerprint(log) == before, "the rollout changed"

    with SessionStore.open(tmp_path / "hermes-home") as store:
        session = store.get_session(session_id)
        messages = store.messages(session_id)
    assert session.source == "codex-cli"
    assert session.title == (
        "Imported from Codex CLI: The tide table for 29 February is wrong; leap years are not…"
    )
    assert session.end_reason == "imported" and session.ended_at is not None
    assert (session.cwd, session.git_branch, session.model) == (
        "/home/ana/src/tide-tables",
        "fix/leap-years",
        "gpt-5.2-codex",
    )
    # Codex's input (25,000) includes its cached input (20,000), stored as cache reads.
    assert (session.input_tokens, session.output_tokens) == (5000, 900)
    assert (session.cache_read_tokens, session.cache_write_tokens) == (20000, 0)
    provenance = session.metadata["imported_from"]
    assert provenance["tool"] == "codex"
    assert provenance["foreign_id"] == "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[1].content.startswith("I'll look at how predict.py computes day numbers.")
    assert "[ran tool: apply_patch]" in messages[1].content


def test_the_tool_is_inferred_and_an_unchanged_rollout_is_not_imported_twice(
    tmp_path: Path,
) -> None:
    log = codex_home(tmp_path) / LEGACY_SAMPLE.name
    first = run_hermes(tmp_path, "sessions", "import", str(log))
    assert first.returncode == 0, first.stderr
    [session_id] = imported_ids(first.stdout)
    again = run_hermes(tmp_path, "sessions", "import", str(log))
    assert again.returncode == 0, again.stderr
    assert imported_ids(again.stdout) == []
    assert f"already imported as {session_id}" in again.stdout
    with SessionStore.open(tmp_path / "hermes-home") as store:
        assert [s.id for s in store.list_sessions()] == [session_id]


def test_a_rollout_that_grew_appends_its_new_turns_to_the_same_session(tmp_path: Path) -> None:
    log = codex_home(tmp_path) / "2026" / "03" / "14" / ENVELOPE_SAMPLE.name
    first = run_hermes(tmp_path, "sessions", "import", "--from", "codex", str(log))
    [session_id] = imported_ids(first.stdout)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(
            user_event("And push it, please.", 200)
            + agent_event("Pushed to origin/fix/leap-years.", 201)
            + tokens(26000, 950, 202, cached=20500)
        )
    grown = run_hermes(tmp_path, "sessions", "import", "--from", "codex", str(log))
    assert grown.returncode == 0, grown.stderr
    assert f"Appended 2 new message(s) to {session_id}" in grown.stdout
    with SessionStore.open(tmp_path / "hermes-home") as store:
        session = store.get_session(session_id)
        messages = store.messages(session_id)
    assert [m.content for m in messages[-2:]] == [
        "And push it, please.",
        "Pushed to origin/fix/leap-years.",
    ]
    # Codex's input includes its cached input; stored apart: 26,000 - 20,500 and 20,500.
    assert (session.input_tokens, session.output_tokens) == (5500, 950)
    assert (session.cache_read_tokens, session.cache_write_tokens) == (20500, 0)
    assert session.title is not None and session.title.startswith("Imported from Codex CLI: The")


def test_import_all_finds_both_layouts_under_codex_home_once(tmp_path: Path) -> None:
    sessions = codex_home(tmp_path)
    files = sorted(p for p in sessions.rglob("*.jsonl"))
    before = [fingerprint(p) for p in files]
    first = run_hermes(tmp_path, "sessions", "import", "--from", "codex", "--all")
    assert first.returncode == 0, first.stderr
    assert len(imported_ids(first.stdout)) == 2
    again = run_hermes(tmp_path, "sessions", "import", "--all")
    assert again.returncode == 0, again.stderr
    assert imported_ids(again.stdout) == []
    assert [fingerprint(p) for p in files] == before
    with SessionStore.open(tmp_path / "hermes-home") as store:
        stored = store.list_sessions()
    assert sorted(s.title or "" for s in stored) == [
        "Imported from Codex CLI: The tide table for 29 February is wrong; leap years are not…",
        "Imported from Codex CLI: Why does `weather --units metric` still print Fahrenheit?",
    ]
    assert {s.source for s in stored} == {"codex-cli"}


def test_a_rollout_without_conversation_is_reported_and_stores_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "rollout-2026-01-01T00-00-00-0195b000-0000-7000-8000-000000000001.jsonl"
    empty.write_bytes(b"")
    result = run_hermes(tmp_path, "sessions", "import", "--from", "codex", str(empty))
    assert result.returncode == 0, result.stderr
    assert "no conversation" in result.stdout
    with SessionStore.open(tmp_path / "hermes-home") as store:
        assert store.list_sessions() == []


def test_a_subagent_rollout_becomes_a_delegate_of_its_parents_session(tmp_path: Path) -> None:
    parent_id = "0195b000-aaaa-7aaa-8aaa-aaaaaaaaaaaa"
    child_id = "0195b000-bbbb-7bbb-8bbb-bbbbbbbbbbbb"
    day = tmp_path / "codex" / "sessions" / "2026" / "04" / "01"
    day.mkdir(parents=True)
    parent = day / f"rollout-2026-04-01T10-00-00-{parent_id}.jsonl"
    child = day / f"rollout-2026-04-01T10-05-00-{child_id}.jsonl"
    parent.write_text(
        meta(parent_id, cwd="/work/demo") + user_event("review my branch", 1) + agent_event("ok", 9)
    )
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1}}}
    child.write_text(
        line("session_meta", {"id": child_id, "cwd": "/work/demo", "source": spawn}, 2)
        + user_event("look for missing tests", 3)
        + agent_event("two functions lack tests", 4)
    )
    os.utime(child, (1_700_000_000, 1_700_000_000))  # the parent was active last
    result = run_hermes(tmp_path, "sessions", "import", "--from", "codex", "--all")
    assert result.returncode == 0, result.stderr
    with SessionStore.open(tmp_path / "hermes-home") as store:
        stored = {s.metadata["imported_from"]["foreign_id"]: s for s in store.list_sessions()}
    assert stored[child_id].parent_session_id == stored[parent_id].id
    assert stored[child_id].parent_kind == "delegate"
    assert stored[parent_id].parent_session_id is None
