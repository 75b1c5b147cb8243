"""The resume recap (SPEC R3): what is shown, how it is cut, and how it is drawn."""

from __future__ import annotations

from pathlib import Path

from hermes_hookspecs import Message, Session, ToolCall

from hermes_core.chat.recap import (
    build_recap,
    cut_text,
    minimal_notice,
    recap_panel,
    render_plain,
    tool_summary,
)


def user(text: str) -> Message:
    return Message("user", text)


def assistant(text: str, *calls: str) -> Message:
    return Message(
        "assistant", text, tool_calls=tuple(ToolCall(n, "{}", f"c{i}") for i, n in enumerate(calls))
    )


def test_user_messages_are_cut_at_300_characters() -> None:
    recap = build_recap([user("u" * 301), assistant("ok")])
    assert recap.lines[0].text == "u" * 300 + "…"
    assert build_recap([user("u" * 300)]).lines[0].text == "u" * 300


def test_assistant_messages_are_cut_at_200_characters_or_3_lines() -> None:
    long = build_recap([user("q"), assistant("a" * 250)]).lines[1].text
    assert long == "a" * 200 + "…"
    lines = build_recap([user("q"), assistant("one\ntwo\nthree\nfour\nfive")]).lines[1].text
    assert lines == "one\ntwo\nthree…"
    exact = build_recap([user("q"), assistant("one\ntwo\nthree")]).lines[1].text
    assert exact == "one\ntwo\nthree"


def test_tool_calls_collapse_to_a_count_with_their_names() -> None:
    messages = [
        user("look it up"),
        assistant("", "terminal", "web_search"),
        Message("tool", "file list…", tool_call_id="c0", tool_name="terminal"),
        Message("tool", "results…", tool_call_id="c1", tool_name="web_search"),
        assistant("", "terminal"),
        Message("tool", "more…", tool_call_id="c0", tool_name="terminal"),
        assistant("Found it."),
    ]
    recap = build_recap(messages)
    assert [line.role for line in recap.lines] == ["user", "assistant"]
    assert recap.lines[1].text == "Found it."
    assert recap.lines[1].tool_summary == "[3 tool calls: terminal, web_search]"
    assert render_plain(recap) == [
        "● look it up",
        "◆ Found it. [3 tool calls: terminal, web_search]",
    ]
    assert tool_summary([assistant("", "session_search")]) == "[1 tool call: session_search]"


def test_system_messages_tool_results_and_reasoning_are_hidden() -> None:
    messages = [
        Message("system", "You are Hermes. SECRET-SYSTEM"),
        user("hi"),
        Message("assistant", "hello", reasoning="SECRET-REASONING"),
        Message("tool", "SECRET-TOOL-OUTPUT", tool_call_id="x", tool_name="terminal"),
    ]
    shown = "\n".join(render_plain(build_recap(messages)))
    assert "SECRET" not in shown
    assert shown == "● hi\n◆ hello"


def test_only_the_last_ten_exchanges_show_with_a_count_of_the_rest() -> None:
    messages: list[Message] = []
    for number in range(1, 13):
        messages += [user(f"question {number}"), assistant(f"answer {number}")]
    messages.insert(0, Message("system", "prompt"))  # hidden, and not counted
    recap = build_recap(messages)
    assert recap.earlier_messages == 4
    plain = render_plain(recap)
    assert plain[0] == "... 4 earlier messages ..."
    assert plain[1] == "● question 3" and plain[-1] == "◆ answer 12"
    assert len(plain) == 21


def test_an_answer_before_any_user_message_still_shows() -> None:
    recap = build_recap([assistant("Welcome back."), user("thanks")])
    assert render_plain(recap) == ["◆ Welcome back.", "● thanks"]


def test_cut_text_strips_trailing_space_before_cutting() -> None:
    assert cut_text("  padded  \n\n", 300) == "padded"


def styled_characters(panel: object) -> list[tuple[str, str]]:
    """(style, character) of every character of the drawn panel, as prompt_toolkit reads it."""
    from prompt_toolkit.formatted_text import to_formatted_text

    return [(style, char) for style, text, *_ in to_formatted_text(panel) for char in text]


def panel_rows(panel: object) -> list[str]:
    from prompt_toolkit.formatted_text import to_plain_text

    return to_plain_text(panel).split("\n")  # type: ignore[arg-type]


def test_the_panel_is_dimmed_with_gold_user_and_green_assistant_marks() -> None:
    session = Session(id="20260101_101010_abcdef", source="cli", started_at=0.0, title="auth work")
    panel = recap_panel(session, build_recap([user("hi"), assistant("hello", "terminal")]), 100)
    rows = panel_rows(panel)
    assert rows[0].startswith("╭─ Resumed auth work (20260101_101010_abcdef) ─")
    assert rows[1].startswith("│ ● hi ") and rows[2].startswith("│ ◆ hello [1 tool call: terminal]")
    assert rows[-1] == "╰" + "─" * 98 + "╯"
    characters = styled_characters(panel)
    styles = {char: style.split() for style, char in characters if char in "●◆h["}
    assert set(styles["●"]) == {"#ffd700", "dim"}  # gold (xterm 220), dimmed
    assert set(styles["◆"]) == {"ansigreen", "dim"}
    assert "dim" in styles["h"]  # the text itself dimmed
    assert "italic" in styles["["]  # the tool-call summary
    assert all("dim" in style.split() for style, char in characters if char in "╭│╰─╮╯")


