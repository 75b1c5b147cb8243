"""A small full-screen picker for the terminal: type to filter, arrows to move, Enter to choose.

Used wherever a command asks a person to choose among many things (``sessions browse``,
``sessions import`` bare). The rows come from a *source*: a function from the typed query to
the rows to show, called after every keystroke, so a source can filter a fixed list
(:func:`filter_rows`) or run a database search.

The picker only draws and reads keys; it knows nothing of sessions. Its state machine
(:class:`PickerState`) and its drawing (:func:`render`) are plain functions of their inputs,
tested without a terminal; :func:`pick` wires them to a raw-mode terminal.

Keys: printable text edits the query, Backspace deletes, Ctrl-U clears it; Up/Down (or
Ctrl-P/Ctrl-N), Page Up/Page Down, Home/End move; Enter chooses; Esc or Ctrl-C cancels. With
``multi=True``, Tab marks or unmarks the highlighted row and Ctrl-A marks every shown row;
Enter then returns the marked rows, or the highlighted one when none is marked. A picker may
also offer *actions*: other keys that choose the highlighted row for something else than Enter
does (``sessions browse``: Enter resumes, Tab shows); :func:`pick_action` says which was used.
"""

from __future__ import annotations

import codecs
import os
import select
import shutil
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO

__all__ = [
    "PickerRow",
    "PickerState",
    "RowSource",
    "display_width",
    "filter_rows",
    "is_interactive",
    "pick",
    "pick_action",
    "render",
    "truncate_to_width",
]


@dataclass(frozen=True, slots=True)
class PickerRow:
    """One choice: ``key`` is what :func:`pick` returns, ``cells`` are the columns shown."""

    key: str
    cells: tuple[str, ...]
    search_text: str = ""
    """Extra text :func:`filter_rows` matches besides the cells (e.g. a full path)."""


RowSource = Callable[[str], Sequence[PickerRow]]
"""The rows to show for a query (the empty string for "everything")."""


def filter_rows(rows: Sequence[PickerRow], query: str) -> list[PickerRow]:
    """The rows holding every word of ``query`` (case-insensitive), in their given order."""
    words = query.casefold().split()
    if not words:
        return list(rows)
    found = []
    for row in rows:
        haystack = " ".join((*row.cells, row.search_text)).casefold()
        if all(word in haystack for word in words):
            found.append(row)
    return found


def is_interactive() -> bool:
    """True when both standard input and output are terminals (a person can pick)."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


# -- text width ------------------------------------------------------------------------


def _char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Cc", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes (wide CJK characters count two)."""
    return sum(_char_width(char) for char in text)


