"""The terminal picker: its state machine and drawing as plain functions, then the
prompt_toolkit application fed real key bytes through a pipe, then the real thing driven
through a pseudo-terminal."""

from __future__ import annotations

import ast
import asyncio
import io
import sys
import textwrap
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pexpect
import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput, Output
from prompt_toolkit.output.vt100 import Vt100_Output

from hermes_core.cli.picker import (
    PickerRow,
    PickerState,
    display_width,
    filter_rows,
    pick,
    pick_action,
    render,
    styled_lines,
    truncate_to_width,
)

ROWS = [
    PickerRow("a1", ("2026-11-30", "claude", "Fix the parser")),
    PickerRow("b2", ("2026-11-29", "codex", "Write the importer"), search_text="/src/importer"),
    PickerRow("c3", ("2026-11-28", "claude", "量子纠缠 notes")),
]


def state(multi: bool = False) -> PickerState:
    picker = PickerState(source=lambda query: filter_rows(ROWS, query), multi=multi)
    picker.refresh()
    return picker


def type_text(picker: PickerState, text: str) -> None:
    for char in text:
        picker.press(char)


def test_filter_rows_needs_every_word_in_any_cell_or_search_text() -> None:
    assert [row.key for row in filter_rows(ROWS, "claude")] == ["a1", "c3"]
    assert [row.key for row in filter_rows(ROWS, "CLAUDE parser")] == ["a1"]
    assert [row.key for row in filter_rows(ROWS, "src/importer")] == ["b2"]
    assert [row.key for row in filter_rows(ROWS, "纠缠")] == ["c3"]
    assert filter_rows(ROWS, "nothing-like-this") == []
    assert filter_rows(ROWS, "   ") == ROWS


def test_typing_filters_and_enter_chooses_the_highlighted_row() -> None:
    picker = state()
    type_text(picker, "claude")
    assert [row.key for row in picker.rows] == ["a1", "c3"]
    picker.press("down")
    assert picker.press("enter")
    assert picker.chosen == ["c3"]


def test_backspace_and_ctrl_u_widen_the_filter_again() -> None:
    picker = state()
    type_text(picker, "codexx")
    assert picker.rows == []
    assert not picker.press("enter"), "Enter with nothing shown does not end the picker"
    picker.press("backspace")
    assert [row.key for row in picker.rows] == ["b2"]
    picker.press("ctrl-u")
    assert picker.query == "" and len(picker.rows) == 3


def test_cursor_stays_in_range() -> None:
    picker = state()
    picker.press("up")
    assert picker.cursor == 0
    for _ in range(10):
        picker.press("down")
    assert picker.cursor == 2
    picker.press("home")
    assert picker.cursor == 0
    picker.press("end")
    assert picker.cursor == 2
    picker.press("pageup")
    assert picker.cursor == 0


@pytest.mark.parametrize("key", ["esc", "ctrl-c"])
def test_cancel_chooses_nothing(key: str) -> None:
    picker = state()
    assert picker.press(key)
    assert picker.chosen == []


def test_multi_marks_with_tab_and_returns_marked_rows_in_order() -> None:
    picker = state(multi=True)
    picker.press("tab")  # marks a1, moves to b2
    picker.press("down")  # c3
    picker.press("tab")
    assert picker.press("enter")
    assert picker.chosen == ["a1", "c3"]


def test_multi_ctrl_a_marks_every_shown_row_and_tab_unmarks() -> None:
    picker = state(multi=True)
    type_text(picker, "claude")
    picker.press("ctrl-a")
    assert picker.marked == ["a1", "c3"]
    picker.press("tab")  # the cursor is on a1: unmark it
    assert picker.marked == ["c3"]


def test_multi_without_marks_returns_the_highlighted_row() -> None:
    picker = state(multi=True)
    picker.press("down")
    picker.press("enter")
    assert picker.chosen == ["b2"]


