"""Reading Claude Code files: bad lines, torn lines, cursors, discovery, sniffing."""

from __future__ import annotations

import json
import os
from pathlib import Path

from claude_helpers import (
    EMPTY,
    IMPORTER,
    PROJECTS,
    S20,
    S21,
    SESSION,
    SNAPSHOT_ONLY,
    SUMMARY_ONLY,
    copy_tree,
    lines,
    prompt,
    read_all,
    reply,
    text,
    write,
)
from hermes_hookspecs import Importer

GOOD = lines(
    prompt("u1", 1, "First question"), reply("a1", 2, text("First answer."), message_id="m1")
)
MORE = lines(
    prompt("u2", 3, "Second question"), reply("a2", 4, text("Second answer."), message_id="m2")
)


def test_the_importer_satisfies_the_protocol() -> None:
    assert isinstance(IMPORTER, Importer)
    assert (IMPORTER.name, IMPORTER.label) == ("claude", "Claude Code")


def test_files_with_no_conversation_yield_a_session_without_messages() -> None:
    for path in (EMPTY, SUMMARY_ONLY, SNAPSHOT_ONLY):
        [read] = read_all(path)
        assert read.messages == [], path.name
        assert read.session.warnings == {}


def test_malformed_lines_and_invalid_utf8_are_skipped_and_counted(tmp_path: Path) -> None:
    data = (
        lines(prompt("u1", 1, "Before the garbage"))
        + b'{"type": "user", "message": \n'
        + b"[1, 2, 3]\n"
        + b'{"type":"user","message":{"role":"user","content":"caf\xe9"}}\n'
        + b"\n"
        + lines(reply("a1", 2, text("After the garbage."), message_id="m1"))
    )
    [read] = read_all(write(tmp_path / f"{SESSION}.jsonl", data))
    assert read.transcript == [("user", "Before the garbage"), ("assistant", "After the garbage.")]
    assert read.session.warnings == {"malformed line": 2, "invalid UTF-8 line": 1}
    # The log ends in an answer that may still be growing: read again from its first line.
    answer = len(data) - len(lines(reply("a1", 2, text("After the garbage."), message_id="m1")))
    assert read.session.cursor == f"{answer}:1:1"
    assert read.session.open_tail == 1


def test_a_byte_order_mark_at_the_start_is_accepted(tmp_path: Path) -> None:
    [read] = read_all(write(tmp_path / f"{SESSION}.jsonl", b"\xef\xbb\xbf" + GOOD))
    assert read.transcript[0] == ("user", "First question")
    assert read.session.warnings == {}


def test_a_torn_last_line_is_left_for_the_next_import(tmp_path: Path) -> None:
    second = MORE.splitlines(keepends=True)
    torn = second[0][: len(second[0]) // 2]  # half of a line, no newline
    path = write(tmp_path / f"{SESSION}.jsonl", GOOD + torn)
    [read] = read_all(path)
    assert read.transcript == [("user", "First question"), ("assistant", "First answer.")]
    first_line = GOOD.index(b"\n") + 1
    assert read.session.cursor == f"{first_line}:1:1"  # the answer is read again next time
    assert read.session.warnings == {"incomplete last line (left for the next import)": 1}
    # The writer finishes the line: reading from the cursor gives the answer again (it could
    # have grown), then exactly the new turns.
    write(path, GOOD + MORE)
    [later] = read_all(path, read.session.cursor)
    assert later.transcript == [
        ("assistant", "First answer."),
        ("user", "Second question"),
        ("assistant", "Second answer."),
    ]
    assert (later.session.input_tokens, later.session.output_tokens) == (1, 1)  # once each
    assert later.session.warnings == {}
    assert later.session.title_hint is None  # an append keeps the session's title


def test_a_complete_last_line_without_a_newline_is_taken(tmp_path: Path) -> None:
    path = write(tmp_path / f"{SESSION}.jsonl", GOOD.rstrip(b"\n"))
    [read] = read_all(path)
    assert len(read.messages) == 2
    first_line = GOOD.index(b"\n") + 1
    assert read.session.cursor == f"{first_line}:1:1"


def test_a_cursor_past_the_end_or_nonsense_reads_nothing_new_or_everything(tmp_path: Path) -> None:
    path = write(tmp_path / f"{SESSION}.jsonl", GOOD)
    [past] = read_all(path, str(len(GOOD)))
    assert past.messages == []
    [whole] = read_all(path, "not-a-number")
    assert len(whole.messages) == 2


def test_files_are_only_read(tmp_path: Path) -> None:
    path = write(tmp_path / f"{SESSION}.jsonl", GOOD)
    os.chmod(path, 0o444)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    read_all(path)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


# ---------------------------------------------------------------------- sniff


def test_sniff_claims_claude_transcripts_only(tmp_path: Path) -> None:
    assert IMPORTER.sniff(S21)
    assert IMPORTER.sniff(SUMMARY_ONLY)
    assert IMPORTER.sniff(SNAPSHOT_ONLY)
    assert IMPORTER.sniff(EMPTY)  # empty, but where Claude Code keeps transcripts
    assert not IMPORTER.sniff(S21.parent / "agent-2b2b2b2b.jsonl")  # part of a session
    assert not IMPORTER.sniff(S21.with_suffix("") / "subagents" / "journal.jsonl")
    codex = write(
        tmp_path / "rollout.jsonl",
        json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
                    "payload": {"id": "x"}}).encode() + b"\n",
    )  # fmt: skip
    assert not IMPORTER.sniff(codex)
    assert not IMPORTER.sniff(write(tmp_path / "notes.jsonl", b'{"hello": 1}\n'))
    assert not IMPORTER.sniff(write(tmp_path / "empty.jsonl", b""))
    assert not IMPORTER.sniff(write(tmp_path / "chat.txt", GOOD))
    assert not IMPORTER.sniff(tmp_path / "missing.jsonl")


