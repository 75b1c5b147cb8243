"""Stored and foreign text made harmless on a terminal (DESIGN §9).

Messages, titles, file names and error texts come from models, gateway users, imported logs
and backups. Written to a terminal as they are, their control characters would act: ``ESC ] 0;
… BEL`` sets the window title, ``ESC [ 2 J`` clears the screen, a carriage return lets text
overwrite its own line, a NUL or C1 byte confuses the terminal, and a bidirectional override
shows characters in another order than they are stored ("Trojan Source").
:func:`terminal_safe` is the one place that decides how such text is shown; everything the
command line and the chat print for people goes through it (``--json`` and exports do not:
they keep the text exactly).

The convention is the one ``less`` and ``cat -v`` use, so it reads the same as in a pager:

- C0 controls other than line feed and tab, and DEL, in caret notation: ESC is ``^[``, BEL
  ``^G``, NUL ``^@``, a carriage return ``^M`` (it would let text overwrite the line), DEL
  ``^?``;
- C1 controls (U+0080–U+009F) and the bidirectional embeddings, overrides and isolates
  (U+202A–U+202E, U+2066–U+2069) as ``<U+009B>``, ``<U+202E>``.

Each character is replaced on its own: an escape sequence loses its introducer and the rest of
it is shown as the text it is (``ESC ] 0;PWNED BEL`` → ``^[]0;PWNED^G``), so nothing is hidden.
Being one character at a time, the result is the same for a whole text as for the pieces of
a streamed answer, however it is cut, and it is stable: made safe twice, text is unchanged.

Left as they are: line feeds and tabs; the left-to-right and right-to-left marks and the zero-
width joiners and spaces, which Arabic, Hebrew, Persian and Indic text and emoji sequences
(👩‍💻) need, and which move or recolour nothing around them. Titles have them removed when
they are stored (:mod:`hermes_core.store.titles`).

This module imports nothing: the chat loads it before its first prompt.
"""

from __future__ import annotations

_CARET = {code: "^" + chr(code ^ 0x40) for code in range(0x20) if chr(code) not in "\n\t"}
_CARET[0x7F] = "^?"
_CODE_POINTS = {
    code: f"<U+{code:04X}>"
    for code in (*range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}
SHOWN_AS: dict[int, str] = {**_CARET, **_CODE_POINTS}
"""Each character :func:`terminal_safe` replaces (by code point) and what is shown instead."""


def terminal_safe(text: str) -> str:
    """``text`` as it may be shown on a terminal: every control character except ``\\n`` and
    ``\\t``, and every bidirectional override, replaced by a visible stand-in (``^[``,
    ``<U+202E>``; see the module's docstring)."""
    return text.translate(SHOWN_AS)


def terminal_line(text: str) -> str:
    """:func:`terminal_safe` on one line: line feeds and tabs become spaces too (a table cell,
    a picker row, a one-line notice)."""
    return terminal_safe(text).replace("\n", " ").replace("\t", " ")
