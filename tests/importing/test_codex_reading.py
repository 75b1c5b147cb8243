"""Reading rollouts as files: cursors on growing files, bad lines, read-only access."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from codex_helpers import (
    ENVELOPE_SAMPLE,
    LEGACY_SAMPLE,
    agent_event,
    fingerprint,
    meta,
    read_all,
    read_one,
    tokens,
    user_event,
    user_item,
    write_rollout,
)
from hermes_import_codex.importer import CodexImporter


def test_a_grown_file_resumes_after_the_cursor_with_only_the_new_turns(tmp_path: Path) -> None:
    path = write_rollout(
        tmp_path, meta(), user_event("one", 1), agent_event("reply one", 2), tokens(100, 10, 3)
    )
    first = read_one(path)
    assert first.transcript == [("user", "one"), ("assistant", "reply one")]
    # The last prompt and its answer may still grow: the next read starts at the prompt's
    # line (no tokens before it), 100/10 reported already; it yields those 2 messages again.
    one = len(meta().encode())
    assert first.session.cursor == f"{one}:0:0:100:10"
    assert first.session.open_tail == 2

    with path.open("a", encoding="utf-8") as handle:
        handle.write(user_event("two", 4) + agent_event("reply two", 5) + tokens(250, 30, 6))
    second = read_one(path, first.session.cursor)
    assert second.transcript == [
        ("user", "one"), ("assistant", "reply one"), ("user", "two"), ("assistant", "reply two")
    ]  # fmt: skip
    session = second.session
    assert session.foreign_id == first.session.foreign_id
    assert session.cwd == "/work/demo"  # the header lies before the cursor: read again
    assert session.title_hint is None  # the title belongs to the first import
    assert (session.input_tokens, session.output_tokens) == (150, 20)  # only what was added
    two = one + len(
        (user_event("one", 1) + agent_event("reply one", 2) + tokens(100, 10, 3)).encode()
    )
    assert session.cursor == f"{two}:100:10:250:30"
    assert session.started_at == first.session.started_at

    again = read_one(path, session.cursor)  # nothing new: the last turn again, no tokens
    assert again.transcript == [("user", "two"), ("assistant", "reply two")]
    assert (again.session.input_tokens, again.session.output_tokens) == (0, 0)


def test_a_torn_last_line_waits_for_the_next_read(tmp_path: Path) -> None:
    whole = user_event("two", 4)
    path = write_rollout(tmp_path, meta(), user_event("one", 1), agent_event("reply", 2))
    complete_size = path.stat().st_size
    with path.open("a", encoding="utf-8") as handle:
        handle.write(whole[:25])  # a write in progress
    first = read_one(path)
    assert first.transcript == [("user", "one"), ("assistant", "reply")]
    one = len(meta().encode())
    assert first.session.cursor == str(one)  # the last turn is read again next time
    assert first.session.warnings == {"incomplete last line (left for the next import)": 1}

    with path.open("a", encoding="utf-8") as handle:
        handle.write(whole[25:])
    second = read_one(path, first.session.cursor)
    assert second.transcript == [("user", "one"), ("assistant", "reply"), ("user", "two")]
    assert second.session.warnings == {}
    assert second.session.cursor == str(complete_size)  # where "two" begins


def test_a_complete_last_line_without_a_newline_is_read(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, meta(), user_event("only", 1).rstrip("\n"))
    found = read_one(path)
    assert found.transcript == [("user", "only")]
    assert found.session.cursor == str(len(meta().encode()))  # read again: it may be answered
    assert found.session.warnings == {}


def test_malformed_lines_and_invalid_utf8_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2026-04-01T10-00-00-0195b000-1111-7222-8333-444455556666.jsonl"
    path.write_bytes(
        meta().encode()
        + b"{not json at all\n"
        + b"[1, 2, 3]\n"
        + b'"a string"\n'
        + b"\n   \n"
        + user_event("caf\u00e9 ok", 1).encode()
        + b'{"timestamp":"2026-04-01T08:00:02.000Z","type":"event_msg","payload":'
        + b'{"type":"user_message","message":"bad \xff\xfe bytes"}}\n'
        + agent_event("still here", 3).encode()
    )
    found = read_one(path)
    assert found.transcript == [("user", "café ok"), ("assistant", "still here")]
    assert found.session.warnings == {"malformed line": 3, "invalid UTF-8 line": 1}
    prompt_line = path.read_bytes().index(b'"user_message", "message": "caf')
    assert found.session.cursor == str(path.read_bytes().rindex(b"\n", 0, prompt_line) + 1)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\n\n",
        meta().encode(),
        (meta() + user_item("You are helpful.", 1, role="developer")).encode(),
        (meta() + user_item("<environment_context><cwd>/x</cwd></environment_context>")).encode(),
        b"{broken\n",
    ],
    ids=["empty", "blank", "header-only", "instructions-only", "context-only", "garbage"],
)
def test_a_file_without_conversation_yields_nothing(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "rollout-2026-04-01T10-00-00-0195b000-1111-7222-8333-444455556666.jsonl"
    path.write_bytes(content)
    assert read_all(path) == []


def test_reading_leaves_the_foreign_file_unchanged(tmp_path: Path) -> None:
    for sample in (ENVELOPE_SAMPLE, LEGACY_SAMPLE):
        before = fingerprint(sample)
        read_all(sample)
        CodexImporter().sniff(sample)
        assert fingerprint(sample) == before
    # a file the importer could not write to even if it tried
    path = write_rollout(tmp_path, meta(), user_event("hi", 1))
    path.chmod(0o444)
    before = fingerprint(path)
    assert read_one(path).transcript == [("user", "hi")]
    assert fingerprint(path) == before


def test_the_file_is_closed_once_the_messages_are_read(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, meta(), user_event("hi", 1), agent_event("hello", 2))
    fd_dir = Path("/proc/self/fd")
    if not fd_dir.exists():
        pytest.skip("no /proc/self/fd on this system")

    def open_on_path() -> int:
        return sum(1 for fd in fd_dir.iterdir() if os.path.realpath(fd) == str(path))

    sessions = CodexImporter().read(path)
    session = next(sessions)
    assert open_on_path() == 1
    list(session.messages)
    assert open_on_path() == 0
    assert list(sessions) == []


def test_unreadable_inputs_raise_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_all(tmp_path / "missing.jsonl")
    with pytest.raises(IsADirectoryError):
        read_all(tmp_path)


def test_a_cursor_it_did_not_give_means_the_whole_file(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, meta(), user_event("hi", 1))
    for foreign in ("offset-twelve", "1:2", "-5", ""):
        assert read_one(path, foreign).transcript == [("user", "hi")], foreign


def test_a_cursor_past_the_end_of_a_shrunk_file_reads_nothing(tmp_path: Path) -> None:
    path = write_rollout(tmp_path, meta(), user_event("hi", 1))
    assert read_all(path, str(path.stat().st_size + 100)) == []


def test_a_long_rollout_yields_every_turn_in_order(tmp_path: Path) -> None:
    turns = 3000
    lines = [meta()]
    for turn in range(turns):
        lines += [user_event(f"question {turn}", 1), agent_event(f"answer {turn} " + "x" * 500, 2)]
    path = write_rollout(tmp_path, *lines)
    session = next(CodexImporter().read(path))
    count = 0
    for message in session.messages:
        count += 1
        if count == 2:
            assert message.content.startswith("answer 0 ")
    assert count == 2 * turns
    last = len("".join(lines[:-2]).encode())  # where the last question begins
    assert session.cursor == str(last) and session.open_tail == 2
