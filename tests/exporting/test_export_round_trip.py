"""A jsonl backup restores losslessly into another home (SPEC X2; issue 3 §4), through the real
import engine: same ids, titles, timestamps, messages, lineage and pins; importing the same
backup twice adds nothing; a title another session already uses gets a visible suffix."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from export_helpers import host, invoke, make
from hermes_hookspecs import Message, ToolCall

from hermes_core.store import SessionStore


@pytest.fixture
def source_home(tmp_path: Path) -> Path:
    """A home with every kind of session: titled, pinned, archived, active, a compression
    lineage, delegates, tool calls, metadata, a system prompt, CJK text."""
    home = tmp_path / "source"
    with SessionStore.open(home) as store:
        pinned = make(store, title="pinned one", tool=True, model="gpt-5", cwd="/work/a")
        store.set_pinned([pinned], True)
        archived = make(store, title="archived one", source="telegram", chat_id="42")
        store.set_archived([archived], True)
        make(store, title="数据库迁移计划", text="把用户表拆成两张表")
        make(
            store,
            title="rich",
            system_prompt="You are Hermes.",
            model_config={"temperature": 0.3},
            metadata={"origin": {"tool": "test"}},
            billing_provider="openai",
            input_tokens=120,
            output_tokens=45,
            cost_estimated_usd=0.25,
            git_branch="main",
            git_repo_root="/work/a",
        )
        root = make(store, title="saga", ended=False)
        second = store.continue_after_compression(root)
        store.append_messages(
            second.id,
            [
                Message("user", "carry on", timestamp=2e9, platform_message_id="p1"),
                Message(
                    "assistant",
                    "",
                    timestamp=2e9 + 1,
                    reasoning="think",
                    tool_calls=(ToolCall("search", '{"q": "x"}', "c9"),),
                    token_count=7,
                ),
            ],
        )
        make(store, parent_session_id=second.id, parent_kind="delegate", title="helper")
        make(store, ended=False, title="still running")
    return home


def snapshot_of(home: Path) -> dict[str, tuple[object, list[Message]]]:
    with SessionStore.open(home) as store:
        ids = [row[0] for row in store.connection.execute("SELECT id FROM sessions")]
        return {
            session_id: (
                store.get_session(session_id),
                [dataclasses.replace(m, id=None) for m in store.messages(session_id)],
            )
            for session_id in ids
        }


def test_a_jsonl_backup_restores_every_session_exactly(source_home, tmp_path):
    backup = tmp_path / "backup.jsonl"
    exported = invoke(host(), source_home, "sessions", "export", str(backup))
    assert exported.exit_code == 0, exported.output
    target = tmp_path / "target"
    restored = invoke(host(), target, "sessions", "import", "--from", "jsonl", str(backup))
    assert restored.exit_code == 0, restored.output
    before, after = snapshot_of(source_home), snapshot_of(target)
    assert set(after) == set(before)
    for session_id, (session, messages) in before.items():
        assert after[session_id][0] == session, session_id
        assert after[session_id][1] == messages, session_id


def test_importing_the_same_backup_twice_adds_nothing(source_home, tmp_path):
    backup = tmp_path / "backup.jsonl"
    invoke(host(), source_home, "sessions", "export", str(backup))
    target = tmp_path / "target"
    invoke(host(), target, "sessions", "import", "--from", "jsonl", str(backup))
    first = snapshot_of(target)
    again = invoke(host(), target, "sessions", "import", "--from", "jsonl", str(backup))
    assert again.exit_code == 0, again.output
    assert snapshot_of(target) == first


def test_a_second_backup_holding_known_sessions_skips_them_and_reports_it(source_home, tmp_path):
    target = tmp_path / "target"
    whole = tmp_path / "whole.jsonl"
    invoke(host(), source_home, "sessions", "export", str(whole))
    invoke(host(), target, "sessions", "import", "--from", "jsonl", str(whole))
    with SessionStore.open(source_home) as store:
        newer = make(store, title="made after the first backup")
    later = tmp_path / "later.jsonl"
    invoke(host(), source_home, "sessions", "export", str(later))
    result = invoke(host(), target, "sessions", "import", "--from", "jsonl", str(later))
    assert result.exit_code == 0, result.output
    assert "already in this store" in result.output
    assert set(snapshot_of(target)) == set(snapshot_of(source_home))
    assert newer in snapshot_of(target)


def test_a_title_already_used_in_the_target_gets_a_visible_suffix(source_home, tmp_path):
    target = tmp_path / "target"
    with SessionStore.open(target) as store:
        mine = make(store, title="pinned one")
    backup = tmp_path / "backup.jsonl"
    invoke(host(), source_home, "sessions", "export", str(backup))
    result = invoke(host(), target, "sessions", "import", "--from", "jsonl", str(backup))
    assert result.exit_code == 0, result.output
    assert "is used by another session" in result.output
    titles = {s.id: s.title for s, _ in snapshot_of(target).values()}
    assert titles[mine] == "pinned one"
    restored = [t for i, t in titles.items() if i != mine and t and t.startswith("pinned one")]
    assert len(restored) == 1 and restored[0] != "pinned one"


def test_a_backup_of_many_sessions_is_reported_as_such_every_time(tmp_path):
    """A 55-session backup read again says it holds 55 sessions, all here — never "already
    imported as" one of them — whether the file is unchanged, rewritten, or restored into the
    store it was taken from; one session deleted since comes back with one line for the rest."""
    home = tmp_path / "source"
    with SessionStore.open(home) as store:
        ids = [make(store, title=f"session {n}") for n in range(55)]
    backup = tmp_path / "backup.jsonl"
    invoke(host(), home, "sessions", "export", str(backup))

    into_itself = invoke(host(), home, "sessions", "import", "--from", "jsonl", str(backup))
    assert into_itself.exit_code == 0, into_itself.output
    assert "all 55 sessions of this backup are in this store" in into_itself.output
    assert "already imported as" not in into_itself.output
    unchanged = invoke(host(), home, "sessions", "import", "--from", "jsonl", str(backup))
    assert "all 55 sessions of this backup are in this store" in unchanged.output
    assert ": no conversation" not in unchanged.output

    target = tmp_path / "target"
    restored = invoke(host(), target, "sessions", "import", "--from", "jsonl", str(backup))
    assert "Sessions written: 55" in restored.output
    again = invoke(host(), target, "sessions", "import", "--from", "jsonl", str(backup))
    assert "all 55 sessions of this backup are in this store" in again.output
    assert "already imported as" not in again.output

    with SessionStore.open(target) as store:
        store.delete_session(ids[7])
    with backup.open("a", encoding="utf-8") as grown:
        grown.write("\n")
    partly = invoke(host(), target, "sessions", "import", "--from", "jsonl", str(backup))
    assert partly.exit_code == 0, partly.output
    assert ids[7] in partly.output
    assert "54 session(s) of this backup already in this store; skipped" in partly.output
    assert partly.output.count("is already in this store") == 0
    with SessionStore.open(target) as store:
        assert store.get_session(ids[7]) is not None
