"""``hermes sessions export`` through typer's CliRunner on ``build_app`` (SPEC X1–X6)."""

from __future__ import annotations

import dataclasses
import json
import stat
from pathlib import Path

import pytest
import yaml
from export_helpers import ExporterPlugin, RecordingExporter, host, invoke, make, sha256
from hermes_hookspecs import Message, Session, UserFacingError
from postgres_cluster import open_home_store

from hermes_core.exporting import MANIFEST_NAME, read_manifest
from hermes_core.store import SessionStore


@pytest.fixture
def home(backend_home: Path) -> Path:
    """Every test runs with the home's store in SQLite, then in PostgreSQL."""
    return backend_home


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def only_error_line(result) -> str:
    """The one stderr line of a refused command (and no traceback)."""
    assert result.exit_code == 1, result.output
    error = result.stderr.strip()
    assert error.startswith("hermes: ") and "\n" not in error, error
    assert "Traceback" not in result.output
    return error


# ---------------------------------------------------------------- jsonl (X2)


def test_bare_jsonl_export_dumps_every_session_active_and_archived_included(home, tmp_path):
    with open_home_store(home) as store:
        ended = make(store, title="ended one")
        active = make(store, ended=False)
        archived = make(store)
        store.set_archived([archived], True)
    target = tmp_path / "backup.jsonl"
    result = invoke(host(), home, "sessions", "export", str(target))
    assert result.exit_code == 0, result.output
    assert "Exported 3 session(s) as jsonl" in result.stdout
    assert {line["session"]["id"] for line in lines(target)} == {ended, active, archived}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_jsonl_objects_hold_every_session_and_message_field(home, tmp_path):
    with open_home_store(home) as store:
        session_id = make(store, title="full", tool=True, model="gpt-5", cwd="/work")
    target = tmp_path / "one.jsonl"
    result = invoke(host(), home, "sessions", "export", str(target), "--session-id", session_id)
    assert result.exit_code == 0, result.output
    [line] = lines(target)
    assert line["format"] == "hermes-session" and line["version"] == 1
    assert set(line["session"]) == {f.name for f in dataclasses.fields(Session)}
    assert line["session"]["title"] == "full" and line["session"]["model"] == "gpt-5"
    assert len(line["messages"]) == 4
    for message in line["messages"]:
        assert set(message) == {f.name for f in dataclasses.fields(Message)}
    assert line["messages"][2]["tool_calls"] == [
        {"name": "terminal", "arguments": '{"command": "ls"}', "id": "call_1"}
    ]
    assert line["messages"][3]["tool_name"] == "terminal"


def test_dash_writes_jsonl_to_stdout_and_messages_to_stderr(home):
    with open_home_store(home) as store:
        first, second = make(store), make(store)
    result = invoke(host(), home, "sessions", "export", "-")
    assert result.exit_code == 0, result.output
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    assert [o["session"]["id"] for o in objects] == [first, second]  # oldest first
    assert "Exported 2 session(s)" in result.stderr


def test_jsonl_into_a_directory_names_the_file(home, tmp_path):
    with open_home_store(home) as store:
        session_id = make(store)
    folder = tmp_path / "out"
    folder.mkdir()
    result = invoke(host(), home, "sessions", "export", str(folder), "--session-id", session_id)
    assert result.exit_code == 0, result.output
    assert [p.name for p in folder.iterdir()] == [f"{session_id}.jsonl"]


def test_jsonl_without_output_is_one_line_asking_for_it(home):
    with open_home_store(home) as store:
        make(store)
    error = only_error_line(invoke(host(), home, "sessions", "export"))
    assert "give OUTPUT" in error


def test_an_empty_selection_writes_nothing(home, tmp_path):
    with open_home_store(home) as store:
        make(store, source="cli")
    target = tmp_path / "none.jsonl"
    result = invoke(host(), home, "sessions", "export", str(target), "--source", "telegram")
    assert result.exit_code == 0, result.output
    assert "nothing was exported" in result.stdout
    assert not target.exists()


