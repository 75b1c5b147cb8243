"""Importing Hermes Agent stores of each known schema into a real store: every mapped field,
lineage kinds, routing rows, ids and titles kept (or suffixed when taken), idempotence,
growth, and search over what was imported."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_stores import (
    ARCHIVED,
    BRANCH,
    CJK_QUESTION,
    CONTINUATION,
    DELEGATE,
    ROOT,
    SYSTEM_PROMPT,
    T0,
    TELEGRAM,
    TIP,
    AgentStore,
    sample_store,
)
from hermes_hookspecs import Session
from hermes_import_hermes_agent.importer import HermesAgentImporter

from hermes_core.importing import FileStatus, ImportRun
from hermes_core.search import run_search
from hermes_core.store import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.open(tmp_path / "home") as opened:
        yield opened


def import_once(store: SessionStore, path: Path):  # type: ignore[no-untyped-def]
    return ImportRun(store).import_file(path, HermesAgentImporter())


def everything(store: SessionStore) -> tuple[list[tuple[object, ...]], ...]:
    """Every row an import could touch, to compare before and after."""
    connection = store.connection
    return (
        connection.execute("SELECT * FROM sessions ORDER BY id").fetchall(),
        connection.execute("SELECT * FROM messages ORDER BY id").fetchall(),
        connection.execute("SELECT * FROM gateway_routing ORDER BY session_key").fetchall(),
        connection.execute("SELECT * FROM system_prompts ORDER BY hash").fetchall(),
    )


def test_the_latest_schema_maps_every_field(tmp_path: Path, store: SessionStore) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30)
    outcome = import_once(store, sample.path)

    assert outcome.status is FileStatus.IMPORTED, outcome.detail
    assert sorted(s.session_id for s in outcome.sessions) == sorted(sample.session_ids)
    assert all(s.restored for s in outcome.sessions)  # every id was free: kept
    assert outcome.routes_added == 1
    assert outcome.warnings == {
        "message undone by a rewind in Hermes Agent": 1,
        "session_meta row": 1,
        "gateway routing row for a session not in the store": 1,
    }

    root = store.get_session(ROOT)
    assert (root.source, root.user_id, root.model) == ("cli", "ana", "gpt-5")
    assert root.model_config == {"temperature": 0.2, "reasoning_effort": "high"}
    assert root.system_prompt == SYSTEM_PROMPT  # from system_prompts, by hash
    assert (root.title, root.title_source) == ("my project", "user")
    assert (root.started_at, root.ended_at, root.end_reason) == (T0, T0 + 3000, "compression")
    assert (root.input_tokens, root.output_tokens) == (1200, 340)
    assert (root.cost_actual_usd, root.cost_estimated_usd) == (0.042, 0.05)
    assert root.cost_usd == 0.042
    assert root.billing_provider == "openrouter"
    assert (root.cwd, root.git_branch, root.git_repo_root) == (
        "/home/ana/shop",
        "main",
        "/home/ana/shop",
    )
    assert root.parent_session_id is None
    assert (root.cache_read_tokens, root.cache_write_tokens) == (800, 0)
    assert "cache_read_tokens" not in root.metadata["hermes_agent"]
    assert root.metadata["hermes_agent"]["api_call_count"] == 3
    assert root.metadata["hermes_agent"]["schema_version"] == 30
    assert root.metadata["imported_from"]["tool"] == "hermes-agent"
    assert root.metadata["imported_from"]["foreign_id"] == ROOT

    # The compression chain of three, numbered titles kept as lineage titles.
    second, tip = store.get_session(CONTINUATION), store.get_session(TIP)
    assert (second.parent_session_id, second.parent_kind) == (ROOT, "compression")
    assert (tip.parent_session_id, tip.parent_kind) == (CONTINUATION, "compression")
    assert [second.title, tip.title] == ["my project #2", "my project #3"]
    assert second.title_source == "lineage"
    # Open in Hermes Agent: stored ended at its last message (SPEC I5).
    assert (tip.ended_at, tip.end_reason) == (T0 + 7220, "imported")

    delegate, branch = store.get_session(DELEGATE), store.get_session(BRANCH)
    assert (delegate.parent_session_id, delegate.parent_kind) == (ROOT, "delegate")
    assert delegate.model_config is None  # the _delegate_from marker was all it held
    assert (branch.parent_session_id, branch.parent_kind) == (ROOT, "branch")
    assert branch.model_config == {"temperature": 0.7}
    assert (branch.title, branch.title_source) == ("what if we used postgres", "auto")

    telegram = store.get_session(TELEGRAM)
    assert telegram.pinned and not telegram.archived
    assert (telegram.chat_id, telegram.chat_type) == ("42", "dm")
    assert telegram.session_key == "agent:main:telegram:dm:42"
    assert telegram.end_reason == "session_reset"
    assert telegram.title == "東京の天気"
    assert telegram.metadata["hermes_agent"]["display_name"] == "Ana"
    assert telegram.metadata["hermes_agent"]["origin_json"] == {
        "platform": "telegram",
        "chat_id": "42",
    }
    archived = store.get_session(ARCHIVED)
    assert archived.archived and not archived.pinned
    assert archived.source == "api-server"

    messages = store.messages(ROOT)
    assert [(m.role, m.content) for m in messages] == [
        ("user", CJK_QUESTION),
        ("assistant", "Let me look for the migration scripts."),
        ("tool", "db/migrate/001_init.sql\ndb/migrate/002_orders.sql"),
        ("assistant", "Two migrations: init and orders. 计划看起来没问题。"),
        ("user", "an early question compacted away"),
    ]
    call = messages[1].tool_calls[0]
    assert (call.id, call.name, json.loads(call.arguments)) == (
        "call_grep_1", "terminal", {"command": "grep -rn migrate ."},
    )  # fmt: skip
    assert messages[1].reasoning == "The user wants the migration plan checked."
    assert (messages[2].tool_call_id, messages[2].tool_name) == ("call_grep_1", "terminal")
    assert [m.timestamp for m in messages] == [T0 + 10, T0 + 20, T0 + 25, T0 + 30, T0 + 41]
    assert store.get_session(ROOT).tool_call_count == 1
    assert store.get_session(ROOT).message_count == 5
    assert [m.content for m in store.messages(CONTINUATION)] == [
        "Continue with the orders migration rollback plan",
        "Here is the rollback plan.\n\n[image]",
    ]
    assert store.messages(TELEGRAM)[0].platform_message_id == "9001"

    # The routing row: the newest entry of that chat (two scopes), pointing at our session.
    routes = store.connection.execute(
        "SELECT session_key, session_id, platform, origin, updated_at FROM gateway_routing"
    ).fetchall()
    assert routes == [
        (
            "agent:main:telegram:dm:42",
            TELEGRAM,
            "telegram",
            json.dumps({"platform": "telegram", "chat_id": "42", "user_id": "555"}),
            T0 + 86000,
        )
    ]


def test_the_middle_schema_has_titles_lineage_and_legacy_prompts(
    tmp_path: Path, store: SessionStore
) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 11)
    outcome = import_once(store, sample.path)

    assert outcome.status is FileStatus.IMPORTED
    assert sorted(s.session_id for s in outcome.sessions) == sorted(sample.session_ids)
    root = store.get_session(ROOT)
    assert root.system_prompt == SYSTEM_PROMPT  # the legacy column (no system_prompts table)
    assert root.title == "my project"
    assert (root.cost_actual_usd, root.billing_provider) == (0.042, "openrouter")
    assert root.git_branch is None  # no such column in this version
    assert root.metadata["hermes_agent"]["schema_version"] == 11
    # Before v16 a delegate had no marker: a subagent session is one.
    assert store.get_session(DELEGATE).parent_kind == "delegate"
    assert store.get_session(TIP).parent_kind == "compression"
    assert store.get_session(BRANCH).parent_kind == "branch"
    assert store.messages(ROOT)[1].reasoning == "The user wants the migration plan checked."
    assert not store.get_session(TELEGRAM).pinned
    assert store.connection.execute("SELECT count(*) FROM gateway_routing").fetchone()[0] == 0
    total = store.connection.execute("SELECT count(*) FROM messages").fetchone()[0]
    assert total == sample.message_count


def test_the_early_schema_has_no_titles_or_lineage(tmp_path: Path, store: SessionStore) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 2)
    outcome = import_once(store, sample.path)

    assert outcome.status is FileStatus.IMPORTED
    assert sorted(s.session_id for s in outcome.sessions) == [ROOT, TELEGRAM]
    root = store.get_session(ROOT)
    assert (root.title, root.parent_session_id, root.system_prompt) == (None, None, SYSTEM_PROMPT)
    assert (root.input_tokens, root.output_tokens, root.user_id) == (1200, 340, "ana")
    tool = store.messages(ROOT)[2]
    assert (tool.role, tool.tool_call_id, tool.tool_name) == ("tool", "call_grep_1", "terminal")
    assert store.messages(ROOT)[1].tool_calls[0].name == "terminal"
    assert store.get_session(TELEGRAM).title is None
    assert root.metadata["hermes_agent"]["schema_version"] == 2


PICTURES = "20260302_080000_c3c3c3"


def test_pictures_stored_as_marked_json_parts_arrive_as_text_and_image_placeholders(
    tmp_path: Path, store: SessionStore
) -> None:
    """Hermes Agent stores a message with pictures as a NUL byte, ``json:`` and a JSON list of
    parts; the import keeps the text parts and puts ``[image]`` for each picture, so show,
    exports, snippets and resumed chats never carry the encoding."""
    _, agent = sample_store(tmp_path / "state.db", 30, keep_open=True)
    marker = "\x00json:"
    agent.add_session(id=PICTURES, source="telegram", started_at=T0 + 90000)
    photo = [
        {"type": "text", "text": "Why won\u2019t the invoice screenshot render?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://example.org/second.png"}},
    ]
    agent.add_message(PICTURES, "user", marker + json.dumps(photo), T0 + 90010)
    agent.add_message(
        PICTURES, "assistant", marker + json.dumps({"type": "text", "text": "One part."}),
        T0 + 90020,
    )  # fmt: skip
    agent.add_message(PICTURES, "user", marker + json.dumps("a plain string"), T0 + 90030)
    agent.add_message(PICTURES, "assistant", marker + "[not json after all", T0 + 90040)
    agent.add_message(PICTURES, "user", marker + json.dumps([{"no": "type"}]), T0 + 90050)
    agent.connection.commit()
    agent.close()

    import_once(store, tmp_path / "state.db")

    assert [m.content for m in store.messages(PICTURES)] == [
        "Why won\u2019t the invoice screenshot render?\n\n[image]\n\n[image]",
        "One part.",
        "a plain string",
        "[not json after all",
        '[{"no": "type"}]',
    ]
    payload = run_search(store.connection, {"query": "invoice screenshot"})
    hit = json.dumps(payload, ensure_ascii=False)
    assert PICTURES in hit
    assert "json:" not in hit and "\\u0000" not in hit and "image_url" not in hit


def test_imported_sessions_are_searchable_in_cjk_and_english(
    tmp_path: Path, store: SessionStore
) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30)
    import_once(store, sample.path)

    for query, expected in (("数据库迁移", ROOT), ("rollback", CONTINUATION), ("東京", TELEGRAM)):
        payload = run_search(store.connection, {"query": query})
        assert [r["session_id"] for r in payload["results"]][:1] == [expected], (query, payload)


def test_a_second_import_changes_nothing_and_says_so(tmp_path: Path, store: SessionStore) -> None:
    sample, _ = sample_store(tmp_path / "state.db", 30)
    import_once(store, sample.path)
    before = everything(store)
    changes = store.connection.total_changes

    again = import_once(store, sample.path)

    assert again.status is FileStatus.UNCHANGED
    assert again.detail == "already imported: no new sessions or messages"
    assert (again.sessions, again.appended, again.routes_added) == ([], [], 0)
    assert everything(store) == before
    # Only the file's own bookkeeping row is rewritten (marked, then done).
    assert store.connection.total_changes - changes <= 2


def test_a_grown_store_appends_to_imported_sessions_and_adds_new_ones(
    tmp_path: Path, store: SessionStore
) -> None:
    sample, agent = sample_store(tmp_path / "state.db", 30, keep_open=True)
    import_once(store, sample.path)
    store.set_title(TELEGRAM, "weather chat")  # renamed here: kept
    agent.add_message(TIP, "user", "One more thing: the changelog", T0 + 7300)
    agent.add_message(TIP, "assistant", "Changelog updated.", T0 + 7310)
    agent.connection.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = 'user_exit', input_tokens = 99 WHERE id = ?",
        (T0 + 7400, TIP),
    )
    agent.add_session(
        id="20260305_090000_abcdef", source="cli", started_at=T0 + 345600, title="new work"
    )
    agent.add_message("20260305_090000_abcdef", "user", "A brand new question", T0 + 345610)
    agent.close()

    grown = import_once(store, sample.path)

    assert grown.status is FileStatus.IMPORTED
    assert [s.session_id for s in grown.sessions] == ["20260305_090000_abcdef"]
    assert [(s.session_id, s.messages) for s in grown.appended] == [(TIP, 2)]
    assert [m.content for m in store.messages(TIP)][-2:] == [
        "One more thing: the changelog",
        "Changelog updated.",
    ]
    tip = store.get_session(TIP)
    assert (tip.ended_at, tip.end_reason, tip.input_tokens, tip.message_count) == (
        T0 + 7400, "user_exit", 99, 4,
    )  # fmt: skip
    assert store.get_session(TELEGRAM).title == "weather chat"
    assert import_once(store, sample.path).status is FileStatus.UNCHANGED


def test_a_moved_copy_of_the_store_brings_the_messages_it_added(
    tmp_path: Path, store: SessionStore
) -> None:
    """A store imported, then a copy of it somewhere else (a moved or restored home) that
    has grown: its new messages in known sessions are appended, its new sessions added."""
    (tmp_path / "old").mkdir()
    sample, _ = sample_store(tmp_path / "old" / "state.db", 30)
    import_once(store, sample.path)
    moved = tmp_path / "new" / "state.db"
    moved.parent.mkdir()
    shutil.copy(sample.path, moved)
    agent = AgentStore.open(moved, 30)
    agent.add_message(TIP, "user", "One more thing: the changelog", T0 + 7300)
    agent.add_message(TIP, "assistant", "Changelog updated.", T0 + 7310)
    agent.add_session(
        id="20260305_090000_abcdef", source="cli", started_at=T0 + 345600, title="new work"
    )
    agent.add_message("20260305_090000_abcdef", "user", "A brand new question", T0 + 345610)
    agent.close()

    grown = import_once(store, moved)

    assert [s.session_id for s in grown.sessions] == ["20260305_090000_abcdef"]
    assert [(s.session_id, s.messages) for s in grown.appended] == [(TIP, 2)]
    assert [m.content for m in store.messages(TIP)][-2:] == [
        "One more thing: the changelog",
        "Changelog updated.",
    ]
    assert store.get_session(TIP).message_count == 4
    assert import_once(store, moved).status is FileStatus.UNCHANGED
    assert import_once(store, sample.path).status is FileStatus.UNCHANGED
    assert store.get_session(TIP).message_count == 4


def test_another_store_reusing_an_imported_id_gets_a_session_of_its_own(
    tmp_path: Path, store: SessionStore
) -> None:
    """A different store whose session has an id imported before from another store: not
    mixed into that one, not dropped — a session of its own under a new id, with a note; its
    next import finds it again (nothing new), and its later messages go to it."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    sample, _ = sample_store(tmp_path / "one" / "state.db", 30)
    import_once(store, sample.path)
    before = [m.content for m in store.messages(ROOT)]
    other, agent = sample_store(tmp_path / "two" / "state.db", 30, keep_open=True)
    agent.connection.execute(
        "UPDATE messages SET content = 'a different first question' WHERE id = "
        "(SELECT min(id) FROM messages WHERE session_id = ?)",
        (ROOT,),
    )
    agent.connection.commit()
    agent.close()

    outcome = import_once(store, other.path)

    notes = [n for n in outcome.notes if n.startswith(f"session {ROOT} differs from the one")]
    assert len(notes) == 1, outcome.notes
    assert f"imported before as {ROOT}" in notes[0]
    own_id = notes[0].rsplit("imported as ", 1)[1]
    assert own_id != ROOT and own_id in [s.session_id for s in outcome.sessions]
    assert [m.content for m in store.messages(ROOT)] == before
    theirs = [m.content for m in store.messages(own_id)]
    assert theirs[0] == "a different first question" and theirs[1:] == before[1:]

    assert import_once(store, other.path).status is FileStatus.UNCHANGED
    agent = AgentStore.open(other.path, 30)
    agent.add_message(ROOT, "user", "and one more, in the other store", T0 + 9000)
    agent.close()
    grown = import_once(store, other.path)
    assert [(s.session_id, s.messages) for s in grown.appended] == [(own_id, 1)]
    assert [m.content for m in store.messages(own_id)][-1] == "and one more, in the other store"
    assert [m.content for m in store.messages(ROOT)] == before
    assert import_once(store, sample.path).status is FileStatus.UNCHANGED