def test_render_shows_query_header_rows_and_a_key_line() -> None:
    picker = state()
    type_text(picker, "claude")
    lines = render(
        picker, title="Sessions", header=("date", "tool", "title"), width=60, color=False
    )
    assert lines[0] == "Sessions  > claude"
    assert "date" in lines[1] and "title" in lines[1]
    assert lines[2].startswith("› 2026-11-30")
    assert "Fix the parser" in lines[2]
    assert "量子纠缠" in lines[3]
    assert lines[-1].startswith("2 shown")
    assert all(display_width(line) <= 60 for line in lines)


def test_render_scrolls_to_keep_the_cursor_visible_on_a_small_screen() -> None:
    many = [PickerRow(str(i), (f"row {i}",)) for i in range(50)]
    picker = PickerState(source=lambda query: filter_rows(many, query))
    picker.refresh()
    for _ in range(30):
        picker.press("down")
    lines = render(picker, title="t", width=40, height=8, color=False)
    assert len(lines) <= 8
    assert any(line.startswith("› row 30") for line in lines)


def test_render_says_when_nothing_matches() -> None:
    picker = state()
    type_text(picker, "zzz")
    assert any("(nothing matches)" in line for line in render(picker, title="t", color=False))


def test_truncate_counts_wide_characters_and_flattens_control_characters() -> None:
    assert truncate_to_width("abc", 5) == "abc"
    assert truncate_to_width("abcdef", 4) == "abc…"
    cut = truncate_to_width("量子纠缠量子纠缠", 7)
    assert display_width(cut) <= 7 and cut.endswith("…")
    assert truncate_to_width("two\nlines\x1b[31m", 40) == "two lines^[[31m"
    hostile = "a\x00b\x07c\x9bd\u202ee\tf\rg"
    assert truncate_to_width(hostile, 80) == "a^@b^Gc<U+009B>d<U+202E>e f^Mg"
    assert display_width(hostile) == len("a^@b^Gc<U+009B>d<U+202E>e f^Mg")
    assert truncate_to_width("\x1b]0;PWNED\x07", 6) == "^[]0;…"


def test_styled_lines_mark_the_header_the_highlighted_row_and_the_hints() -> None:
    picker = state()
    lines = styled_lines(picker, title="Sessions", header=("date", "tool", "title"), width=60)
    assert [style for style, _ in lines] == ["", "header", "cursor", "", "", "dim"]
    assert render(picker, title="Sessions", header=("date", "tool", "title"), width=60)[2] == (
        "\x1b[7m" + lines[2][1] + "\x1b[0m"
    )


def test_paste_adds_to_the_query_in_one_step_with_line_breaks_as_spaces() -> None:
    calls: list[str] = []

    def source(query: str) -> list[PickerRow]:
        calls.append(query)
        return filter_rows(ROWS, query)

    picker = PickerState(source=source)
    picker.refresh()
    picker.paste("fix\nthe")
    assert picker.query == "fix the"
    assert calls == ["", "fix the"]
    assert [row.key for row in picker.rows] == ["a1"]


# -- the prompt_toolkit application, keys sent as a terminal sends them ------------------


@contextmanager
def terminal(output: Output | None = None) -> Iterator[PipeInput]:
    """A pipe standing in for the keyboard; :func:`pick` reads it and draws on ``output``."""
    with (
        create_pipe_input() as keyboard,
        create_app_session(input=keyboard, output=output or DummyOutput()),
    ):
        yield keyboard


WATCHDOG_SECONDS = 15.0


def run_pick(keys: str, *, multi: bool = False, rows: Sequence[PickerRow] = ROWS) -> list[str]:
    """What :func:`pick` returns after ``keys``. Should the keys not end the picker, a watchdog
    closes the keyboard and the test fails instead of hanging."""
    fired: list[bool] = []

    with terminal() as keyboard:
        keyboard.send_text(keys)
        watchdog = threading.Timer(WATCHDOG_SECONDS, lambda: (fired.append(True), keyboard.close()))
        watchdog.start()
        try:
            chosen = pick(lambda query: filter_rows(rows, query), title="Pick", multi=multi)
        finally:
            watchdog.cancel()
    assert not fired, f"the picker was still open after {keys!r}"
    return chosen


DOWN, UP = "\x1b[B", "\x1b[A"


