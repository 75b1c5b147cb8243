"""The Claude Code importer's mapping rules, on the hand-written samples and small records."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_helpers import (
    S10,
    S20,
    S21,
    SESSION,
    lines,
    prompt,
    read_all,
    reply,
    text,
    write,
)


def test_2_1_session_keeps_the_conversation_and_leaves_the_harness_behind() -> None:
    main, _child = read_all(S21)
    assert main.transcript == [
        ("user", "Why does the lexer choke on tabs?\nIt fails on line 3."),
        (
            "assistant",
            "Let me look at the lexer.\n\n[ran tool: Read]\n[ran tool: Agent]\n\n"
            "Tabs are expanded after tokenizing; expand them first.",
        ),
        ("user", "[image]\n\nHere is the failing output"),
        ("assistant", "The screenshot shows the tab at column 9."),
    ]
    for leaked in (
        "PRIVATE REASONING",  # thinking
        "RAW TOOL OUTPUT",  # tool result
        "SUBAGENT REPORT",  # the subagent's answer as a tool result
        "INJECTED REMINDER",  # <system-reminder>
        "SECRET SKILL LIST",  # attachment
        "Caveat",  # isMeta caveat
        "ide_opened_file",
        "/clear",  # a slash command without arguments
        "/exit",
        "See ya",  # command output
        "API Error",  # synthetic record
        "iVBOR",  # image bytes
    ):
        assert leaked not in main.text, leaked


def test_2_1_session_metadata_comes_from_the_records() -> None:
    main, _child = read_all(S21)
    session = main.session
    assert session.foreign_id == "11111111-aaaa-4bbb-8ccc-000000000001"
    assert session.source == "claude-code"
    assert (
        session.title_hint
        == "Imported from Claude Code: Why does the lexer choke on tabs? It fails on line 3."
    )
    assert session.cwd == "/home/ana/src/parser"  # from the records, not the folder name
    assert session.git_branch == "fix/tabs"  # the latest branch seen
    assert session.model == "claude-opus-4-7"  # the synthetic record's model is not taken
    assert session.started_at is not None and session.ended_at is not None
    assert session.ended_at - session.started_at == pytest.approx(180.1)
    # Usage once per message.id (the last line of msg_01 wins), cache reads and writes
    # counted apart from input; the synthetic record counts nothing.
    assert session.input_tokens == 10 + 20 + 30 + 40
    assert session.cache_read_tokens == 1000 + 2000 + 3000 + 4000
    assert session.cache_write_tokens == 200
    assert session.output_tokens == 60 + 30 + 80 + 20
    assert session.warnings == {"unknown record type": 1}
    # It ends in an answer (which could still be growing): read again from its first line.
    offset, reported_in, reported_out, reported_read, reported_write = map(
        int, (session.cursor or "").split(":")
    )
    assert 0 < offset < S21.stat().st_size and session.open_tail == 1
    assert 0 < reported_in <= session.input_tokens and 0 < reported_out <= session.output_tokens
    assert (reported_read, reported_write) == (4000, 0)  # the last answer's cache reads
    assert session.parent_foreign_id is None


def test_2_1_subagent_becomes_a_child_session() -> None:
    _main, child = read_all(S21)
    assert child.session.parent_foreign_id == "11111111-aaaa-4bbb-8ccc-000000000001"
    assert child.session.foreign_id == "a0f1e2d3c4b5a6978"
    assert child.session.title_hint == "Claude Code subagent: Find tab handling"  # meta.json
    assert child.session.model == "claude-haiku-4-5"
    assert child.transcript == [
        ("user", "Search for tab handling"),
        ("assistant", "[ran tool: Grep]\n\nTabs are expanded late, in lexer.py line 3."),
    ]


def test_2_0_sibling_agent_file_is_a_child_and_summaries_are_not_turns() -> None:
    reads = read_all(S20)
    assert [r.session.foreign_id for r in reads] == [
        "22222222-aaaa-4bbb-8ccc-000000000002",
        "2b2b2b2b",  # agent-9c9c9c9c names another session: not this one's
    ]
    main, child = reads
    assert main.transcript == [
        ("user", "Add a test for tabs"),
        ("assistant", "[ran tool: Task]\n\nThe test is in tests/test_tabs.py."),
    ]
    assert main.session.title_hint == "Imported from Claude Code: Add a test for tabs"
    assert child.session.parent_foreign_id == main.session.foreign_id
    assert child.transcript == [
        ("user", "Write a tab test"),
        ("assistant", "Wrote tests/test_tabs.py."),
    ]


def test_1_0_inline_sidechains_become_one_child_each_not_mixed_into_the_parent() -> None:
    main, first, second = read_all(S10)
    assert main.transcript == [
        ("user", "/orchestrator READMEを更新してください"),
        ("assistant", "[ran tool: Task]\n[ran tool: Task]\n\nREADMEを更新しました。"),
    ]
    assert "COMMAND BODY" not in main.text  # the isMeta expansion of the command
    assert main.session.git_branch is None  # 1.0.x records have no gitBranch
    assert [r.transcript for r in (first, second)] == [
        [("user", "Inspect package.json"), ("assistant", "package.json uses React 19.")],
        [
            ("user", "Inspect the folders"),
            ("assistant", "[ran tool: Bash]\n\nTwo folders: src and tests."),
        ],
    ]
    assert {first.session.parent_foreign_id, second.session.parent_foreign_id} == {
        main.session.foreign_id
    }
    assert first.session.title_hint == "Claude Code subagent: Inspect package.json"


def test_a_first_prompt_longer_than_60_characters_is_cut_for_the_title(tmp_path: Path) -> None:
    long = "Please rewrite the whole tokenizer so that it handles tabs, spaces and newlines alike"
    path = write(
        tmp_path / f"{SESSION}.jsonl",
        lines(prompt("u1", 1, long), reply("a1", 2, text("Done."), message_id="m1")),
    )
    [read] = read_all(path)
    title = read.session.title_hint
    assert title is not None
    hint = title.removeprefix("Imported from Claude Code: ")
    assert len(hint) == 60 and hint.endswith("…") and long.startswith(hint[:-1])


def test_a_compaction_summary_is_left_out_when_the_earlier_turns_are_in_the_file(
    tmp_path: Path,
) -> None:
    summary = "This session is being continued from a previous conversation. Summary: tabs."
    path = write(
        tmp_path / f"{SESSION}.jsonl",
        lines(
            prompt("u1", 1, "Fix tabs"),
            reply("a1", 2, text("Fixed."), message_id="m1"),
            {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": "b",
                "parentUuid": None,
                "content": "Conversation compacted",
                "sessionId": SESSION,
            },
            prompt("u2", 3, summary, isCompactSummary=True, isVisibleInTranscriptOnly=True),
            prompt("u3", 4, "Now spaces"),
            reply("a2", 5, text("Done too."), message_id="m2"),
        ),
    )
    [read] = read_all(path)
    assert read.transcript == [
        ("user", "Fix tabs"),
        ("assistant", "Fixed."),
        ("user", "Now spaces"),
        ("assistant", "Done too."),
    ]


def test_a_compaction_summary_opening_a_file_is_kept_as_a_marked_note(tmp_path: Path) -> None:
    summary = "This session is being continued from a previous conversation. Summary: tabs."
    path = write(
        tmp_path / f"{SESSION}.jsonl",
        lines(
            prompt("u1", 1, summary, isCompactSummary=True),
            prompt("u2", 2, "Carry on"),
            reply("a1", 3, text("Carrying on."), message_id="m1"),
        ),
    )
    [read] = read_all(path)
    assert read.messages[0].content.startswith("(continued from an earlier Claude Code")
    assert summary in read.messages[0].content
    assert read.session.title_hint == "Imported from Claude Code: Carry on"


def test_unknown_record_types_are_counted_and_known_metadata_is_not(tmp_path: Path) -> None:
    path = write(
        tmp_path / f"{SESSION}.jsonl",
        lines(
            {"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION},
            {"type": "hologram", "sessionId": SESSION},
            {"type": "hologram", "sessionId": SESSION},
            prompt("u1", 1, "Hi"),
            reply("a1", 2, text("Hello."), message_id="m1"),
        ),
    )
    [read] = read_all(path)
    assert read.session.warnings == {"unknown record type": 2}
    assert read.transcript == [("user", "Hi"), ("assistant", "Hello.")]


def test_interruption_markers_and_tool_only_user_records_are_not_turns(tmp_path: Path) -> None:
    path = write(
        tmp_path / f"{SESSION}.jsonl",
        lines(
            prompt("u1", 1, "Run it"),
            reply(
                "a1",
                2,
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}},
                message_id="m1",
            ),
            prompt(
                "u2",
                3,
                [{"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True}],
            ),
            prompt("u3", 4, [text("[Request interrupted by user for tool use]")]),
            prompt("u4", 5, "Try again with sudo"),
            reply("a2", 6, {"type": "redacted_thinking", "data": "xx"}, message_id="m2"),
            reply("a3", 7, text("Ran it."), message_id="m2"),
        ),
    )
    [read] = read_all(path)
    assert read.transcript == [
        ("user", "Run it"),
        ("assistant", "[ran tool: Bash]"),
        ("user", "Try again with sudo"),
        ("assistant", "Ran it."),
    ]
    assert "boom" not in read.text


def test_usage_repeated_on_every_line_of_one_response_counts_once(tmp_path: Path) -> None:
    usage = {"input_tokens": 100, "output_tokens": 50}
    path = write(
        tmp_path / f"{SESSION}.jsonl",
        lines(
            prompt("u1", 1, "Go"),
            reply("a1", 2, text("One"), message_id="m1", usage=usage),
            reply(
                "a2",
                3,
                {"type": "tool_use", "id": "t", "name": "X", "input": {}},
                message_id="m1",
                usage=usage,
            ),
            reply(
                "a3",
                4,
                {"type": "tool_use", "id": "u", "name": "Y", "input": {}},
                message_id="m1",
                usage=usage,
            ),
        ),
    )
    [read] = read_all(path)
    assert (read.session.input_tokens, read.session.output_tokens) == (100, 50)
    assert read.transcript[-1] == ("assistant", "One\n\n[ran tool: X]\n[ran tool: Y]")


def test_a_prompt_typed_while_the_assistant_works_is_a_user_turn(tmp_path: Path) -> None:
    def queued(uuid: str, second: int, prompt_value: object, mode: str) -> dict[str, object]:
        record = prompt(uuid, second, "")
        del record["message"]
        record.update(type="attachment", attachment={
            "type": "queued_command", "prompt": prompt_value, "commandMode": mode,
        })  # fmt: skip
        return record

    path = write(
        tmp_path / f"{SESSION}.jsonl",
        lines(
            prompt("u1", 1, "Refactor the lexer"),
            reply("a1", 2, text("Starting."), message_id="m1"),
            queued("q1", 3, "also keep the old API", "prompt"),
            queued("q2", 4, "<task-notification>done</task-notification>", "task-notification"),
            reply("a2", 5, text("Kept the old API."), message_id="m2"),
        ),
    )
    [read] = read_all(path)
    assert read.transcript == [
        ("user", "Refactor the lexer"),
        ("assistant", "Starting."),
        ("user", "also keep the old API"),
        ("assistant", "Kept the old API."),
    ]


def test_a_background_task_notification_with_its_output_line_is_no_prompt(
    tmp_path: Path,
) -> None:
    # The shape Claude Code 2.1.39 writes when a background command ends (marot/spotter's
    # public logs, 258c7280…jsonl): the notification, then a line naming the output file.
    output = "/tmp/claude-1000/-home-bo-proj/tasks/b0be39e.output"
    notification = (
        "<task-notification>\n<task-id>b0be39e</task-id>\n"
        f"<output-file>{output}</output-file>\n<status>completed</status>\n"
        '<summary>Background command "Run the tests" completed (exit code 0)</summary>\n'
        "</task-notification>\n"
        f"Read the output file to retrieve the result: {output}"
    )
    path = write(
        tmp_path / f"{SESSION}.jsonl",
        lines(
            prompt("u1", 1, "Run the tests in the background"),
            reply("a1", 2, text("Started."), message_id="m1"),
            prompt("u2", 3, notification),
            reply("a2", 4, text("All green."), message_id="m2"),
            prompt("u3", 5, f"Read the output file to retrieve the result: {output}"),
            reply("a3", 6, text("Read it."), message_id="m3"),
        ),
    )
    [read] = read_all(path)
    assert read.transcript == [
        ("user", "Run the tests in the background"),
        ("assistant", "Started.\n\nAll green."),
        ("user", f"Read the output file to retrieve the result: {output}"),  # typed
        ("assistant", "Read it."),
    ]