def test_an_ended_session_is_refreshed_without_new_messages(
    tmp_path: Path, store: SessionStore
) -> None:
    sample, agent = sample_store(tmp_path / "state.db", 30, keep_open=True)
    import_once(store, sample.path)
    agent.connection.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = 'user_exit' WHERE id = ?", (T0 + 8000, TIP)
    )
    agent.close()

    outcome = import_once(store, sample.path)

    assert outcome.status is FileStatus.UNCHANGED  # no new session or message...
    tip = store.get_session(TIP)
    assert (tip.ended_at, tip.end_reason) == (T0 + 8000, "user_exit")  # ...but its end followed


def test_a_taken_id_gets_a_new_one_and_a_used_title_a_suffix(
    tmp_path: Path, store: SessionStore
) -> None:
    store.create_session(source="cli", session_id=ROOT, title="mine")
    store.create_session(source="cli", title="東京の天気")
    sample, _ = sample_store(tmp_path / "state.db", 30)

    outcome = import_once(store, sample.path)

    notes = "\n".join(outcome.notes)
    [moved] = [s for s in outcome.sessions if not s.restored]
    assert (
        f"session {ROOT}: that id is taken in this store; imported as {moved.session_id}" in notes
    )
    assert store.get_session(moved.session_id).title == "my project"
    # Its children follow it to the new id.
    assert store.get_session(CONTINUATION).parent_session_id == moved.session_id
    assert store.get_session(DELEGATE).parent_session_id == moved.session_id
    assert store.get_session(TELEGRAM).title == "東京の天気 (2)"
    assert (
        "the title '東京の天気' is used by another session; imported as '東京の天気 (2)'" in notes
    )
    assert store.get_session(ROOT).title == "mine"
    # Idempotent through the new id too.
    assert import_once(store, sample.path).status is FileStatus.UNCHANGED


