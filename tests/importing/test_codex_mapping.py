"""What comes along from a Codex CLI rollout (SPEC I3): the mapping rules, both formats."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from codex_helpers import (
    ENVELOPE_SAMPLE,
    LEGACY_SAMPLE,
    SESSION_ID,
    agent_event,
    assistant_item,
    line,
    meta,
    read_one,
    tokens,
    tool_call,
    user_event,
    user_item,
    write_rollout,
)


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


LEAP_PROMPT = (
    "The tide table for 29 February is wrong; leap years are not handled in predict.py. "
    "Please fix it and add a test."
)


def test_envelope_rollout_becomes_a_clean_transcript() -> None:
    found = read_one(ENVELOPE_SAMPLE)
    assert found.transcript == [
        ("user", LEAP_PROMPT + "\n[image]"),
        (
            "assistant",
            "I'll look at how predict.py computes day numbers.\n\n"
            "[ran tool: shell_command]\n[ran tool: apply_patch]\n[ran tool: shell]\n\n"
            "Fixed: predict.py now uses 366 days in leap years, and test_predict.py covers "
            "29 February.",
        ),
        ("user", "Thanks! Now commit it."),
        ("assistant", "[ran tool: shell_command]\n\nCommitted as 9b1d3e2 on fix/leap-years."),
    ]
    assert all(message.tool_calls == () for message in found.messages)


def test_envelope_rollout_metadata_comes_from_its_own_records() -> None:
    session = read_one(ENVELOPE_SAMPLE).session
    assert session.foreign_id == "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert session.source == "codex-cli"
    # the replayed header of another thread (second line) is ignored
    assert session.cwd == "/home/ana/src/tide-tables"
    assert session.git_branch == "fix/leap-years"
    assert session.model == "gpt-5.2-codex"  # the latest turn_context
    assert session.started_at == utc("2026-03-14T08:30:00")
    assert session.ended_at == utc("2026-03-14T08:31:03.500")
    # cumulative totals: the repeated token_count event is not counted twice
    # Codex's input (25,000) includes its cached input (20,000), stored as cache reads.
    assert (session.input_tokens, session.output_tokens) == (5000, 900)
    assert (session.cache_read_tokens, session.cache_write_tokens) == (20000, 0)
    assert session.title_hint == (
        "Imported from Codex CLI: The tide table for 29 February is wrong; leap years are not…"
    )
    assert len(session.title_hint.removeprefix("Imported from Codex CLI: ")) == 60
    assert session.warnings == {}
    # Read again from the last prompt's line next time, 25000/900 (20000 cached) reported
    # already: the totals there, then the totals reported, each with their cached input.
    offset, *counts = map(int, (session.cursor or "").split(":"))
    assert 0 < offset < ENVELOPE_SAMPLE.stat().st_size and counts[-3:] == [25000, 900, 20000]
    assert len(counts) == 6
    assert session.open_tail > 0
    assert session.parent_foreign_id is None and session.snapshot is None


def test_message_times_are_the_records_times() -> None:
    messages = read_one(ENVELOPE_SAMPLE).messages
    assert [m.timestamp for m in messages] == [
        utc("2026-03-14T08:30:01.100"),
        utc("2026-03-14T08:30:04"),
        utc("2026-03-14T08:31:00.100"),
        utc("2026-03-14T08:31:02"),
    ]


def test_reasoning_instructions_and_tool_output_stay_behind() -> None:
    for sample in (ENVELOPE_SAMPLE, LEGACY_SAMPLE):
        text = "\n".join(content for _, content in read_one(sample).transcript)
        for left_behind in (
            "SECRET-REASONING-MARKER",
            "RAW-TOOL-OUTPUT-MARKER",
            "gAAAAB",
            "environment_context",
            "AGENTS.md",
            "permissions instructions",
            "user_instructions",
            "Always answer in English",
            "Begin Patch",
            "base64",
        ):
            assert left_behind not in text, (sample.name, left_behind)


def test_legacy_bare_rollout_becomes_a_clean_transcript() -> None:
    found = read_one(LEGACY_SAMPLE)
    assert found.transcript == [
        ("user", "Why does `weather --units metric` still print Fahrenheit?"),
        (
            "assistant",
            "[ran tool: shell]\n[ran tool: shell]\n\n"
            "The flag is parsed but cli.py line 42 overrides it with 'imperial'.",
        ),
        ("user", "Please remove that override."),
        ("assistant", "Done: the override is gone."),
    ]
    session = found.session
    assert session.foreign_id == "5f0c2a8e-9b1d-4c3e-a7f6-2d8e4b6c1a90"
    assert session.cwd == "/Users/lena/code/weather-cli"  # from <environment_context>
    assert session.git_branch == "main"
    assert session.model is None
    started = utc("2025-05-07T15:24:21.512")
    assert session.started_at == started
    # bare lines carry no times: messages take the header's, the end is the file's mtime
    assert {m.timestamp for m in found.messages} == {started}
    assert session.ended_at == LEGACY_SAMPLE.stat().st_mtime
    assert session.title_hint == (
        "Imported from Codex CLI: Why does `weather --units metric` still print Fahrenheit?"
    )
    assert session.warnings == {}


def test_user_and_agent_message_duplicates_are_emitted_once_in_either_order(
    tmp_path: Path,
) -> None:
    path = write_rollout(
        tmp_path,
        meta(),
        user_item("first question", 1),
        user_event("first question", 2),
        agent_event("first answer", 3),
        assistant_item("first answer", 4),
        user_event("second question", 5),
        user_item("second question", 6),
        assistant_item("second answer", 7),
        agent_event("second answer", 8),
        assistant_item("second answer", 9),  # said again: a real repeat, kept
    )
    assert read_one(path).transcript == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
        ("assistant", "second answer\n\nsecond answer"),
    ]


def test_the_event_text_wins_over_a_wrapped_response_item(tmp_path: Path) -> None:
    path = write_rollout(
        tmp_path,
        meta(),
        user_item("## My request for Codex:\nrename the module", 1),
        user_event("rename the module, please", 2),
        agent_event("Renamed.", 3),
    )
    assert read_one(path).transcript == [
        ("user", "rename the module, please"),
        ("assistant", "Renamed."),
    ]


def test_files_mentioned_in_the_ide_come_along_after_the_typed_request(tmp_path: Path) -> None:
    wrapped = (
        "# Context from my IDE setup:\n\n## Open tabs:\n- parser.py: src/parser.py\n\n"
        "## Files mentioned by the user:\n\n"
        "## parser.py: /home/ana/app/src/parser.py\n\n"
        "### notes.md: docs/notes.md (lines 3-9)\n\n"
        "## codex-clipboard-0e37.png: /tmp/codex-clipboard-0e37.png\n\n"
        "## My request for Codex:\nwhy does the parser reject tabs?\n"
    )
    path = write_rollout(
        tmp_path, meta(), user_item(wrapped, 1), user_event(wrapped, 2), agent_event("Tabs.", 3)
    )
    assert read_one(path).transcript == [
        (
            "user",
            "why does the parser reject tabs?\n\nFiles mentioned:\n"
            "- /home/ana/app/src/parser.py\n- docs/notes.md (lines 3-9)\n"
            "- /tmp/codex-clipboard-0e37.png",
        ),
        ("assistant", "Tabs."),
    ]


def test_developer_and_system_messages_are_skipped(tmp_path: Path) -> None:
    path = write_rollout(
        tmp_path,
        meta(),
        user_item("You are a careful reviewer.", 1, role="developer"),
        user_item("system text", 2, role="system"),
        user_event("review this diff", 3),
        agent_event("Looks good.", 4),
    )
    assert read_one(path).transcript == [("user", "review this diff"), ("assistant", "Looks good.")]


def test_injected_context_parts_are_dropped_from_a_mixed_user_message(tmp_path: Path) -> None:
    content = [
        {"type": "input_text", "text": "<environment_context><cwd>/x</cwd></environment_context>"},
        {"type": "input_text", "text": "<skills_instructions>use skills</skills_instructions>"},
        {"type": "input_text", "text": "<some_new_context>later tag</some_new_context>"},
        {"type": "input_text", "text": "what does <b> mean in HTML?"},
        {"type": "input_image", "image_url": None},
    ]
    path = write_rollout(
        tmp_path,
        meta(),
        line("response_item", {"type": "message", "role": "user", "content": content}, 1),
        assistant_item("Bold.", 2),
    )
    assert read_one(path).transcript == [
        ("user", "what does <b> mean in HTML?\n[image]"),
        ("assistant", "Bold."),
    ]


def test_every_kind_of_tool_call_is_a_note_and_each_call_counts_once(tmp_path: Path) -> None:
    items = [
        {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c1"},
        {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin", "call_id": "c2"},
        {"type": "local_shell_call", "call_id": "c3", "action": {"command": ["ls"]}},
        {"type": "web_search_call", "action": {"type": "search", "query": "tides"}},
        {"type": "function_call_output", "call_id": "c1", "output": "OUTPUT-MARKER"},
    ]
    mcp_end = {
        "type": "mcp_tool_call_end",
        "call_id": "c4",
        "invocation": {"server": "docs", "tool": "lookup", "arguments": {}},
    }
    repeat_end = {"type": "mcp_tool_call_end", "call_id": "c1", "invocation": {}}
    path = write_rollout(
        tmp_path,
        meta(),
        user_event("do things", 1),
        *(line("response_item", item, 2 + i) for i, item in enumerate(items)),
        line("event_msg", mcp_end, 10),
        line("event_msg", repeat_end, 11),
        tool_call("exec_command", "c1", 12),  # the same call written again
        agent_event("Done.", 13),
    )
    found = read_one(path)
    assert found.transcript[1] == (
        "assistant",
        "[ran tool: exec_command]\n[ran tool: apply_patch]\n[ran tool: shell]\n"
        "[ran tool: web_search]\n[ran tool: mcp__docs__lookup]\n\nDone.",
    )


def test_images_become_a_short_placeholder(tmp_path: Path) -> None:
    payload = {
        "type": "user_message",
        "message": "what is in these?",
        "images": ["data:image/png;base64," + "A" * 5000],
        "local_images": ["/tmp/screenshot.png"],
    }
    path = write_rollout(
        tmp_path, meta(), line("event_msg", payload, 1), agent_event("Two charts.", 2)
    )
    found = read_one(path)
    assert found.transcript[0] == ("user", "what is in these?\n[image]\n[image]")
    assert "AAAA" not in found.messages[0].content


def test_the_header_matching_the_file_name_wins_over_replayed_ones(tmp_path: Path) -> None:
    other = "0195b000-9999-7999-8999-999999999999"
    path = write_rollout(
        tmp_path,
        meta(other, cwd="/parent/thread"),
        user_event("parent question", 1),
        agent_event("parent answer", 2),
        meta(SESSION_ID, cwd="/child/thread", second=3),
        meta(other, cwd="/parent/again", second=4),
        user_event("child question", 5),
        agent_event("child answer", 6),
    )
    session = read_one(path).session
    assert session.foreign_id == SESSION_ID
    assert session.cwd == "/child/thread"


def test_without_an_id_in_the_name_the_first_header_is_the_thread(tmp_path: Path) -> None:
    path = write_rollout(
        tmp_path,
        meta("0195b000-aaaa-7aaa-8aaa-aaaaaaaaaaaa", cwd="/first"),
        meta("0195b000-bbbb-7bbb-8bbb-bbbbbbbbbbbb", cwd="/second"),
        user_event("hello", 1),
        name="exported-session.jsonl",
    )
    session = read_one(path).session
    assert (session.foreign_id, session.cwd) == ("0195b000-aaaa-7aaa-8aaa-aaaaaaaaaaaa", "/first")


def test_token_totals_that_start_again_are_added_not_lost(tmp_path: Path) -> None:
    path = write_rollout(
        tmp_path,
        meta(),
        user_event("q", 1),
        tokens(1000, 100, 2),
        tokens(1000, 100, 3),
        tokens(3000, 250, 4),
        tokens(500, 20, 5),  # a new process on the same thread counts from zero
        tokens(800, 40, 6),
        line("event_msg", {"type": "token_count", "info": None}, 7),
    )
    session = read_one(path).session
    assert (session.input_tokens, session.output_tokens) == (3800, 290)


def test_unknown_record_types_are_skipped_and_counted(tmp_path: Path) -> None:
    path = write_rollout(
        tmp_path,
        meta(),
        line("future_record", {"x": 1}, 1),
        line("response_item", {"type": "hologram_call"}, 2),
        line("world_state", {"full": True}, 3),
        line("event_msg", {"type": "some_new_event"}, 4),
        user_event("still read", 5),
    )
    found = read_one(path)
    assert found.transcript == [("user", "still read")]
    assert found.session.warnings == {"unknown record type": 2}


def test_a_long_first_message_makes_a_60_character_title(tmp_path: Path) -> None:
    words = "word " * 40
    path = write_rollout(tmp_path, meta(), user_event(f"  {words}\n\nmore  ", 1))
    title = read_one(path).session.title_hint
    assert title is not None
    text = title.removeprefix("Imported from Codex CLI: ")
    assert len(text) == 60 and text.endswith("…") and "\n" not in text


def test_sample_lines_are_all_valid_json() -> None:
    for sample in (ENVELOPE_SAMPLE, LEGACY_SAMPLE):
        for raw in sample.read_text(encoding="utf-8").splitlines():
            assert isinstance(json.loads(raw), dict)


PARENT_ID = "0195b000-aaaa-7aaa-8aaa-aaaaaaaaaaaa"


def subagent_meta(source: object, **extra: str) -> str:
    payload = {"id": SESSION_ID, "cwd": "/work/demo", "source": source, **extra}
    return line("session_meta", payload)


def test_a_subagent_thread_names_the_thread_it_worked_for(tmp_path: Path) -> None:
    spawned = {"subagent": {"thread_spawn": {"parent_thread_id": PARENT_ID, "depth": 1}}}
    for header in (
        subagent_meta(spawned),
        subagent_meta({"subagent": "review"}, parent_thread_id=PARENT_ID.upper()),
    ):
        path = write_rollout(tmp_path, header, user_event("check the diff", 1))
        assert read_one(path).session.parent_foreign_id == PARENT_ID
    # a fork is a conversation of its own; so is a thread started by a person
    for header in (
        subagent_meta("cli", forked_from_id=PARENT_ID),
        subagent_meta("cli", parent_thread_id=PARENT_ID),
    ):
        path = write_rollout(tmp_path, header, user_event("check the diff", 1))
        assert read_one(path).session.parent_foreign_id is None


def test_a_resumed_subagent_read_belongs_to_the_session_it_was_imported_as(
    tmp_path: Path,
) -> None:
    spawned = {"subagent": {"thread_spawn": {"parent_thread_id": PARENT_ID}}}
    path = write_rollout(tmp_path, subagent_meta(spawned), user_event("one", 1))
    first = read_one(path)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(user_event("two", 2))
    assert read_one(path, first.session.cursor).session.parent_foreign_id is None
