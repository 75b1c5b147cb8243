"""A small full-screen picker for the terminal: type to filter, arrows to move, Enter to choose.

Used wherever a command asks a person to choose among many things (``sessions browse``,
``sessions import`` bare). The rows come from a *source*: a function from the typed query to
the rows to show, called after every keystroke, so a source can filter a fixed list
(:func:`filter_rows`) or run a database search.

The picker only draws and reads keys; it knows nothing of sessions. Its state machine
(:class:`PickerState`) and its drawing (:func:`render`) are plain functions of their inputs,
tested without a terminal; :func:`pick` runs them as a prompt_toolkit application, so it works
wherever prompt_toolkit does (POSIX terminals and the Windows console alike).

Keys: printable text edits the query (a bracketed paste too), Backspace deletes, Ctrl-U clears
it; Up/Down (or Ctrl-P/Ctrl-N), Page Up/Page Down, Home/End move; Enter chooses; Esc or Ctrl-C
cancels. With ``multi=True``, Tab marks or unmarks the highlighted row and Ctrl-A marks every
shown row; Enter then returns the marked rows, or the highlighted one when none is marked. A
picker may also offer *actions*: other keys that choose the highlighted row for something else
than Enter does (``sessions browse``: Enter resumes, Tab shows); :func:`pick_action` says which
was used. An action key is a key name :meth:`PickerState.press` knows (``"tab"``) or a control
key (``"ctrl-o"``).
"""

from __future__ import annotations

import asyncio
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TextIO

from .formatting import display_width, truncate_to_width

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