def test_a_child_stored_before_its_parent_is_linked_at_the_end(
    tmp_path: Path, store: SessionStore
) -> None:
    agent = AgentStore.create(tmp_path / "state.db", 30)
    P, C = "20260301_100000_0000a1", "20260301_100000_0000c1"
    agent.add_session(
        id=P, source="cli", started_at=T0 + 100, ended_at=T0 + 200, end_reason="compression"
    )
    agent.add_session(id=C, source="cli", started_at=T0, parent_session_id=P)  # clock skew
    agent.add_message(P, "user", "parent", T0 + 110)
    agent.add_message(C, "user", "child", T0 + 10)
    agent.close()

    outcome = import_once(store, agent.path)

    assert outcome.status is FileStatus.IMPORTED
    child = store.get_session(C)
    assert (child.parent_session_id, child.parent_kind) == (P, "compression")


def test_a_session_deleted_here_stays_deleted(tmp_path: Path, store: SessionStore) -> None:
    sample, agent = sample_store(tmp_path / "state.db", 30, keep_open=True)
    import_once(store, sample.path)
    store.delete_session(TELEGRAM)
    agent.add_message(TELEGRAM, "user", "are you there?", T0 + 90000)
    agent.close()

    outcome = import_once(store, sample.path)

    assert outcome.status is FileStatus.UNCHANGED
    assert "1 session(s) imported before and deleted here since: left deleted" in outcome.notes
    with pytest.raises(Exception, match="no session"):
        store.get_session(TELEGRAM)