@pytest.mark.parametrize(
    ("keys", "chosen"),
    [
        ("\r", ["a1"]),
        ("\n", ["a1"]),
        (DOWN + "\r", ["b2"]),
        ("\x1bOB\x1bOB\r", ["c3"]),  # application-mode arrows
        (DOWN + DOWN + UP + "\r", ["b2"]),
        ("\x0e\x0e\x10\r", ["b2"]),  # Ctrl-N, Ctrl-N, Ctrl-P
        ("\x1b[6~\r", ["c3"]),  # Page Down
        ("\x1b[6~\x1b[5~\r", ["a1"]),  # Page Down, Page Up
        ("\x1b[F\r", ["c3"]),  # End
        ("\x1b[4~\x1b[1~\r", ["a1"]),  # End, Home (the other encodings)
        ("\x1bOF\x1b[H\r", ["a1"]),
        ("claude" + DOWN + "\r", ["c3"]),
        ("纠缠\r", ["c3"]),
        ("codexx\r\x7f\r", ["b2"]),  # Enter on nothing shown does nothing; DEL deletes
        ("codexx\x08\r", ["b2"]),  # Ctrl-H deletes too
        ("zzz\x15\x1b[F\r", ["c3"]),  # Ctrl-U clears the query
        ("\x1b[200~the\nparser\x1b[201~\r", ["a1"]),  # a bracketed paste
        ("\x1b[15~\x1b[2~\r", ["a1"]),  # F5 and Insert are ignored, not typed
        ("\x1b", []),
        ("claude\x1b", []),
        ("\x03", []),
    ],
)
def test_keys_through_prompt_toolkit(keys: str, chosen: list[str]) -> None:
    assert run_pick(keys) == chosen


@pytest.mark.parametrize(
    ("keys", "chosen"),
    [
        ("\t" + DOWN + "\t\r", ["a1", "c3"]),  # Tab marks and moves down
        ("\t\t\x1b[H\t\r", ["b2"]),  # Tab again unmarks
        ("claude\x01\r", ["a1", "c3"]),  # Ctrl-A marks every shown row
        ("claude\x01\t\r", ["c3"]),
        (DOWN + "\r", ["b2"]),  # nothing marked: the highlighted row
        ("\t\t\x1b", []),
    ],
)
def test_multi_keys_through_prompt_toolkit(keys: str, chosen: list[str]) -> None:
    assert run_pick(keys, multi=True) == chosen


@pytest.mark.parametrize(
    ("keys", "chosen"),
    [
        (DOWN + "\t", ("b2", "tab")),
        ("claude" + DOWN + "\x0f", ("c3", "ctrl-o")),  # a control-key action
        ("\r", ("a1", None)),
        ("zzz\t\x15\t", ("a1", "tab")),  # an action on nothing shown does nothing
        ("\x1b", None),
    ],
)
def test_action_keys_through_prompt_toolkit(
    keys: str, chosen: tuple[str, str | None] | None
) -> None:
    with terminal() as keyboard:
        keyboard.send_text(keys)
        result = pick_action(
            lambda query: filter_rows(ROWS, query),
            title="Sessions",
            actions={"tab": "show", "ctrl-o": "open"},
            enter_label="resume",
        )
    assert result == chosen


def test_tab_and_ctrl_a_do_not_mark_in_a_single_choice_picker() -> None:
    assert run_pick("\t\x01\r") == ["a1"]


def test_the_keyboard_going_away_chooses_nothing() -> None:
    with terminal() as keyboard:
        keyboard.send_text("clau")
        keyboard.close()
        assert pick(lambda query: filter_rows(ROWS, query), title="Pick") == []


def test_a_failing_source_ends_the_picker_with_its_error() -> None:
    def source(query: str) -> list[PickerRow]:
        if query == "bo":
            raise RuntimeError("the index is gone")
        return filter_rows(ROWS, query)

    with terminal() as keyboard:
        keyboard.send_text("bom")
        with pytest.raises(RuntimeError, match="the index is gone"):
            pick(source, title="Pick")


