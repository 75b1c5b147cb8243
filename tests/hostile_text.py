"""Stored text that would act on a terminal, and how to tell from the bytes a pseudo-terminal
received that it did not (DESIGN §9: text from outside is shown harmlessly, issue 23).

The program's own styling escapes (SGR colours, cursor moves, the picker's alternate screen)
are fine; what must never reach the terminal is a control character that came from the
content. The payloads are built so the two can be told apart: the program never sends NUL,
BEL, a C1 control, a bidirectional override or an OSC/DCS/APC/PM/SOS string, and each ESC of
a payload sits right after text only the payload holds (``PWNED``, ``ansiword``).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from hermes_hookspecs import Message, ToolCall

from hermes_core.store import SessionStore

PAYLOAD = "ansiword \x1b]0;PWNED\x07\x1b[2J"
"""The reviewer's example: set the window title, then clear the screen."""
PAYLOAD_SHOWN = "ansiword ^[]0;PWNED^G^[[2J"
USER_TEXT = (
    f"{PAYLOAD} [bold red]not markup[/] c1\x9b31m bidi\u202eevil\u202c dcs\x1bPq\x1b\\ "
    "\x01\x1b]0;PWNED-ZW\x07\x02 nul\x00byte"
)
USER_TEXT_SHOWN = (
    f"{PAYLOAD_SHOWN} [bold red]not markup[/] c1<U+009B>31m bidi<U+202E>evil<U+202C> "
    "dcs^[Pq^[\\ ^A^[]0;PWNED-ZW^G^B nul^@byte"
)
ANSWER = "answer \x1b[31mPWNEDred\x1b[0m \x9d0;PWNED-C1\x9c done"
ANSWER_SHOWN = "answer ^[[31mPWNEDred^[[0m <U+009D>0;PWNED-C1<U+009C> done"
MODEL = "model\x1b]0;PWNED-M\x07"
MODEL_SHOWN = "model^[]0;PWNED-M^G"
TOOL = "term\x1b[2Jinal"
TOOL_SHOWN = "term^[[2Jinal"
TITLE = "T\x1b]0;PWNED-T\x07 [b]x[/b] [link=https://example.invalid]y[/link]"
"""A title as an older Hermes or another program may have stored it (this version strips
control characters from titles it is given, see ``hermes_core.store.titles``), with rich markup
that must print literally (a ``[link]`` read as markup would send an OSC 8 hyperlink)."""
TITLE_SHOWN = "T^[]0;PWNED-T^G [b]x[/b] [link=https://example.invalid]y[/link]"

_NEVER_FROM_THE_PROGRAM = re.compile(
    "[\x00\x07\x80-\x9f\u202a-\u202e\u2066-\u2069]"  # NUL, BEL, C1, bidi overrides
    "|\x1b[\\]P_^X]"  # OSC, DCS, APC, PM, SOS
    "|(?:PWNED[-A-Z0-9]*|ansiword )\x1b"  # a payload's own ESC, after its own text
    "|\x1b\\[31mPWNED|\x1b\\[2Jinal"
)
_OWN_ESCAPES = re.compile(r"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def store_hostile_session(home: Path) -> str:
    """A session of hostile text stored through the library (the chat's and the gateway's
    way in), its title as an older store may hold it; returns its id."""
    with SessionStore.open(home) as store:
        session = store.create_session("cli", model=MODEL, title="placeholder")
        store.append_message(session.id, Message("user", USER_TEXT), input_tokens=50)
        store.append_message(
            session.id,
            Message("assistant", ANSWER, tool_calls=(ToolCall(TOOL, "{}", "call_1"),)),
            output_tokens=20,
        )
        store.append_message(
            session.id,
            Message("tool", f"out{PAYLOAD}put", tool_name=TOOL, tool_call_id="call_1"),
        )
    with sqlite3.connect(home / "state.db") as connection:
        connection.execute("UPDATE sessions SET title = ? WHERE id = ?", (TITLE, session.id))
    connection.close()
    return session.id


@dataclass(frozen=True)
class Screen:
    """What a pseudo-terminal received: ``raw`` as sent, ``visible`` its text without the
    program's own escape sequences and carriage returns."""

    raw: str

    @property
    def visible(self) -> str:
        return _OWN_ESCAPES.sub("", self.raw).replace("\r", "")


def received(data: bytes) -> Screen:
    """The bytes a terminal received, checked to be UTF-8 with nothing hostile in them."""
    screen = Screen(data.decode("utf-8"))
    leaks = [m.group() for m in _NEVER_FROM_THE_PROGRAM.finditer(screen.raw)]
    assert not leaks, f"control sequences from stored text reached the terminal: {leaks!r}"
    return screen
