"""The management commands through typer's CliRunner on ``build_app`` (DESIGN §6)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hermes_hookspecs import Message, ToolCall
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

runner = CliRunner()


@pytest.fixture
def host() -> PluginHost:
    return PluginHost(load_entry_points=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def invoke(host: PluginHost, home: Path, *args: str, input: str | None = None):
    return runner.invoke(build_app(host), ["--home", str(home), *args], input=input)


def make_session(
    home: Path,
    source: str = "cli",
    *,
    title: str | None = None,
    text: str = "hello there",
    ago: float = 3600,
    **fields: object,
) -> str:
    with SessionStore.open(home) as store:
        started = time.time() - ago
        session = store.create_session(source, title=title, started_at=started, **fields)
        store.append_messages(
            session.id,
            [
                Message("user", text, timestamp=started + 1),
                Message(
                    "assistant", "answer", timestamp=started + 2, tool_calls=(ToolCall("terminal"),)
                ),
            ],
        )
        return session.id


def test_list_with_titles_shows_title_preview_last_active_and_id(host, home):
    first = make_session(
        home, title="refactoring auth", text="Help me refactor the auth module", ago=7300
    )
    second = make_session(home, text="What's the weather in Las Vegas?", ago=3 * 86400 + 100)
    result = invoke(host, home, "sessions", "list")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["Title", "Preview", "Last", "Active", "ID"]
    assert set(lines[1]) == {"─"}
    assert "refactoring auth" in lines[2] and "2h ago" in lines[2] and first in lines[2]
    assert lines[3].startswith("—") and "3d ago" in lines[3] and second in lines[3]


def test_list_without_titles_shows_short_source_labels(host, home):
    make_session(home, "telegram", text="hi from telegram", ago=86400 * 1.5, gateway=True)
    make_session(home, "cli", text="hi from the terminal", ago=60 * 5 + 30)
    result = invoke(host, home, "sessions", "list")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["Preview", "Last", "Active", "Src", "ID"]
    assert "5m ago" in lines[2] and " cli " in lines[2]
    assert "yesterday" in lines[3] and " tele " in lines[3]


def test_list_filters_by_source_limit_and_workspace(host, home):
    for index in range(5):
        make_session(home, "cli", text=f"cli {index}", ago=100 + index, cwd=f"/src/project-{index}")
    make_session(home, "discord", text="from discord", ago=50, gateway=True)
    by_source = json.loads(
        invoke(host, home, "sessions", "list", "--source", "discord", "--json").output
    )
    assert [row["source"] for row in by_source] == ["discord"]
    limited = json.loads(invoke(host, home, "sessions", "list", "--limit", "2", "--json").output)
    assert len(limited) == 2
    workspace = json.loads(
        invoke(host, home, "sessions", "list", "--workspace", "project-3", "--json").output
    )
    assert [row["workspace"] for row in workspace] == ["/src/project-3"]


def test_list_json_shape_is_stable(host, home):
    session_id = make_session(home, title="shape", model="gpt-5", cwd="/w")
    rows = json.loads(invoke(host, home, "sessions", "list", "--json").output)
    assert set(rows[0]) == {
        "id",
        "title",
        "preview",
        "source",
        "started_at",
        "last_active_at",
        "ended_at",
        "end_reason",
        "message_count",
        "model",
        "workspace",
        "parent_session_id",
        "parent_kind",
        "pinned",
        "archived",
    }
    assert rows[0]["id"] == session_id and rows[0]["message_count"] == 2


def test_list_hides_archived_and_delegates_but_always_shows_pinned(host, home):
    parent = make_session(home, title="parent", ago=10)
    old_pinned = make_session(home, title="old but pinned", ago=400 * 86400)
    archived = make_session(home, title="archived one", ago=20)
    with SessionStore.open(home) as store:
        delegate = store.create_session("cli", parent_session_id=parent, parent_kind="delegate").id
        store.set_archived([archived], True)
        store.set_pinned([old_pinned], True)
    shown = [
        r["id"]
        for r in json.loads(invoke(host, home, "sessions", "list", "--limit", "1", "--json").output)
    ]
    assert old_pinned in shown and parent in shown
    assert archived not in shown and delegate not in shown
    with_all = [
        r["id"]
        for r in json.loads(invoke(host, home, "sessions", "list", "--all", "--json").output)
    ]
    assert delegate in with_all and archived not in with_all


def test_rename_takes_a_multi_word_title_without_quotes(host, home):
    session_id = make_session(home)
    result = invoke(
        host, home, "sessions", "rename", session_id[:-2], "debugging", "the", "auth", "flow"
    )
    assert result.exit_code == 0, result.output
    with SessionStore.open(home) as store:
        assert store.get_session(session_id).title == "debugging the auth flow"


def test_rename_to_a_used_title_is_one_clear_line(host, home):
    make_session(home, title="taken")
    other = make_session(home)
    result = invoke(host, home, "sessions", "rename", other, "taken")
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0
    assert "already used" in result.output and "Traceback" not in result.output


def test_rename_over_100_characters_is_refused(host, home):
    session_id = make_session(home)
    result = invoke(host, home, "sessions", "rename", session_id, "x" * 101)
    assert result.exit_code == 1 and "too long" in result.output


@pytest.mark.parametrize("command", [["delete"], ["rename"], ["pin"], ["show"]])
def test_unknown_id_is_one_line_and_exit_1(host, home, command):
    make_session(home)
    args = ["sessions", *command, "20990101_000000_ffffff"]
    if command == ["rename"]:
        args.append("title")
    result = invoke(host, home, *args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [result.output.strip()]
    assert "no session" in result.output


def test_ambiguous_prefix_is_a_clear_error(host, home):
    with SessionStore.open(home) as store:
        store.create_session("cli", session_id="20250305_091523_aaaaaa")
        store.create_session("cli", session_id="20250305_091523_aaaabb")
    result = invoke(host, home, "sessions", "pin", "20250305_091523_aaaa")
    assert result.exit_code == 1 and "matches 2 sessions" in result.output


def test_delete_asks_first_and_keeps_the_session_on_no(host, home):
    session_id = make_session(home, title="keep me")
    result = invoke(host, home, "sessions", "delete", session_id, input="n\n")
    assert result.exit_code == 1
    with SessionStore.open(home) as store:
        assert store.get_session(session_id).title == "keep me"
    result = invoke(host, home, "sessions", "delete", session_id, input="y\n")
    assert result.exit_code == 0, result.output
    result = invoke(host, home, "sessions", "delete", "keep me", "--yes")
    assert result.exit_code == 1 and "no session" in result.output


def test_pin_several_prefixes_then_pinned_json_and_unpin(host, home):
    with SessionStore.open(home) as store:
        store.create_session("cli", session_id="20250305_091523_a1b2c3")
        store.create_session("cli", session_id="20250306_101010_d4e5f6")
        store.create_session("cli", session_id="20250307_101010_000000")
    result = invoke(host, home, "sessions", "pin", "20250305", "20250306")
    assert result.exit_code == 0, result.output
    pinned = json.loads(invoke(host, home, "sessions", "pinned", "--json").output)
    assert sorted(row["id"] for row in pinned) == [
        "20250305_091523_a1b2c3",
        "20250306_101010_d4e5f6",
    ]
    assert invoke(host, home, "sessions", "unpin", "20250305").exit_code == 0
    pinned = json.loads(invoke(host, home, "sessions", "pinned", "--json").output)
    assert [row["id"] for row in pinned] == ["20250306_101010_d4e5f6"]


def test_pin_with_one_unknown_reference_changes_nothing(host, home):
    session_id = make_session(home)
    result = invoke(host, home, "sessions", "pin", session_id, "nope")
    assert result.exit_code == 1
    with SessionStore.open(home) as store:
        assert not store.get_session(session_id).pinned


def test_stats_starts_with_the_seed_lines(host, home):
    make_session(home, "cli")
    make_session(home, "cli")
    make_session(home, "telegram", gateway=True)
    lines = invoke(host, home, "sessions", "stats").output.splitlines()
    assert lines[0] == "Total sessions: 3"
    assert lines[1] == "Total messages: 6"
    assert lines[2] == "  cli: 2 sessions"
    assert lines[3] == "  telegram: 1 sessions"
    assert lines[4].startswith("Database size: ") and lines[4].endswith("B")


def test_optimize_prints_sizes_and_touches_no_data(host, home):
    ids = [make_session(home, text=f"message number {i}") for i in range(20)]
    with SessionStore.open(home) as store:
        before = [(s.id, s.message_count, s.title) for s in store.select_sessions()]
        store.delete_sessions(ids[:10])
    result = invoke(host, home, "sessions", "optimize")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Database size: ") and "→" in result.output
    with SessionStore.open(home) as store:
        after = [(s.id, s.message_count, s.title) for s in store.select_sessions()]
        assert after == [row for row in before if row[0] not in ids[:10]]
        hits = store.connection.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'number'"
        ).fetchone()[0]
        assert hits == 10


def test_repair_check_only_reports_an_out_of_step_index_and_repair_fixes_it(host, home):
    make_session(home, text="searchable words here")
    with SessionStore.open(home) as store:
        # Someone edits the file behind the store's back: the index goes out of step.
        store.connection.execute(
            "UPDATE messages SET content = 'changed behind our back' WHERE role = 'user'"
        )
    checked = invoke(host, home, "sessions", "repair", "--check-only")
    assert checked.exit_code == 1 and "full-text index" in checked.output
    repaired = invoke(host, home, "sessions", "repair")
    assert repaired.exit_code == 0, repaired.output
    assert "Backup written to" in repaired.output
    assert list(home.glob("state.db.backup-*"))
    assert invoke(host, home, "sessions", "repair", "--check-only").exit_code == 0
    with SessionStore.open(home) as store:
        hits = store.connection.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'behind'"
        ).fetchone()[0]
        assert hits == 1


def test_an_unreadable_store_says_store_unavailable_without_traceback(host, home):
    home.mkdir(parents=True)
    (home / "state.db").write_bytes(b"this is not a database" * 100)
    result = invoke(host, home, "sessions", "list")
    assert result.exit_code == 1
    assert "⚠ Session store unavailable" in result.output
    assert "hermes sessions repair" in result.output
    assert "Traceback" not in result.output


def test_bad_config_value_is_one_line_naming_the_key(host, home):
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("sessions:\n  retention_days: soon\n")
    result = invoke(host, home, "sessions", "list")
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [result.output.strip()]
    assert "sessions.retention_days must be a whole number" in result.output


def test_unknown_config_key_is_warned_about_and_ignored(host, home):
    home.mkdir(parents=True)
    (home / "config.yaml").write_text(
        "sessions:\n  retention_dayz: 5\ndisplay:\n  resume_display: minimal\n"
    )
    result = invoke(host, home, "sessions", "list")
    assert result.exit_code == 0
    assert "unknown setting 'sessions.retention_dayz'" in result.output


def test_config_defaults_and_values(home):
    from hermes_core.config import load_config

    assert load_config(home)["sessions.retention_days"] == 90
    home.mkdir(parents=True)
    (home / "config.yaml").write_text("sessions:\n  auto_prune: true\n  retention_days: 30\n")
    config = load_config(home)
    assert config["sessions.auto_prune"] is True and config["sessions.retention_days"] == 30
    assert config["sessions.vacuum_after_prune"] is True


def test_config_that_is_not_yaml_names_the_file(home):
    from hermes_core.config import ConfigError, load_config

    home.mkdir(parents=True)
    (home / "config.yaml").write_text("sessions: [unclosed\n")
    with pytest.raises(ConfigError, match=r"config\.yaml.*not valid YAML"):
        load_config(home)


def test_show_resolves_a_title_to_the_newest_of_its_lineage(host, home):
    root = make_session(home, title="my project", text="first part")
    with SessionStore.open(home) as store:
        second = store.continue_after_compression(root)
        third = store.continue_after_compression(second.id)
        store.append_messages(third.id, [Message("user", "third part")])
    result = invoke(host, home, "sessions", "show", "my project", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["id"] == third.id and payload["title"] == "my project #3"
