"""``hermes sessions import``: paths, folders, ``--all``, bad input, and exit codes, through
typer's CliRunner on ``build_app`` with the Claude Code importer plugin."""

from __future__ import annotations

import os
import re
from pathlib import Path

import hermes_import_claude.plugin
import hermes_store_postgres.plugin
import pytest
from claude_helpers import (
    S21,
    SESSION,
    copy_tree,
    fingerprint,
    lines,
    prompt,
    reply,
    text,
    write,
)
from click.testing import Result
from postgres_cluster import open_home_store
from typer.testing import CliRunner

from hermes_core.cli.app import build_app
from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore

runner = CliRunner()


@pytest.fixture
def host() -> PluginHost:
    return PluginHost(
        load_entry_points=False,
        extra_plugins=[
            ("claude", hermes_import_claude.plugin),
            ("store-postgres", hermes_store_postgres.plugin),
        ],
    )


@pytest.fixture
def home(backend_home: Path) -> Path:
    """Every test runs with the home's store in SQLite, then in PostgreSQL."""
    return backend_home


def run(host: PluginHost, home: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(
        build_app(host), ["--home", str(home), "sessions", "import", *args], env=env
    )


def imported_ids(output: str) -> list[str]:
    return re.findall(r"✓ Imported Claude Code session as (\S+):", output)


def test_a_path_prints_the_new_id_a_resume_command_and_a_summary(
    host: PluginHost, home: Path, tmp_path: Path
) -> None:
    config = copy_tree(tmp_path)
    path = config / "projects" / S21.parent.name / S21.name
    result = run(host, home, str(path))
    assert result.exit_code == 0, result.output
    [session_id] = imported_ids(result.output)
    assert (
        f"✓ Imported Claude Code session as {session_id}: Imported from Claude Code: Why does "
        "the lexer choke on tabs? It fails on line 3.\n"
        f"  Continue it with:  hermes --resume {session_id}\n"
        "  with 1 subagent session(s) as delegates: "
    ) in result.output
    assert result.output.rstrip().endswith(
        "Summary: 1 imported, 0 appended, 0 unchanged, 0 with no conversation, "
        "0 malformed line(s) skipped, 0 unreadable. Sessions written: 2.\n"
        "Skipped input: 1 unknown record type."
    )
    with open_home_store(home) as store:
        assert store.get_session(session_id).end_reason == "imported"

    again = run(host, home, str(path))
    assert again.exit_code == 0
    assert f"= {path}: already imported as {session_id}" in again.output
    assert "0 imported, 0 appended, 1 unchanged" in again.output

    with open(path, "ab") as handle:
        handle.write(
            lines(prompt("u9", 9, "And spaces?"), reply("a9", 10, text("Fine."), message_id="m9"))
        )
    grown = run(host, home, str(path))
    assert grown.exit_code == 0
    assert f"↻ Appended 2 new message(s) to {session_id} from {path}" in grown.output
    assert f"  Continue it with:  hermes --resume {session_id}" in grown.output
    assert "0 imported, 1 appended, 0 unchanged" in grown.output


def test_a_folder_imports_every_log_under_it(host: PluginHost, home: Path, tmp_path: Path) -> None:
    config = copy_tree(tmp_path)
    before = fingerprint(config)
    result = run(host, home, str(config / "projects"))
    assert result.exit_code == 0, result.output
    # Three sessions, and agent-9c9c9c9c.jsonl: a subagent whose session's log is not there.
    assert len(imported_ids(result.output)) == 4
    assert result.output.count("imported without a parent") == 1
    assert result.output.count(": no conversation\n") == 3
    assert "Summary: 4 imported, 0 appended, 0 unchanged, 3 with no conversation" in result.output
    assert fingerprint(config) == before  # foreign files: same bytes, same times


def test_all_imports_what_discovery_finds_and_then_only_counts_it(
    host: PluginHost, home: Path, tmp_path: Path
) -> None:
    config = copy_tree(tmp_path)
    env = {"CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path / "nobody")}
    first = run(host, home, "--all", env=env)
    assert first.exit_code == 0, first.output
    # Three sessions, and agent-9c9c9c9c.jsonl: a subagent whose session's log is not there.
    assert len(imported_ids(first.output)) == 4
    second = run(host, home, "--all", env=env)
    assert second.exit_code == 0
    assert second.output == (
        "Summary: 0 imported, 0 appended, 4 unchanged, 3 with no conversation, "
        "0 malformed line(s) skipped, 0 unreadable.\n"
    )
    only = run(host, home, "--all", "--from", "claude", env=env)
    assert only.exit_code == 0 and "4 unchanged" in only.output


def test_all_with_nothing_to_find(host: PluginHost, home: Path, tmp_path: Path) -> None:
    result = run(host, home, "--all", env={"CLAUDE_CONFIG_DIR": str(tmp_path / "none")})
    assert result.exit_code == 0
    assert result.output.startswith("No sessions found to import.\n")


def test_bare_without_a_terminal_prints_a_hint_and_exits_2(host: PluginHost, home: Path) -> None:
    result = run(host, home)
    assert result.exit_code == 2
    assert "hermes: nothing to import without a terminal" in result.output
    assert "hermes sessions import --all" in result.output
    assert not (home / "state.db").exists()  # nothing was even opened


def test_malformed_lines_are_counted_in_the_summary(
    host: PluginHost, home: Path, tmp_path: Path
) -> None:
    data = (
        lines(prompt("u1", 1, "Hello"))
        + b"{oops\n\xff\xfe\n"
        + lines(reply("a1", 2, text("Hi."), message_id="m1"))
    )
    path = write(tmp_path / "claude" / "projects" / "p" / f"{SESSION}.jsonl", data)
    result = run(host, home, str(path))
    assert result.exit_code == 0
    assert (
        "1 imported, 0 appended, 0 unchanged, 0 with no conversation, 2 malformed line(s) skipped"
        in result.output
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "nope", "x.jsonl"], "hermes: no importer 'nope' (available: claude)"),
        (["--all", "x.jsonl"], "hermes: give PATHs or --all, not both"),
    ],
)
def test_usage_mistakes_are_one_line(
    host: PluginHost, home: Path, args: list[str], message: str
) -> None:
    result = run(host, home, *args)
    assert result.exit_code == 1
    assert result.output.strip() == message