__all__ = [
    "LineStyle",
    "PickerRow",
    "PickerState",
    "RowSource",
    "display_width",
    "filter_rows",
    "is_interactive",
    "pick",
    "pick_action",
    "render",
    "styled_lines",
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

    def paste(self, text: str) -> None:
        """Add pasted ``text`` to the query in one step (line breaks become spaces)."""
        flat = "".join(" " if unicodedata.category(char) == "Cc" else char for char in text)
        if flat:
            self.query += flat
            self.cursor = 0
            self.refresh()

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

LineStyle = Literal["", "header", "cursor", "dim"]
"""How one screen line is shown: plain, the column header, the highlighted row, or hints."""

_ANSI = {"header": "\x1b[1m", "cursor": "\x1b[7m", "dim": "\x1b[2m"}
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


def _pad(text: str, width: int) -> str:
    cut = truncate_to_width(text, width)
    return cut + " " * (width - display_width(cut))


def styled_lines(
    state: PickerState,
    *,
    title: str,
    header: Sequence[str] = (),
    width: int = 80,
    height: int = 24,
) -> list[tuple[LineStyle, str]]:
    """The screen for ``state`` at the given terminal size, each line with its style.

    Sets ``state.page_size`` to the rows that fit, so Page Up/Down move by a screenful."""
    lines: list[tuple[LineStyle, str]] = [
        ("", truncate_to_width(f"{title}  > {state.query}", width))
    ]
    gutter = 4 if state.multi else 2
    widths = _column_widths(header, state.rows, width, gutter)
    if header:
        cells = "  ".join(_pad(cell, w) for cell, w in zip(header, widths, strict=False))
        lines.append(("header", truncate_to_width(" " * gutter + cells, width)))
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
        lines.append(("cursor" if index == state.cursor else "", line))
    if not state.rows:
        lines.append(("dim", "  (nothing matches)"))
    extra = "".join(f" · {key.capitalize()} {label}" for key, label in state.actions.items())
    keys = f"↑/↓ move · Enter {state.enter_label}{extra} · Esc cancel"
    if state.multi:
        keys = "↑/↓ move · Tab mark · Ctrl-A mark all · Enter choose · Esc cancel"
    count = f"{len(state.rows)} shown"
    if state.multi and state.marked:
        count += f", {len(state.marked)} marked"
    lines.append(("dim", truncate_to_width(f"{count} · {keys}", width)))
    return lines


def render(
    state: PickerState,
    *,
    title: str,
    header: Sequence[str] = (),
    width: int = 80,
    height: int = 24,
    color: bool = True,
) -> list[str]:
    """The screen's lines for ``state`` at the given terminal size (ANSI styles when
    ``color``)."""
    return [
        f"{_ANSI[style]}{text}{_RESET}" if color and style else text
        for style, text in styled_lines(
            state, title=title, header=header, width=width, height=height
        )
    ]


# -- the terminal ----------------------------------------------------------------------

# prompt_toolkit's key names → the names :meth:`PickerState.press` understands.
_KEY_NAMES = {
    "up": "up",
    "down": "down",
    "c-p": "ctrl-p",
    "c-n": "ctrl-n",
    "pageup": "pageup",
    "pagedown": "pagedown",
    "home": "home",
    "end": "end",
    "enter": "enter",  # Ctrl-M, what a terminal sends for Return
    "c-j": "enter",  # a bare line feed
    "tab": "tab",
    "backspace": "backspace",  # Ctrl-H, and the DEL byte most terminals send
    "c-u": "ctrl-u",
    "c-a": "ctrl-a",
    "escape": "esc",
    "c-c": "ctrl-c",
    "<sigint>": "ctrl-c",
}
_STYLES = {"": "", "header": "class:header", "cursor": "class:cursor", "dim": "class:dim"}
_ESCAPE_WAIT = 0.05
"""Seconds to wait after Esc for the rest of an escape sequence (prompt_toolkit's ttimeoutlen)."""


def _application(
    state: PickerState, *, title: str, header: Sequence[str], output: TextIO | None
) -> Application[list[str]]:
    """The prompt_toolkit application drawing ``state`` full-screen and feeding it keys."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import StyleAndTextTuples
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.keys import Keys
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl
    from prompt_toolkit.output import create_output
    from prompt_toolkit.styles import Style

    def screen() -> StyleAndTextTuples:
        size = application.output.get_size()
        fragments: StyleAndTextTuples = []
        lines = styled_lines(
            state, title=title, header=header, width=size.columns, height=size.rows
        )
        for number, (style, text) in enumerate(lines):
            if number:
                fragments.append(("", "\n"))
            fragments.append((_STYLES[style], text))
        return fragments

    def after(event: KeyPressEvent, step: Callable[[], bool]) -> None:
        try:
            done = step()
        except Exception as error:  # a failing source ends the picker with its error
            event.app.exit(exception=error)
            return
        if done:
            event.app.exit(result=state.chosen or [])
        else:
            # Redraw the whole screen, as a plain terminal picker does: left alone,
            # prompt_toolkit writes only the changed cells, and whoever reads the screen as
            # a stream (a terminal log, a screen reader, our pseudo-terminal tests) would
            # see "1" where the screen says "1 shown".
            event.app.renderer.erase(leave_alternate_screen=False)

    bound = dict(_KEY_NAMES)
    for name in state.actions:  # control-key actions need a binding of their own
        if name.startswith("ctrl-") and len(name) == 6:
            bound.setdefault(f"c-{name[-1]}", name)
    bindings = KeyBindings()
    for pt_key, name in bound.items():

        def named(event: KeyPressEvent, name: str = name) -> None:
            after(event, lambda: state.press(name))

        bindings.add(pt_key)(named)

    @bindings.add(Keys.Any)
    def typed(event: KeyPressEvent) -> None:
        pressed = event.key_sequence[0]
        if isinstance(pressed.key, Keys) or len(pressed.data) != 1:
            return  # an unbound special key (F5, Insert…): ignore it
        after(event, lambda: state.press(pressed.data))

    @bindings.add(Keys.BracketedPaste)
    def pasted(event: KeyPressEvent) -> None:
        def paste() -> bool:
            state.paste(event.data)
            return False

        after(event, paste)

    application: Application[list[str]] = Application(
        layout=Layout(Window(FormattedTextControl(screen, show_cursor=False))),
        key_bindings=bindings,
        style=Style.from_dict({"header": "bold", "cursor": "reverse", "dim": "ansibrightblack"}),
        full_screen=True,
        output=create_output(stdout=output) if output is not None else None,
    )
    application.ttimeoutlen = _ESCAPE_WAIT
    return application


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
    Callable from a running asyncio loop too (the chat): the picker then runs in a thread.
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
    state.refresh()
    application = _application(state, title=title, header=header, output=output)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        in_thread = False
    else:
        in_thread = True
    try:
        return application.run(in_thread=in_thread, set_exception_handler=False)
    except EOFError:  # the terminal went away
        return []