# ---------------------------------------------------------------------- discovery


def discovered(config: Path) -> list[str]:
    found = IMPORTER.discover({"CLAUDE_CONFIG_DIR": str(config), "HOME": "/nonexistent"})
    return sorted(str(c.path.relative_to(config / "projects")) for c in found)


def test_discovery_lists_session_files_and_orphaned_subagents_only(tmp_path: Path) -> None:
    """Subagent transcripts come with their session; only agent-9c9c9c9c.jsonl, whose
    session's transcript is not in its folder, is offered on its own."""
    config = copy_tree(tmp_path)
    assert discovered(config) == [
        "-home-ana-empty/44444444-aaaa-4bbb-8ccc-000000000004.jsonl",
        "-home-ana-empty/55555555-aaaa-4bbb-8ccc-000000000005.jsonl",
        "-home-ana-empty/66666666-aaaa-4bbb-8ccc-000000000006.jsonl",
        "-home-ana-src-parser/11111111-aaaa-4bbb-8ccc-000000000001.jsonl",
        "-home-ana-src-parser/22222222-aaaa-4bbb-8ccc-000000000002.jsonl",
        "-home-ana-src-parser/agent-9c9c9c9c.jsonl",
        "-home-ana-web/33333333-aaaa-4bbb-8ccc-000000000003.jsonl",
    ]


def test_discovery_uses_home_when_claude_config_dir_is_unset(tmp_path: Path) -> None:
    copy_tree(tmp_path)
    found = list(IMPORTER.discover({"HOME": str(tmp_path)}))
    assert len(found) == 7  # six sessions and an orphaned subagent
    assert all(c.importer == "claude" and c.ended_at for c in found)
    assert list(IMPORTER.discover({"HOME": str(tmp_path / "nobody")})) == []


def test_discovery_skips_links_leaving_the_root_and_non_regular_files(tmp_path: Path) -> None:
    config = copy_tree(tmp_path / "a")
    outside = write(tmp_path / "elsewhere" / f"{SESSION}.jsonl", GOOD)
    folder = config / "projects" / "-home-ana-web"
    (folder / "leak.jsonl").symlink_to(outside)
    (config / "projects" / "-linked-folder").symlink_to(outside.parent, target_is_directory=True)
    (folder / "inside.jsonl").symlink_to(folder / "33333333-aaaa-4bbb-8ccc-000000000003.jsonl")
    os.mkfifo(folder / "pipe.jsonl")
    (folder / "dir.jsonl").mkdir()
    (folder / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    names = discovered(config)
    assert "-home-ana-web/inside.jsonl" in names  # a link that stays inside is fine
    for skipped in ("leak", "pipe", "dir.jsonl", "dangling", "-linked-folder"):
        assert not any(skipped in name for name in names), skipped


def test_describe_fills_in_what_the_picker_shows() -> None:
    [candidate] = [c for c in IMPORTER.discover({"CLAUDE_CONFIG_DIR": str(PROJECTS.parent)})
                   if c.path == S21]  # fmt: skip
    assert candidate.title_guess is None  # discovery only lists and stats
    described = IMPORTER.describe(candidate)
    assert described.title_guess == "Why does the lexer choke on tabs? It fails on line 3."
    assert described.cwd == "/home/ana/src/parser"
    assert described.turn_count == 2
    assert described.started_at is not None and described.ended_at is not None
    other = IMPORTER.describe(next(c for c in IMPORTER.discover(
        {"CLAUDE_CONFIG_DIR": str(PROJECTS.parent)}) if c.path == S20))  # fmt: skip
    assert other.turn_count == 1
