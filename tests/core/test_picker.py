"""The terminal picker: its state machine and drawing as plain functions, then the real thing
driven through a pseudo-terminal."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pexpect
import pytest

from hermes_core.cli.picker import (
    PickerRow,
    PickerState,
    display_width,
    filter_rows,
    render,
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
    assert truncate_to_width("two\nlines\x1b[31m", 40) == "two lines [31m"


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