# ---------------------------------------------------------------- selection (X1, F1)


def test_session_id_takes_an_id_a_prefix_or_a_title(home):
    with open_home_store(home) as store:
        make(store, title="alpha")
        wanted = make(store, title="the one")
    for reference in (wanted, wanted[:-2], "the one"):
        result = invoke(host(), home, "sessions", "export", "-", "--session-id", reference)
        assert result.exit_code == 0, result.output
        assert [json.loads(x)["session"]["id"] for x in result.stdout.splitlines()] == [wanted]


def test_an_unknown_session_id_is_one_line(home):
    with open_home_store(home) as store:
        make(store)
    error = only_error_line(
        invoke(host(), home, "sessions", "export", "-", "--session-id", "nope_nope")
    )
    assert "nope_nope" in error


def test_filters_select_ended_sessions_only(home):
    with open_home_store(home) as store:
        ended_cli = make(store, source="cli")
        make(store, source="cli", ended=False)
        make(store, source="telegram")
        old = make(store, source="cli", days_ago=30)
    result = invoke(host(), home, "sessions", "export", "-", "--source", "cli")
    assert result.exit_code == 0, result.output
    exported = {json.loads(x)["session"]["id"] for x in result.stdout.splitlines()}
    assert exported == {ended_cli, old}
    result = invoke(host(), home, "sessions", "export", "-", "--older-than", "10d")
    assert {json.loads(x)["session"]["id"] for x in result.stdout.splitlines()} == {old}


def test_session_id_and_filters_do_not_combine(home):
    with open_home_store(home) as store:
        session_id = make(store)
    args = ("sessions", "export", "-", "--session-id", session_id, "--source", "cli")
    assert "not both" in only_error_line(invoke(host(), home, *args))


def test_a_bad_filter_value_is_one_line_naming_the_flag(home):
    error = only_error_line(invoke(host(), home, "sessions", "export", "-", "--older-than", "soon"))
    assert "--older-than" in error