def test_the_panel_wraps_by_terminal_cells_and_every_row_is_the_width() -> None:
    session = Session(id="20260101_101010_abcdef", source="cli", started_at=0.0, title="日本語")
    text = "東京で会いましょう。" * 12 + " and some English words to wrap as well"
    rows = panel_rows(recap_panel(session, build_recap([user(text), assistant("a\nb")]), 40))
    from wcwidth import width

    assert {width(row) for row in rows} == {40}
    body = [row[2:-2].rstrip() for row in rows[1:-1]]
    assert "".join(body[:-2]).replace(" ", "") == "●" + cut_text(text, 300).replace(" ", "")
    assert body[-2:] == ["◆ a", "b"]  # the answer's own line breaks are kept


def test_control_characters_in_stored_text_never_reach_the_terminal() -> None:
    session = Session(id="20260101_101010_abcdef", source="cli", started_at=0.0, title="t\x1b[2J")
    said = [
        user("clear\x1b[2J\x07 this \x01\x1b]0;PWNED\x07\x02 \u202eevil"),
        assistant("ok\x9b2J", "tool\x1b[31m"),
    ]
    panel = recap_panel(session, build_recap(said), 100)
    drawn = styled_characters(panel)
    texts = "".join(char for _, char in drawn)
    for control in ("\x1b", "\x07", "\x01", "\x02", "\x9b", "\u202e"):
        assert control not in texts
    # \x01…\x02 would make prompt_toolkit send what is between them to the terminal as it is
    assert not [style for style, _ in drawn if "ZeroWidthEscape" in style]
    assert "clear^[[2J^G this ^A^[]0;PWNED^G^B <U+202E>evil" in texts
    assert "ok<U+009B>2J" in texts and "tool^[[31m" in texts
    assert "Resumed t^[[2J" in texts


def test_minimal_mode_is_one_line() -> None:
    session = Session(id="20260101_101010_abcdef", source="cli", started_at=0.0, message_count=4)
    line = minimal_notice(session)
    assert line == "↻ Resumed 20260101_101010_abcdef — 4 messages"


def test_the_recap_of_a_stored_session_reads_its_end_and_matches_the_whole(
    tmp_path: Path,
) -> None:
    from hermes_core.chat.recap import recap_of_session
    from hermes_core.store import SessionStore

    with SessionStore.open(tmp_path) as store:
        for exchanges in (0, 3, 10, 11, 25):
            session = store.create_session("cli")
            messages: list[Message] = [Message("assistant", "greeting before anyone spoke")]
            for number in range(exchanges):
                messages += [
                    Message("system", "ignored"),
                    user(f"question {number}"),
                    assistant("", "terminal"),
                    Message("tool", "output", tool_call_id="c0", tool_name="terminal"),
                    assistant(f"answer {number}"),
                ]
            store.append_messages(session.id, messages)
            assert recap_of_session(store, session.id) == build_recap(messages), exchanges
            newest = list(store.iter_messages_newest_first(session.id, roles=("user",)))
            assert [m.content for m in newest] == [
                f"question {n}" for n in reversed(range(exchanges))
            ]
            assert store.count_messages(session.id) == len(messages)
            assert store.count_messages(session.id, roles=("user", "assistant")) == (
                1 + 3 * exchanges
            )


def test_a_fresh_continuation_recaps_the_summary_it_was_seeded_with(tmp_path: Path) -> None:
    from hermes_core.agent.compression import summary_message
    from hermes_core.chat.recap import recap_of_session
    from hermes_core.store import SessionStore

    with SessionStore.open(tmp_path) as store:
        parent = store.create_session("cli", title="release plan")
        store.append_messages(parent.id, [user("plan v2"), assistant("freeze Friday")])
        seeded = store.continue_after_compression(parent.id)
        store.append_message(seeded.id, summary_message(parent.id, "We froze on Friday.", 1.0))
        recap = recap_of_session(store, seeded.id)
        assert recap.note == f"Continued from {parent.id}; the summary it starts from:"
        assert [(line.role, line.text) for line in recap.lines] == [
            ("summary", "We froze on Friday.")
        ]
        assert render_plain(recap)[-1] == "≡ We froze on Friday."
        drawn = recap_panel(seeded, recap, 80).value
        assert "(no messages yet)" not in drawn and "We froze on Friday." in drawn
        # A chain of fresh continuations: the summary where the chain was seeded.
        bare = store.continue_after_compression(seeded.id)
        recap = recap_of_session(store, bare.id)
        assert recap.note == f"Continued from {parent.id}; the summary it starts from:"
        # Without a summary (compressed by hand): the parent's last exchanges.
        other = store.create_session("cli")
        unsummarised = store.create_session(
            "cli", parent_session_id=parent.id, parent_kind="compression"
        )
        recap = recap_of_session(store, unsummarised.id)
        assert recap.note == f"Continued from {parent.id}; its last exchanges:"
        assert render_plain(recap)[1:] == ["● plan v2", "◆ freeze Friday"]
        # Any other empty session still says it has no messages.
        assert recap_of_session(store, other.id).lines == ()
        assert (
            "(no messages yet)" in recap_panel(other, recap_of_session(store, other.id), 80).value
        )
        # Once the continuation has its own exchanges, they are the recap.
        store.append_messages(seeded.id, [user("still Friday?"), assistant("yes")])
        recap = recap_of_session(store, seeded.id)
        assert recap.note == "" and render_plain(recap) == ["● still Friday?", "◆ yes"]