def test_this_stores_own_route_for_a_chat_is_kept(tmp_path: Path, store: SessionStore) -> None:
    mine = store.create_session(source="telegram", title="live chat")
    with store.connection:
        store.connection.execute(
            "INSERT INTO gateway_routing (session_key, session_id, platform, updated_at) "
            "VALUES ('agent:main:telegram:dm:42', ?, 'telegram', 1.0)",
            (mine.id,),
        )
    sample, _ = sample_store(tmp_path / "state.db", 30)

    outcome = import_once(store, sample.path)

    assert outcome.routes_added == 0
    assert any(
        "agent:main:telegram:dm:42: this store already routes it" in n for n in outcome.notes
    )
    routed = store.connection.execute("SELECT session_id FROM gateway_routing").fetchall()
    assert routed == [(mine.id,)]


def test_the_importer_alone_yields_snapshots_and_a_cursor(tmp_path: Path) -> None:
    sample, agent = sample_store(tmp_path / "state.db", 30, keep_open=True)
    importer = HermesAgentImporter()
    first = []
    for imported in importer.read(sample.path):  # messages read before the next session
        list(imported.messages)
        first.append(imported)
    assert [i.foreign_id for i in first][:2] == [ROOT, DELEGATE]  # oldest first
    assert all(isinstance(i.snapshot, Session) and not i.continues for i in first)
    cursor = first[0].cursor
    newest = agent.connection.execute("SELECT max(id) FROM messages").fetchone()[0]
    assert cursor == f"messages:{newest}"
    agent.add_message(ROOT, "user", "later", T0 + 5000)
    agent.close()

    resumed = {
        i.foreign_id: (i, [m.content for m in i.messages])
        for i in importer.read(sample.path, cursor)
    }

    assert resumed[ROOT][1] == ["later"] and resumed[ROOT][0].continues
    assert resumed[TIP][1] == [] and resumed[TIP][0].continues