def test_unreadable_paths_are_one_line_each_and_exit_1(
    host: PluginHost, home: Path, tmp_path: Path
) -> None:
    folder_named_like_a_log = tmp_path / "x.jsonl"
    folder_named_like_a_log.mkdir()
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "gone.jsonl")
    pipe = tmp_path / "pipe.jsonl"
    os.mkfifo(pipe)
    stranger = write(tmp_path / "notes.jsonl", b'{"hello": "world"}\n')
    result = run(
        host, home, str(tmp_path / "missing.jsonl"), str(dangling), str(folder_named_like_a_log),
        str(pipe), str(stranger),
    )  # fmt: skip
    assert result.exit_code == 1
    assert f"hermes: {tmp_path / 'missing.jsonl'}: cannot read: no such file\n" in result.output
    assert f"hermes: {dangling}: cannot read: No such file or directory\n" in result.output
    assert (
        f"hermes: {folder_named_like_a_log}: no log any importer reads was found under it "
        "(claude)\n"
    ) in result.output
    assert f"hermes: {pipe}: cannot read: not a regular file\n" in result.output
    assert (
        f"hermes: {stranger}: no installed importer recognises it (try --from NAME: claude)\n"
    ) in result.output
    assert (
        "0 imported, 0 appended, 0 unchanged, 0 with no conversation, 0 malformed line(s) skipped, 5 unreadable."
        in result.output
    )


def test_a_failure_next_to_a_success_exits_0(host: PluginHost, home: Path, tmp_path: Path) -> None:
    config = copy_tree(tmp_path)
    good = config / "projects" / S21.parent.name / S21.name
    result = run(host, home, str(good), str(tmp_path / "missing.jsonl"))
    assert result.exit_code == 0
    assert "1 imported" in result.output and "1 unreadable" in result.output


def test_from_forces_the_importer(host: PluginHost, home: Path, tmp_path: Path) -> None:
    path = write(
        tmp_path / "renamed.log",
        lines(prompt("u1", 1, "Named oddly"), reply("a1", 2, text("Still read."), message_id="m")),
    )
    assert run(host, home, str(path)).exit_code == 1  # not recognised by its name
    result = run(host, home, "--from", "claude", str(path))
    assert result.exit_code == 0
    assert "Imported from Claude Code: Named oddly" in result.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_without_read_permission_is_one_line(
    host: PluginHost, home: Path, tmp_path: Path
) -> None:
    path = write(tmp_path / f"{SESSION}.jsonl", lines(prompt("u1", 1, "Hi")))
    path.chmod(0)
    result = run(host, home, "--from", "claude", str(path))
    assert result.exit_code == 1
    assert f"hermes: {path}: cannot read: Permission denied" in result.output


def test_the_summary_counts_the_sessions_a_backup_file_gave(tmp_path: Path) -> None:
    import hermes_export_jsonl.plugin
    from hermes_hookspecs import Message

    jsonl = PluginHost(
        load_entry_points=False, extra_plugins=[("jsonl", hermes_export_jsonl.plugin)]
    )
    source_home, backup = tmp_path / "source", tmp_path / "backup.jsonl"
    with SessionStore.open(source_home) as store:
        for title in ("first", "second", "third"):
            session = store.create_session("cli", title=title)
            store.append_messages(session.id, [Message("user", f"about {title}")])
            store.end_session(session.id, "user_exit")
    exported = runner.invoke(
        build_app(jsonl), ["--home", str(source_home), "sessions", "export", str(backup)]
    )
    assert exported.exit_code == 0, exported.output
    restored = run(jsonl, tmp_path / "target", "--from", "jsonl", str(backup))
    assert restored.exit_code == 0, restored.output
    assert "Summary: 1 imported," in restored.output
    assert "Sessions written: 3." in restored.output