def test_pick_works_from_inside_a_running_event_loop() -> None:
    async def chat() -> list[str]:
        return run_pick(DOWN + "\r")

    assert asyncio.run(chat()) == ["b2"]


def test_the_screen_drawn_through_prompt_toolkit_shows_every_redraw_whole() -> None:
    screen = io.StringIO()
    output = Vt100_Output(screen, lambda: Size(rows=10, columns=60), term="xterm")
    with terminal(output) as keyboard:
        keyboard.send_text("claude" + DOWN + "\r")
        chosen = pick(
            lambda query: filter_rows(ROWS, query),
            title="Sessions",
            header=("date", "tool", "title"),
        )
    assert chosen == ["c3"]
    drawn = screen.getvalue()
    assert "\x1b[?1049h" in drawn and drawn.rstrip().endswith("\x1b[?25h")  # alternate screen
    assert "Sessions  > claude" in drawn
    assert "3 shown · ↑/↓ move · Enter choose · Esc cancel" in drawn
    assert "2 shown · ↑/↓ move" in drawn  # the status line rewritten whole, not as "2"
    assert "› 2026-11-28  claude  量子纠缠 notes" in drawn


def test_the_core_needs_no_posix_only_terminal_modules() -> None:
    core = Path(__file__).resolve().parents[2] / "hermes_core"
    found = []
    for module in core.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            found += [f"{module.name}: {n}" for n in names if n in ("termios", "tty")]
    assert found == []


SCRIPT = textwrap.dedent(
    """
    import sys
    from hermes_core.cli.picker import PickerRow, filter_rows, pick

    rows = [PickerRow(f"key-{i}", (f"2026-11-{i:02d}", f"Session #{i}")) for i in range(1, 30)]
    multi = sys.argv[1] == "multi"
    chosen = pick(lambda q: filter_rows(rows, q), title="Pick one", header=("date", "title"),
                  multi=multi)
    print("CHOSEN=" + ",".join(chosen))
    """
)


def spawn(tmp_path: Path, mode: str) -> pexpect.spawn:
    script = tmp_path / "pick.py"
    script.write_text(SCRIPT, encoding="utf-8")
    return pexpect.spawn(
        sys.executable,
        [str(script), mode],
        dimensions=(20, 80),
        encoding="utf-8",
        timeout=15,
    )


def test_real_terminal_type_move_and_choose(tmp_path: Path) -> None:
    child = spawn(tmp_path, "single")
    child.expect("Pick one")
    child.send("#2")
    child.expect("Session #29")
    child.send("\x1b[B")  # down: from 2 to 20
    child.send("\r")
    child.expect(r"CHOSEN=(\S*)")
    assert child.match.group(1) == "key-20"
    child.expect(pexpect.EOF)


def test_real_terminal_escape_cancels(tmp_path: Path) -> None:
    child = spawn(tmp_path, "single")
    child.expect("Pick one")
    child.send("\x1b")
    child.expect(r"CHOSEN=(\S*)")
    assert child.match.group(1) == ""
    child.expect(pexpect.EOF)


def test_real_terminal_multi_select(tmp_path: Path) -> None:
    child = spawn(tmp_path, "multi")
    child.expect("Pick one")
    child.send("\t")
    child.send("\t")
    child.expect("2 marked")
    child.send("\r")
    child.expect(r"CHOSEN=(\S*)")
    assert child.match.group(1) == "key-1,key-2"
    child.expect(pexpect.EOF)


def test_an_action_key_chooses_the_highlighted_row_and_says_which_key() -> None:
    picker = PickerState(
        source=lambda query: filter_rows(ROWS, query), actions={"tab": "show"}, enter_label="resume"
    )
    picker.refresh()
    picker.press("down")
    assert picker.press("tab")
    assert picker.chosen == [ROWS[1].key] and picker.action == "tab"
    lines = render(picker, title="Sessions", color=False)
    assert lines[-1].endswith("↑/↓ move · Enter resume · Tab show · Esc cancel")
    plain = PickerState(source=lambda query: filter_rows(ROWS, query), actions={"tab": "show"})
    plain.refresh()
    assert plain.press("enter") and plain.action is None
