"""``hermes_core.terminal_text``: how stored text is shown on a terminal (DESIGN §9), and
``--json`` output beside it (``hermes_core.cli.echo.json_text``)."""

from __future__ import annotations

import json
import unicodedata

from hypothesis import example, given
from hypothesis import strategies as st

from hermes_core.cli.echo import json_text
from hermes_core.terminal_text import terminal_line, terminal_safe

BIDI_CONTROLS = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}

# Text rich in what matters here: controls, C1, bidi overrides, the stand-ins' own characters.
hostile_text = st.text(
    st.one_of(
        st.characters(),
        st.characters(min_codepoint=0, max_codepoint=0x9F),
        st.sampled_from([*sorted(BIDI_CONTROLS), "^", "[", "<", "U", "+", ">", "\u200d", "\u200f"]),
    )
)


def unsafe(char: str) -> bool:
    return (unicodedata.category(char) == "Cc" and char not in "\n\t") or char in BIDI_CONTROLS


@given(hostile_text)
@example("ansiword \x1b]0;PWNED\x07\x1b[2J\x00")
def test_no_control_character_but_newline_and_tab_survives(text: str) -> None:
    shown = terminal_safe(text)
    assert not [char for char in shown if unsafe(char)]
    assert shown.count("\n") == text.count("\n") and shown.count("\t") == text.count("\t")


@given(hostile_text)
def test_made_safe_twice_is_made_safe_once(text: str) -> None:
    assert terminal_safe(terminal_safe(text)) == terminal_safe(text)
    assert terminal_line(terminal_line(text)) == terminal_line(text)


@given(hostile_text, hostile_text)
def test_a_text_cut_in_two_shows_as_the_whole_does(first: str, second: str) -> None:
    """What a streamed answer relies on: an escape sequence split across two pieces is still
    shown harmlessly, and the same as when it arrives whole."""
    assert terminal_safe(first) + terminal_safe(second) == terminal_safe(first + second)


@given(hostile_text)
def test_text_without_controls_is_unchanged(text: str) -> None:
    clean = "".join(char for char in text if not unsafe(char))
    assert terminal_safe(clean) == clean


@given(hostile_text)
def test_one_line_has_no_line_break_or_tab(text: str) -> None:
    shown = terminal_line(text)
    assert "\n" not in shown and "\t" not in shown
    assert not [char for char in shown if unsafe(char)]


def test_the_convention_is_caret_notation_and_code_points() -> None:
    assert terminal_safe("ansiword \x1b]0;PWNED\x07\x1b[2J") == "ansiword ^[]0;PWNED^G^[[2J"
    assert terminal_safe("\x00\x01\x1f\x7f\r") == "^@^A^_^?^M"
    assert terminal_safe("\x9b31m \x9d0;x\x9c \x85") == "<U+009B>31m <U+009D>0;x<U+009C> <U+0085>"
    assert terminal_safe("if \u202eadmin\u2066") == "if <U+202E>admin<U+2066>"
    kept = "lines\nand\ttabs, 中文, עברית\u200f, 👩\u200d💻, [bold red]markup[/]"
    assert terminal_safe(kept) == kept
    assert terminal_line("a\nb\tc\x1b") == "a b c^["


@given(st.recursive(hostile_text, lambda inner: st.dictionaries(hostile_text, inner, max_size=3)))
def test_json_output_round_trips_exactly_and_holds_nothing_a_terminal_acts_on(
    payload: object,
) -> None:
    """``--json``: the same strings to any JSON reader, and no raw control character (JSON
    escapes C0 itself; ``json_text`` escapes DEL, C1 and bidi overrides too)."""
    for ensure_ascii in (False, True):
        text = json_text(payload, ensure_ascii=ensure_ascii)
        assert json.loads(text) == payload
        assert not [char for char in text if unsafe(char)]