def test_dry_run_lists_the_matches_and_writes_nothing(home, tmp_path):
    with open_home_store(home) as store:
        first = make(store, title="first", source="cli")
        make(store, source="telegram")
    folder = tmp_path / "exports"
    result = invoke(
        host(), home, "sessions", "export", str(folder), "--format", "md", "--source", "cli",
        "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert first in result.stdout and "first" in result.stdout
    assert "Dry run: 1 session(s)" in result.stdout and "nothing was written" in result.stdout
    assert not folder.exists()


# ---------------------------------------------------------------- formats


def test_a_missing_known_format_names_its_distribution_and_the_installed_ones(home):
    error = only_error_line(invoke(host(), home, "sessions", "export", "x.html", "-f", "html"))
    assert "pip install hermes-export-html" in error
    assert "installed formats: jsonl, md, qmd" in error


def test_an_unknown_format_lists_the_installed_ones(home):
    error = only_error_line(invoke(host(), home, "sessions", "export", "-", "-f", "yaml"))
    assert "no exporter 'yaml'" in error and "pip install" not in error
    assert "jsonl, md, qmd" in error


# ---------------------------------------------------------------- md / qmd (X3)


def test_bare_bulk_markdown_export_is_refused(home):
    with open_home_store(home) as store:
        make(store)
    for fmt in ("md", "qmd"):
        error = only_error_line(invoke(host(), home, "sessions", "export", "--format", fmt))
        assert "needs at least one filter" in error
    assert not (home / "session-exports").exists()


def test_markdown_writes_a_file_per_session_and_a_manifest_in_the_default_folder(home):
    with open_home_store(home) as store:
        first = make(store, title="Fix the ../../etc/passwd bug", tool=True, days_ago=3)
        second = make(store, title=None)
    result = invoke(host(), home, "sessions", "export", "--format", "md", "--source", "cli")
    assert result.exit_code == 0, result.output
    folder = home / "session-exports"
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(
        [f"{first}-fix-the-etc-passwd-bug.md", f"{second}-session.md", MANIFEST_NAME]
    )
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    entries = read_manifest(folder)
    assert [e["session_ids"] for e in entries] == [[first], [second]]
    for entry in entries:
        assert entry["sha256"] == sha256(folder / entry["path"])
        assert entry["lineage_ids"] == entry["session_ids"] and entry["format"] == "md"
    assert [e["message_count"] for e in entries] == [4, 2]


def test_qmd_front_matter_is_yaml_with_the_keys_quarto_reads(home, tmp_path):
    with open_home_store(home) as store:
        session_id = make(store, title='quoted "title": with # marks\u2028and a break')
    result = invoke(
        host(), home, "sessions", "export", str(tmp_path), "-f", "qmd", "--session-id", session_id
    )
    assert result.exit_code == 0, result.output
    [document] = tmp_path.glob("*.qmd")
    text = document.read_text(encoding="utf-8")
    meta = yaml.safe_load(text.split("---\n")[1])
    with open_home_store(home) as store:
        assert meta["title"] == store.get_session(session_id).title
    assert meta["format"] == "html" and meta["session_id"] == session_id
    assert (tmp_path / MANIFEST_NAME).exists()


def test_one_markdown_session_may_go_to_a_named_file(home, tmp_path):
    with open_home_store(home) as store:
        session_id = make(store, title="named")
    target = tmp_path / "mine.md"
    result = invoke(
        host(), home, "sessions", "export", str(target), "-f", "md", "--session-id", session_id
    )
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8").startswith('---\ntitle: "named"\n')


# ---------------------------------------------------------------- --only user-prompts (X6)


def test_only_user_prompts_jsonl_is_one_record_per_prompt(home):
    with open_home_store(home) as store:
        session_id = make(store, messages=4, text="ask")
    result = invoke(
        host(), home, "sessions", "export", "-", "--session-id", session_id,
        "--only", "user-prompts",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    records = [json.loads(x) for x in result.stdout.splitlines()]
    assert [(r["session_id"], r["index"], r["text"]) for r in records] == [
        (session_id, 1, "ask 0"),
        (session_id, 2, "ask 2"),
    ]
    assert all(r["created_at"].endswith("Z") for r in records)


def test_only_user_prompts_md_goes_to_stdout(home):
    with open_home_store(home) as store:
        session_id = make(store, messages=4, text="ask")
    result = invoke(
        host(), home, "sessions", "export", "-", "--session-id", session_id, "--only",
        "user-prompts", "--format", "md",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "### 1. " in result.stdout and "ask 2" in result.stdout
    assert "ask 1" not in result.stdout  # the assistant's answer


@pytest.mark.parametrize("fmt", ["qmd", "spy"])
def test_only_user_prompts_with_another_format_is_one_line(home, fmt):
    plugin_host = host(("spy", ExporterPlugin(RecordingExporter())))
    error = only_error_line(
        invoke(plugin_host, home, "sessions", "export", "-", "-f", fmt, "--only", "user-prompts")
    )
    assert f"does not work with --format {fmt}" in error and "jsonl, md" in error


@pytest.mark.parametrize(
    ("flag", "value"), [("--only", "assistant"), ("--lineage", "tree")], ids=["only", "lineage"]
)
def test_unknown_choices_are_one_line(home, flag, value):
    error = only_error_line(invoke(host(), home, "sessions", "export", "-", flag, value))
    assert flag in error and value in error


# ---------------------------------------------------------------- --lineage (X3)


def lineage_of_three(store: SessionStore) -> list[str]:
    root = make(store, title="saga", ended=False, text="part one")
    second = store.continue_after_compression(root)
    store.append_messages(second.id, [Message("user", "part two", timestamp=1e9)])
    third = store.continue_after_compression(second.id)
    store.append_messages(third.id, [Message("user", "part three", timestamp=1e9 + 1)])
    store.end_session(third.id, "user_exit")
    return [root, second.id, third.id]


def test_logical_lineage_exports_the_whole_compression_lineage_as_one_record(home):
    with open_home_store(home) as store:
        ids = lineage_of_three(store)
    result = invoke(
        host(), home, "sessions", "export", "-", "--session-id", "saga #3", "--lineage", "logical"
    )
    assert result.exit_code == 0, result.output
    [record] = [json.loads(x) for x in result.stdout.splitlines()]
    assert record["lineage"] == ids and record["session"]["id"] == ids[0]
    assert [m["content"] for m in record["messages"]] == [
        "part one 0", "part one 1", "part two", "part three",
    ]  # fmt: skip
    assert [m["session_id"] for m in record["messages"]][-2:] == ids[1:]
    assert record["session"]["end_reason"] == "user_exit"


def test_bulk_logical_lineage_exports_each_lineage_once(home, tmp_path):
    with open_home_store(home) as store:
        ids = lineage_of_three(store)
        loner = make(store, title="loner")
    result = invoke(
        host(), home, "sessions", "export", str(tmp_path), "-f", "md", "--source", "cli",
        "--lineage", "logical",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    entries = read_manifest(tmp_path)
    assert sorted(e["session_ids"] for e in entries) == sorted([ids, [loner]])
    [saga] = [e for e in entries if e["session_ids"] == ids]
    assert saga["lineage_ids"] == ids and saga["message_count"] == 4
    text = (tmp_path / saga["path"]).read_text(encoding="utf-8")
    assert f"## Continued in session {ids[2]}" in text


def test_single_lineage_exports_each_session_on_its_own(home):
    with open_home_store(home) as store:
        ids = lineage_of_three(store)
    result = invoke(host(), home, "sessions", "export", "-", "--title", "saga")
    assert [json.loads(x)["session"]["id"] for x in result.stdout.splitlines()] == ids


# ---------------------------------------------------------------- delegates


def test_children_hold_the_delegate_ids(home):
    with open_home_store(home) as store:
        parent = make(store, title="boss")
        child = make(store, parent_session_id=parent, parent_kind="delegate")
    result = invoke(host(), home, "sessions", "export", "-", "--session-id", parent)
    [record] = [json.loads(x) for x in result.stdout.splitlines()]
    assert record["children"] == [child]


# ---------------------------------------------------------------- --upload / --public


def test_upload_reaches_an_exporter_that_supports_it(home):
    uploader = RecordingExporter("share", supports_upload=True)
    plugin_host = host(("share", ExporterPlugin(uploader)))
    with open_home_store(home) as store:
        session_id = make(store)
    result = invoke(
        plugin_host, home, "sessions", "export", "-f", "share", "--session-id", session_id,
        "--upload", "--public",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert uploader.options is not None
    assert dict(uploader.options.extra) == {"upload": True, "public": True}


def test_upload_with_a_format_that_cannot_is_one_line(home):
    error = only_error_line(invoke(host(), home, "sessions", "export", "--upload"))
    assert "--format jsonl cannot --upload" in error


def test_public_without_upload_is_one_line(home):
    error = only_error_line(invoke(host(), home, "sessions", "export", "-", "--public"))
    assert "--public only applies to --upload" in error


def test_an_exporter_that_redacts_by_default_gets_redacted_false_with_no_redact(home):
    tracer = RecordingExporter("tracy", redact_by_default=True, stdout_for_single_session=True)
    plugin_host = host(("tracy", ExporterPlugin(tracer)))
    with open_home_store(home) as store:
        session_id = make(store)
    args = ("sessions", "export", "-f", "tracy", "--session-id", session_id, "--no-redact")
    result = invoke(plugin_host, home, *args)
    assert result.exit_code == 0, result.output
    assert tracer.options is not None and tracer.options.redacted is False
    assert result.stdout.startswith(session_id)  # one session, no OUTPUT: stdout


def test_latest_by_default_exports_only_the_most_recent_session(home):
    tracer = RecordingExporter(
        "tracy", exports_latest_by_default=True, stdout_for_single_session=True
    )
    plugin_host = host(("tracy", ExporterPlugin(tracer)))
    with open_home_store(home) as store:
        make(store, days_ago=3)
        newest = make(store, days_ago=1, ended=False)
    result = invoke(plugin_host, home, "sessions", "export", "-f", "tracy", "--no-redact")
    assert result.exit_code == 0, result.output
    assert [r.session.id for r in tracer.records] == [newest]
    assert tracer.options is not None and tracer.options.single_session


def test_yaml_front_matter_of_md_parses(home, tmp_path):
    with open_home_store(home) as store:
        session_id = make(store, title="plain", cwd="/tmp/x: y")
    invoke(
        host(), home, "sessions", "export", str(tmp_path), "-f", "md", "--session-id", session_id
    )
    [document] = tmp_path.glob("*.md")
    meta = yaml.safe_load(document.read_text(encoding="utf-8").split("---\n")[1])
    assert meta["cwd"] == "/tmp/x: y" and meta["message_count"] == 2


def test_bulk_exports_parents_before_their_delegates_whatever_their_activity(home):
    with open_home_store(home) as store:
        parent = make(store, title="long parent", days_ago=3)
        child = make(store, parent_session_id=parent, parent_kind="delegate", days_ago=2.5)
        store.append_messages(parent, [Message("user", "much later", timestamp=4e9)])
    result = invoke(host(), home, "sessions", "export", "-")
    assert [json.loads(x)["session"]["id"] for x in result.stdout.splitlines()] == [parent, child]


def test_a_parent_link_cycle_in_a_damaged_store_loses_no_session(tmp_path):
    home = tmp_path / "home"  # damaged through SQLite itself: this case is SQLite's
    with SessionStore.open(home) as store:
        first, second = make(store), make(store)
        store.connection.execute(
            "UPDATE sessions SET parent_session_id = ?, parent_kind = 'branch' WHERE id = ?",
            (second, first),
        )
        store.connection.execute(
            "UPDATE sessions SET parent_session_id = ?, parent_kind = 'branch' WHERE id = ?",
            (first, second),
        )
        store.connection.commit()
    result = invoke(host(), home, "sessions", "export", "-")
    assert result.exit_code == 0, result.output
    assert {json.loads(x)["session"]["id"] for x in result.stdout.splitlines()} == {first, second}


def test_a_file_as_output_of_a_per_session_bulk_export_is_one_line(home, tmp_path):
    with open_home_store(home) as store:
        make(store)
        make(store)
    existing = tmp_path / "notes.md"
    existing.write_text("mine")
    error = only_error_line(
        invoke(host(), home, "sessions", "export", str(existing), "-f", "md", "--source", "cli")
    )
    assert "give a directory" in error
    assert existing.read_text() == "mine"


class RefusingExporter:
    """An exporter whose remote destination refuses, as a plugin reports it."""

    name = "refusing"
    extension = "txt"
    description = "always refused"
    redact_by_default = False

    def export(self, sessions, sink, options):
        raise UserFacingError("the archive service refused the token")


def test_an_exporters_user_facing_error_is_one_line(home: Path, tmp_path: Path) -> None:
    with open_home_store(home) as store:
        session_id = make(store, title="one")
    result = invoke(
        host(("refusing", ExporterPlugin(RefusingExporter()))),
        home, "sessions", "export", str(tmp_path / "out.txt"), "-f", "refusing",
        "--session-id", session_id,
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "hermes: the refusing export failed: the archive service refused the token"
    )
