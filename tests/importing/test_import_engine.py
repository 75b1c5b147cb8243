"""The import engine (``hermes_core.importing``) over a real store: what an imported session
holds, delegates, titles, idempotent re-imports, interrupted imports, and backup restores."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from claude_helpers import (
    IMPORTER,
    S10,
    S21,
    SESSION,
    SUMMARY_ONLY,
    copy_tree,
    fingerprint,
    lines,
    prompt,
    reply,
    text,
    write,
)
from hermes_hookspecs import ImportCandidate, ImportedSession, Message, Session

from hermes_core.importing import FileStatus, ImportRun
from hermes_core.store import STATE_DB_NAME, SessionStore
from hermes_core.store.imports import load_import_files
from hermes_core.store.schema import SCHEMA_VERSION, migrate


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.open(tmp_path / "home") as opened:
        yield opened


def sample(tmp_path: Path, source: Path) -> Path:
    """A private copy of a sample (with its subagent folder)."""
    target = tmp_path / "logs" / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
    nested = source.with_suffix("")
    if nested.is_dir():
        shutil.copytree(nested, target.with_suffix(""))
    return target


class Refusing:
    """An importer that fails the test if asked to read anything."""

    name = "claude"
    label = "Claude Code"

    def discover(self, env: Mapping[str, str]) -> Iterator[ImportCandidate]:
        return iter(())

    def sniff(self, path: Path) -> bool:
        raise AssertionError("sniffed")

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        raise AssertionError(f"{path} was opened")


def test_an_imported_session_is_ended_titled_and_keeps_its_provenance(
    store: SessionStore, tmp_path: Path
) -> None:
    path = sample(tmp_path, S21)
    outcome = ImportRun(store, clock=lambda: 1_800_000_000.0).import_file(path, IMPORTER)
    assert outcome.status is FileStatus.IMPORTED
    main, child = outcome.sessions
    session = store.get_session(main.session_id)
    assert outcome.session_id == session.id
    assert session.source == "claude-code"
    assert (
        session.title
        == main.title
        == ("Imported from Claude Code: Why does the lexer choke on tabs? It fails on line 3.")
    )
    assert session.title_source == "import"
    assert session.end_reason == "imported"
    assert session.started_at == pytest.approx(1772359200.0, abs=0.01)  # 2026-03-01T10:00:00Z
    assert session.ended_at == pytest.approx(1772359380.1, abs=0.01)
    assert (session.cwd, session.git_branch, session.model) == (
        "/home/ana/src/parser", "fix/tabs", "claude-opus-4-7",
    )  # fmt: skip
    assert (session.input_tokens, session.output_tokens) == (100, 190)
    assert (session.cache_read_tokens, session.cache_write_tokens) == (10000, 200)
    assert session.message_count == 4
    assert session.metadata["imported_from"] == {
        "tool": "claude",
        "path": str(path.absolute()),
        "foreign_id": "11111111-aaaa-4bbb-8ccc-000000000001",
        "imported_at": 1_800_000_000.0,
    }
    messages = store.messages(session.id)
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[0].timestamp == pytest.approx(1772359205.0, abs=0.01)  # the record's own time
    assert session.id.startswith("20260301_")  # drawn from the start, not the import time
    delegate = store.get_session(child.session_id)
    assert child.delegate
    assert (delegate.parent_session_id, delegate.parent_kind) == (session.id, "delegate")
    assert delegate.title == "Claude Code subagent: Find tab handling"
    assert delegate.end_reason == "imported"
    assert delegate.metadata["imported_from"]["foreign_id"] == "a0f1e2d3c4b5a6978"
    assert outcome.warnings == {"unknown record type": 1}


def test_a_taken_title_gets_a_short_visible_suffix_never_a_lineage_number(
    store: SessionStore, tmp_path: Path
) -> None:
    data = lines(prompt("u1", 1, "Same question"), reply("a1", 2, text("Same."), message_id="m"))
    run = ImportRun(store)
    first = run.import_file(write(tmp_path / "a" / f"{SESSION}.jsonl", data), IMPORTER)
    second = run.import_file(write(tmp_path / "b" / "another-session.jsonl", data), IMPORTER)
    assert first.sessions[0].title == "Imported from Claude Code: Same question"
    assert second.sessions[0].title == "Imported from Claude Code: Same question (2)"
    assert "#" not in (second.sessions[0].title or "")


def test_the_same_conversation_reached_by_another_path_is_not_stored_twice(
    store: SessionStore, tmp_path: Path
) -> None:
    original = sample(tmp_path / "one", S21)
    first = ImportRun(store).import_file(original, IMPORTER)
    copy = sample(tmp_path / "two", S21)  # a backup of ~/.claude, a moved config folder…
    outcome = ImportRun(store).import_file(copy, IMPORTER)
    assert outcome.status is FileStatus.UNCHANGED
    assert outcome.detail == (
        f"already imported as {first.session_id} (from {original.absolute()})"
    )
    assert store.connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2
    again = ImportRun(store).import_file(copy, Refusing())
    assert again.detail == f"already imported as {first.session_id}"


def test_inline_subagents_become_delegates(store: SessionStore, tmp_path: Path) -> None:
    outcome = ImportRun(store).import_file(sample(tmp_path, S10), IMPORTER)
    main, *delegates = outcome.sessions
    assert len(delegates) == 2
    for stored in delegates:
        child = store.get_session(stored.session_id)
        assert (child.parent_session_id, child.parent_kind) == (main.session_id, "delegate")
    # Deleting the imported session takes its delegates along.
    assert set(store.delete_session(main.session_id)) == {
        main.session_id,
        *(d.session_id for d in delegates),
    }


def test_an_unchanged_file_is_not_opened_again(store: SessionStore, tmp_path: Path) -> None:
    path = sample(tmp_path, S21)
    first = ImportRun(store).import_file(path, IMPORTER)
    again = ImportRun(store)  # a later run: bookkeeping loaded from the store
    assert again.quick_check(path) is not None
    outcome = again.import_file(path, Refusing())
    assert outcome.status is FileStatus.UNCHANGED
    assert outcome.detail == f"already imported as {first.session_id}"
    assert store.count_sessions() == 2  # the session and its delegate, once
    # A touch (new time, same size) is no new content: still not opened, and remembered.
    path.touch()
    assert again.import_file(path, Refusing()).status is FileStatus.UNCHANGED
    assert ImportRun(store).quick_check(path) is not None


def test_a_grown_file_appends_only_the_new_turns_to_the_same_session(
    store: SessionStore, tmp_path: Path
) -> None:
    path = sample(tmp_path, S21)
    first = ImportRun(store).import_file(path, IMPORTER)
    before = store.get_session(first.session_id or "")
    children_before = store.connection.execute(
        "SELECT count(*) FROM sessions WHERE parent_session_id = ?", (before.id,)
    ).fetchone()[0]
    with open(path, "ab") as handle:
        handle.write(
            lines(
                prompt("u9", 30, "One more thing: spaces?"),
                reply(
                    "a9",
                    31,
                    text("Spaces are fine."),
                    message_id="m9",
                    usage={"input_tokens": 7, "output_tokens": 3},
                ),
            )
        )
    outcome = ImportRun(store).import_file(path, IMPORTER)
    assert outcome.status is FileStatus.APPENDED
    assert outcome.session_id == before.id
    assert outcome.sessions[0].messages == 2
    after = store.get_session(before.id)
    assert after.message_count == before.message_count + 2
    assert [m.content for m in store.messages(before.id)][-2:] == [
        "One more thing: spaces?",
        "Spaces are fine.",
    ]
    assert after.ended_at == pytest.approx(1777636831.0, abs=0.01)  # 2026-05-01T12:00:31Z
    assert (after.input_tokens, after.output_tokens) == (
        before.input_tokens + 7,
        before.output_tokens + 3,
    )
    assert after.title == before.title
    assert after.metadata["imported_from"]["appended_at"] > 0
    children_after = store.connection.execute(
        "SELECT count(*) FROM sessions WHERE parent_session_id = ?", (before.id,)
    ).fetchone()[0]
    assert children_after == children_before  # the subagent is not imported twice
    assert ImportRun(store).import_file(path, Refusing()).status is FileStatus.UNCHANGED


def test_a_shrunk_file_is_left_alone_and_reported(store: SessionStore, tmp_path: Path) -> None:
    path = sample(tmp_path, S21)
    first = ImportRun(store).import_file(path, IMPORTER)
    path.write_bytes(path.read_bytes()[:200])
    outcome = ImportRun(store).import_file(path, Refusing())
    assert outcome.status is FileStatus.CHANGED
    assert f"changed since it was imported as {first.session_id}" in outcome.detail
    assert store.get_session(first.session_id or "").message_count == 4


def test_a_deleted_import_is_not_brought_back(store: SessionStore, tmp_path: Path) -> None:
    path = sample(tmp_path, S21)
    first = ImportRun(store).import_file(path, IMPORTER)
    store.delete_session(first.session_id or "")
    outcome = ImportRun(store).import_file(path, Refusing())
    assert outcome.status is FileStatus.UNCHANGED
    assert outcome.detail == "imported before; its session has since been deleted"
    assert store.count_sessions() == 0


def test_no_conversation_files_store_nothing_and_are_remembered(
    store: SessionStore, tmp_path: Path
) -> None:
    path = sample(tmp_path, SUMMARY_ONLY)
    assert (
        ImportRun(store).import_file(path, IMPORTER).status is FileStatus.NO_CONVERSATION
    )
    assert store.count_sessions() == 0
    again = ImportRun(store).import_file(path, Refusing())
    assert again.status is FileStatus.NO_CONVERSATION
    # Once it holds a conversation, it is read (whole) again.
    with open(path, "ab") as handle:
        handle.write(
            lines(prompt("u1", 1, "Now a real chat"), reply("a1", 2, text("Hi."), message_id="m"))
        )
    assert ImportRun(store).import_file(path, IMPORTER).status is FileStatus.IMPORTED


class Breaking:
    """The Claude importer, except that reading dies after the first message (a crash)."""

    name = "claude"
    label = "Claude Code"

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        for session in IMPORTER.read(path, resume_from):
            original = session.messages

            def dying(source: Iterator[Message] = original) -> Iterator[Message]:
                yield next(source)
                raise KeyboardInterrupt

            session.messages = dying()
            yield session


def test_an_interrupted_import_is_discarded_and_done_again(
    store: SessionStore, tmp_path: Path
) -> None:
    path = sample(tmp_path, S21)
    with pytest.raises(KeyboardInterrupt):
        ImportRun(store).import_file(path, Breaking())  # type: ignore[arg-type]
    [record] = load_import_files(store.connection).values()
    assert record.state == "importing"
    partial = record.session_id
    assert partial is not None and store.get_session(partial).title is None  # unfinished
    outcome = ImportRun(store).import_file(path, IMPORTER)
    assert outcome.status is FileStatus.IMPORTED
    ids = [row[0] for row in store.connection.execute("SELECT id FROM sessions")]
    assert partial not in ids and len(ids) == 2  # the session and its delegate, once
    assert store.get_session(outcome.session_id or "").message_count == 4


def test_a_subagent_file_given_on_its_own_after_its_session_is_already_imported(
    store: SessionStore, tmp_path: Path
) -> None:
    path = sample(tmp_path, S21)
    first = ImportRun(store).import_file(path, IMPORTER)
    agent = path.with_suffix("") / "subagents" / "agent-a0f1e2d3c4b5a6978.jsonl"
    outcome = ImportRun(store).import_file(agent, IMPORTER)
    assert outcome.status is FileStatus.UNCHANGED
    assert outcome.detail == f"already imported as {first.sessions[1].session_id}"


def test_importing_leaves_the_foreign_files_untouched(store: SessionStore, tmp_path: Path) -> None:
    config = copy_tree(tmp_path)
    before = fingerprint(config)
    run = ImportRun(store)
    for candidate in IMPORTER.discover({"CLAUDE_CONFIG_DIR": str(config)}):
        run.import_file(candidate.path, IMPORTER)
    assert fingerprint(config) == before


def test_a_v2_store_gains_the_bookkeeping_table(tmp_path: Path) -> None:
    path = tmp_path / STATE_DB_NAME
    connection = sqlite3.connect(path, isolation_level=None)
    migrate(connection, target=2)
    connection.execute(
        "INSERT INTO sessions (id, source, started_at, last_active_at) "
        "VALUES ('20250101_000000_abcdef', 'cli', 1, 1)"
    )
    connection.close()
    with SessionStore(path) as store:
        assert store.connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 3
        assert load_import_files(store.connection) == {}
        assert store.get_session("20250101_000000_abcdef").source == "cli"


# ---------------------------------------------------------------------- snapshot mode


class Backup:
    """A tiny backup importer: yields the given snapshots with their messages."""

    name = "backup"
    label = "Backup"

    def __init__(self, *sessions: tuple[Session, list[Message]]) -> None:
        self.sessions = sessions

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        for session, messages in self.sessions:
            yield ImportedSession(
                foreign_id=session.id,
                source=session.source,
                messages=iter(
                    [Message(m.role, m.content, timestamp=m.timestamp) for m in messages]
                ),
                snapshot=session,
            )


def snapshot(session_id: str, **fields: object) -> Session:
    values: dict[str, object] = {
        "source": "telegram", "started_at": 1_700_000_000.0, "ended_at": 1_700_000_500.0,
        "end_reason": "user_exit", "last_active_at": 1_700_000_400.0, "title": "Trip plans",
        "title_source": "user", "model": "gpt-5", "input_tokens": 120, "output_tokens": 45,
        "pinned": True, "archived": True, "cwd": "/srv", "metadata": {"chat": "family"},
    }  # fmt: skip
    values.update(fields)
    return Session(id=session_id, **values)  # type: ignore[arg-type]


CHAT = [
    Message("user", "Where do we go?", timestamp=1_700_000_010.0),
    Message("assistant", "Lisbon.", timestamp=1_700_000_020.0),
]


def test_a_snapshot_is_restored_exactly(store: SessionStore, tmp_path: Path) -> None:
    backup = write(tmp_path / "backup.jsonl", b"{}\n")
    parent = snapshot("20231114_221320_aaaaaa", title="Trip plans", pinned=False, archived=False)
    child = snapshot(
        "20231114_221320_bbbbbb", title="Trip plans #2", parent_session_id=parent.id,
        parent_kind="compression", title_source="lineage",
    )  # fmt: skip
    outcome = ImportRun(store).import_file(
        backup,
        Backup((parent, CHAT), (child, CHAT)),  # type: ignore[arg-type]
    )
    assert outcome.status is FileStatus.IMPORTED
    assert [s.session_id for s in outcome.sessions] == [parent.id, child.id]
    restored = store.get_session(child.id)
    for name in ("source", "started_at", "ended_at", "end_reason", "last_active_at", "title",
                 "title_source", "model", "input_tokens", "output_tokens", "pinned", "archived",
                 "cwd", "metadata", "parent_session_id", "parent_kind"):  # fmt: skip
        assert getattr(restored, name) == getattr(child, name), name
    assert restored.message_count == 2
    assert [m.timestamp for m in store.messages(child.id)] == [1_700_000_010.0, 1_700_000_020.0]


def test_snapshot_clashes_are_reported_never_fatal(store: SessionStore, tmp_path: Path) -> None:
    taken = store.create_session("cli", title="Trip plans")
    existing = snapshot("20231114_221320_cccccc", title="Old")
    first = ImportRun(store).import_file(
        write(tmp_path / "one.jsonl", b"{}\n"),
        Backup((existing, CHAT)),  # type: ignore[arg-type]
    )
    assert first.status is FileStatus.IMPORTED
    orphan = snapshot("20231114_221320_dddddd", parent_session_id="20231114_000000_ffffff",
                      parent_kind="branch")  # fmt: skip
    outcome = ImportRun(store).import_file(
        write(tmp_path / "two.jsonl", b"{}\n{}\n"),
        Backup((existing, CHAT), (orphan, CHAT)),  # type: ignore[arg-type]
    )
    assert outcome.status is FileStatus.IMPORTED
    assert [s.session_id for s in outcome.sessions] == [orphan.id]
    restored = store.get_session(orphan.id)
    assert restored.title == "Trip plans (2)"  # "Trip plans" belongs to another session
    assert taken.id != orphan.id and store.get_session(taken.id).title == "Trip plans"
    assert restored.parent_session_id is None
    assert outcome.notes == [
        f"session {existing.id} is already in this store; skipped",
        f"session {orphan.id}: its parent 20231114_000000_ffffff is not in this store; "
        "restored without that link",
        f"session {orphan.id}: the title 'Trip plans' is used by another session; "
        "restored as 'Trip plans (2)'",
    ]
    # Everything already there: nothing written, said so.
    again = ImportRun(store).import_file(
        write(tmp_path / "three.jsonl", b"{}\n"),
        Backup((existing, CHAT)),  # type: ignore[arg-type]
    )
    assert again.status is FileStatus.UNCHANGED
    assert again.detail == "already imported: its one session is in this store"


class FailingAfter:
    """The Claude importer, except that reading raises ``ValueError`` (an importer's bug)
    after ``count`` messages of the file's own session."""

    name = "claude"
    label = "Claude Code"

    def __init__(self, count: int) -> None:
        self.count = count

    def read(self, path: Path, resume_from: str | None = None) -> Iterator[ImportedSession]:
        for session in IMPORTER.read(path, resume_from):
            original = session.messages

            def failing(source: Iterator[Message] = original) -> Iterator[Message]:
                for number, message in enumerate(source, start=1):
                    yield message
                    if number == self.count:
                        raise ValueError("the importer tripped")

            session.messages = failing()
            yield session


def test_an_importer_failing_is_one_outcome_and_the_next_import_redoes_the_file(
    store: SessionStore, tmp_path: Path
) -> None:
    path = sample(tmp_path, S21)
    outcome = ImportRun(store).import_file(path, FailingAfter(1))  # type: ignore[arg-type]
    assert outcome.status is FileStatus.UNREADABLE
    assert outcome.detail == "cannot import: the importer tripped"
    again = ImportRun(store).import_file(path, IMPORTER)
    assert again.status is FileStatus.IMPORTED
    assert store.connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 2


def test_an_append_failing_half_way_is_undone_and_done_once_later(
    store: SessionStore, tmp_path: Path
) -> None:
    path = sample(tmp_path, S21)
    first = ImportRun(store).import_file(path, IMPORTER)
    session_id = first.session_id or ""
    before = store.get_session(session_id)
    turns = []
    for turn in range(400):  # 800 messages: a committed batch of 500, then the failure
        turns.append(prompt(f"n{turn}", turn % 60, f"more {turn}"))
        turns.append(reply(f"r{turn}", turn % 60, text(f"reply {turn}"), message_id=f"x{turn}"))
    with open(path, "ab") as handle:
        handle.write(lines(*turns))
    failed = ImportRun(store).import_file(path, FailingAfter(700))  # type: ignore[arg-type]
    assert failed.status is FileStatus.UNREADABLE
    assert store.get_session(session_id).message_count == before.message_count
    assert len(store.messages(session_id)) == before.message_count
    retried = ImportRun(store).import_file(path, IMPORTER)
    assert retried.status is FileStatus.APPENDED
    assert store.get_session(session_id).message_count == before.message_count + 800
    contents = [m.content for m in store.messages(session_id)]
    assert len(contents) == len(set(contents)) and contents[-1] == "reply 399"