def test_a_message_without_its_session_row_is_not_read(tmp_path: Path) -> None:
    """A message whose session row is gone (Hermes Agent orphans, never cascades) is not
    anybody's: it is simply not read, and the rest imports."""
    sample, _ = sample_store(tmp_path / "state.db", 30)
    connection = sqlite3.connect(sample.path)
    connection.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('nobody', 'user', 'x', 1)"
    )
    connection.commit()
    connection.close()
    sessions = [i.foreign_id for i in HermesAgentImporter().read(sample.path)]
    assert "nobody" not in sessions


def test_reset_children_by_marker_and_by_the_legacy_end_reason(
    tmp_path: Path, store: SessionStore
) -> None:
    agent = AgentStore.create(tmp_path / "state.db", 30)
    OLD, NEW, MARKED, ELSEWHERE = (f"20260301_100000_0000{n}0" for n in "abcd")
    key = "agent:main:telegram:dm:42"
    agent.add_session(
        id=OLD,
        source="telegram",
        started_at=T0,
        ended_at=T0 + 10,
        end_reason="idle",
        session_key=key,
    )
    agent.add_session(
        id=NEW, source="telegram", started_at=T0 + 20, parent_session_id=OLD, session_key=key
    )
    agent.add_session(
        id=MARKED,
        source="cli",
        started_at=T0 + 30,
        parent_session_id=OLD,
        model_config={"_reset_from": OLD},
    )
    agent.add_session(
        id=ELSEWHERE,
        source="telegram",
        started_at=T0 + 40,
        parent_session_id=OLD,
        session_key="agent:main:telegram:dm:7",
    )
    for number, session_id in enumerate((OLD, NEW, MARKED, ELSEWHERE)):
        agent.add_message(session_id, "user", f"message {number}", T0 + 100 + number)
    agent.close()

    import_once(store, agent.path)

    kinds = {sid: store.get_session(sid).parent_kind for sid in (NEW, MARKED, ELSEWHERE)}
    # Another chat's child of an idle-ended session is no reset: an ordinary branch.
    assert kinds == {NEW: "reset", MARKED: "reset", ELSEWHERE: "branch"}
    assert store.get_session(MARKED).model_config is None