def truncate_to_width(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` columns, ending in ``…`` when cut; control
    characters (newlines, escapes) become spaces so a row stays one line."""
    text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    if width <= 0:
        return ""
    if display_width(text) <= width:
        return text
    kept: list[str] = []
    used = 0
    for char in text:
        char_width = _char_width(char)
        if used + char_width > width - 1:
            break
        kept.append(char)
        used += char_width
    return "".join(kept) + "…"


def _pad(text: str, width: int) -> str:
    cut = truncate_to_width(text, width)
    return cut + " " * (width - display_width(cut))


# -- state -----------------------------------------------------------------------------


@dataclass(slots=True)
class PickerState:
    """The picker's state; :meth:`press` applies one key and says whether the picker is done."""

    source: RowSource
    multi: bool = False
    query: str = ""
    rows: list[PickerRow] = field(default_factory=list)
    cursor: int = 0
    marked: list[str] = field(default_factory=list)
    chosen: list[str] | None = None
    """Set when the picker ends: the chosen keys, or an empty list when cancelled."""
    page_size: int = 10
    actions: Mapping[str, str] = field(default_factory=dict)
    """Extra keys that choose the highlighted row, each with a label (``{"tab": "show"}``)."""
    enter_label: str = "choose"
    action: str | None = None
    """The key of :attr:`actions` that ended the picker, or None (Enter, or cancelled)."""

    def refresh(self) -> None:
        """Ask the source again for the current query and keep the cursor in range."""
        self.rows = list(self.source(self.query))
        self.cursor = max(0, min(self.cursor, len(self.rows) - 1))

    def press(self, key: str) -> bool:
        """Apply ``key`` (a character or a name like ``"up"``); True when the picker is done."""
        if key in ("esc", "ctrl-c"):
            self.chosen = []
        elif key == "enter":
            if self.multi and self.marked:
                self.chosen = list(self.marked)
            elif self.rows:
                self.chosen = [self.rows[self.cursor].key]
            else:
                return False
        elif key in self.actions and not self.multi:
            if not self.rows:
                return False
            self.chosen = [self.rows[self.cursor].key]
            self.action = key
        elif key in ("up", "ctrl-p"):
            self.cursor = max(0, self.cursor - 1)
        elif key in ("down", "ctrl-n"):
            self.cursor = min(max(0, len(self.rows) - 1), self.cursor + 1)
        elif key == "pageup":
            self.cursor = max(0, self.cursor - self.page_size)
        elif key == "pagedown":
            self.cursor = min(max(0, len(self.rows) - 1), self.cursor + self.page_size)
        elif key == "home":
            self.cursor = 0
        elif key == "end":
            self.cursor = max(0, len(self.rows) - 1)
        elif key == "tab" and self.multi and self.rows:
            row_key = self.rows[self.cursor].key
            if row_key in self.marked:
                self.marked.remove(row_key)
            else:
                self.marked.append(row_key)
            self.cursor = min(len(self.rows) - 1, self.cursor + 1)
        elif key == "ctrl-a" and self.multi:
            for row in self.rows:
                if row.key not in self.marked:
                    self.marked.append(row.key)
        elif key == "backspace":
            if self.query:
                self.query = self.query[:-1]
                self.cursor = 0
                self.refresh()
        elif key == "ctrl-u":
            self.query = ""
            self.cursor = 0
            self.refresh()
        elif len(key) == 1 and key.isprintable():
            self.query += key
            self.cursor = 0
            self.refresh()
        return self.chosen is not None


# -- drawing ---------------------------------------------------------------------------

_REVERSE = "\x1b[7m"
_DIM = "\x1b[2m"
_BOLD = "\x1b[1m"
_RESET = "\x1b[0m"


def _column_widths(
    header: Sequence[str], rows: Sequence[PickerRow], total: int, gutter: int
) -> list[int]:
    """Widths fitting ``total`` columns: every column as wide as its widest cell (capped),
    the last one taking what is left."""
    count = max([len(header), *(len(row.cells) for row in rows)], default=0)
    if count == 0:
        return []
    widths = [0] * count
    for cells in [tuple(header), *(row.cells for row in rows)]:
        for index, cell in enumerate(cells):
            widths[index] = max(widths[index], min(display_width(cell), 40))
    available = total - gutter - 2 * (count - 1)
    fixed = sum(widths[:-1])
    widths[-1] = max(8, available - fixed)
    overflow = sum(widths) - available
    index = count - 2
    while overflow > 0 and index >= 0:  # shrink the earlier columns when too narrow
        cut = min(overflow, max(0, widths[index] - 6))
        widths[index] -= cut
        overflow -= cut
        index -= 1
    return widths


def render(
    state: PickerState,
    *,
    title: str,
    header: Sequence[str] = (),
    width: int = 80,
    height: int = 24,
    color: bool = True,
) -> list[str]:
    """The screen's lines for ``state`` at the given terminal size."""

    def style(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    lines = [truncate_to_width(f"{title}  > {state.query}", width)]
    gutter = 4 if state.multi else 2
    widths = _column_widths(header, state.rows, width, gutter)
    if header:
        cells = "  ".join(_pad(cell, w) for cell, w in zip(header, widths, strict=False))
        lines.append(style(_BOLD, truncate_to_width(" " * gutter + cells, width)))
    visible = max(1, height - len(lines) - 1)
    state.page_size = visible
    first = max(0, state.cursor - visible + 1)
    for index in range(first, min(len(state.rows), first + visible)):
        row = state.rows[index]
        mark = ""
        if state.multi:
            mark = "● " if row.key in state.marked else "○ "
        pointer = "› " if index == state.cursor else "  "
        cells = "  ".join(_pad(cell, w) for cell, w in zip(row.cells, widths, strict=False))
        line = truncate_to_width(pointer + mark + cells, width)
        lines.append(style(_REVERSE, line) if index == state.cursor else line)
    if not state.rows:
        lines.append(style(_DIM, "  (nothing matches)"))
    extra = "".join(f" · {key.capitalize()} {label}" for key, label in state.actions.items())
    keys = f"↑/↓ move · Enter {state.enter_label}{extra} · Esc cancel"
    if state.multi:
        keys = "↑/↓ move · Tab mark · Ctrl-A mark all · Enter choose · Esc cancel"
    count = f"{len(state.rows)} shown"
    if state.multi and state.marked:
        count += f", {len(state.marked)} marked"
    lines.append(style(_DIM, truncate_to_width(f"{count} · {keys}", width)))
    return lines


# -- the terminal ----------------------------------------------------------------------

_SEQUENCES = {
    "\x1b[A": "up",
    "\x1b[B": "down",
    "\x1bOA": "up",
    "\x1bOB": "down",
    "\x1b[5~": "pageup",
    "\x1b[6~": "pagedown",
    "\x1b[H": "home",
    "\x1b[F": "end",
    "\x1b[1~": "home",
    "\x1b[4~": "end",
    "\x1bOH": "home",
    "\x1bOF": "end",
}
_CONTROLS = {
    "\r": "enter",
    "\n": "enter",
    "\t": "tab",
    "\x7f": "backspace",
    "\x08": "backspace",
    "\x03": "ctrl-c",
    "\x15": "ctrl-u",
    "\x01": "ctrl-a",
    "\x10": "ctrl-p",
    "\x0e": "ctrl-n",
}


class _KeyReader:
    """Reads keys from a raw-mode file descriptor, decoding UTF-8 and escape sequences."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""

    def _fill(self, timeout: float | None) -> bool:
        ready, _, _ = select.select([self._fd], [], [], timeout)
        if not ready:
            return False
        data = os.read(self._fd, 1024)
        if not data:
            raise EOFError
        self._pending += self._decoder.decode(data)
        return True

    def read(self) -> str:
        """The next key: a character, or a name (``up``, ``enter``, ``esc``…)."""
        while not self._pending:
            self._fill(None)
        if self._pending[0] == "\x1b":
            # A lone Esc or the start of a sequence: wait briefly for the rest.
            while len(self._pending) < 4 and self._fill(0.05):
                pass
            for sequence, name in _SEQUENCES.items():
                if self._pending.startswith(sequence):
                    self._pending = self._pending[len(sequence) :]
                    return name
            if len(self._pending) > 1 and self._pending[1] in "[O":
                # An unknown sequence: drop it up to its final byte.
                end = 2
                while end < len(self._pending) and not self._pending[end].isalpha():
                    end += 1
                self._pending = self._pending[end + 1 :]
                return ""
            self._pending = self._pending[1:]
            return "esc"
        char, self._pending = self._pending[0], self._pending[1:]
        return _CONTROLS.get(char, char)


def pick(
    source: RowSource,
    *,
    title: str,
    header: Sequence[str] = (),
    multi: bool = False,
    initial_query: str = "",
    output: TextIO | None = None,
) -> list[str]:
    """Let a person choose rows on the terminal; the chosen keys (empty when cancelled).

    Needs a terminal on standard input (see :func:`is_interactive`); draws on ``output``
    (standard output by default) in the alternate screen, which is restored on return.
    """
    state = PickerState(source=source, multi=multi, query=initial_query)
    return _run(state, title=title, header=header, output=output)


def pick_action(
    source: RowSource,
    *,
    title: str,
    actions: Mapping[str, str],
    enter_label: str = "choose",
    header: Sequence[str] = (),
    output: TextIO | None = None,
) -> tuple[str, str | None] | None:
    """Like :func:`pick` for one row, with extra keys: ``(row key, action key)`` where the
    action key is None for Enter, or one of ``actions`` (e.g. ``{"tab": "show"}``); None when
    cancelled."""
    state = PickerState(source=source, actions=dict(actions), enter_label=enter_label)
    chosen = _run(state, title=title, header=header, output=output)
    return (chosen[0], state.action) if chosen else None


def _run(
    state: PickerState, *, title: str, header: Sequence[str], output: TextIO | None
) -> list[str]:
    import termios
    import tty

    out = output or sys.stdout
    fd = sys.stdin.fileno()
    state.refresh()
    saved = termios.tcgetattr(fd)
    reader = _KeyReader(fd)
    out.write("\x1b[?1049h\x1b[?25l")  # alternate screen, hide the cursor
    try:
        tty.setraw(fd)
        while True:
            size = shutil.get_terminal_size((80, 24))
            lines = render(state, title=title, header=header, width=size.columns, height=size.lines)
            out.write("\x1b[H\x1b[2J" + "\r\n".join(lines))
            out.flush()
            try:
                key = reader.read()
            except EOFError:
                return []
            if key and state.press(key):
                return state.chosen or []
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        out.write("\x1b[?25h\x1b[?1049l")
        out.flush()
