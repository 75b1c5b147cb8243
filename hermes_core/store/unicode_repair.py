"""Text that UTF-8 cannot hold, repaired before it reaches a database.

A JSON log may escape a lone UTF-16 surrogate (``"\\ud800"``, half of an emoji cut in two,
a reversed pair); Python reads it into a ``str`` that no UTF-8 encoder accepts, so SQLite's
and PostgreSQL's drivers raise ``UnicodeEncodeError`` on it. The store's decision is to
**repair, never refuse**: each lone surrogate becomes U+FFFD (the replacement character) and
the rest of the text is kept, so one bad character never costs a message. A high and a low
surrogate that do make a pair are joined into the character they encode.

The store's cursors (SQLite's and the PostgreSQL plugin's) pass every statement's parameters
through :func:`storable_parameters`; the import engine repairs first with
:func:`repaired_text` so it can count what it repaired.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

REPLACEMENT = "\ufffd"


def needs_repair(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (cheap for ASCII text: no scan)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def repaired_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (and split pairs joined)."""
    if not needs_repair(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _storable(value: Any) -> Any:
    return repaired_text(value) if isinstance(value, str) else value


def storable_parameters(parameters: Any) -> Any:
    """One statement's parameters (a sequence or a mapping) with their text repaired; the
    same object when nothing needed it."""
    if isinstance(parameters, Mapping):
        if not any(isinstance(v, str) and needs_repair(v) for v in parameters.values()):
            return parameters
        return {key: _storable(value) for key, value in parameters.items()}
    if isinstance(parameters, Sequence) and not isinstance(parameters, str | bytes):
        if not any(isinstance(v, str) and needs_repair(v) for v in parameters):
            return parameters
        return tuple(_storable(value) for value in parameters)
    return parameters


def storable_rows(rows: Iterable[Any]) -> Iterator[Any]:
    """``executemany``'s parameter rows, each repaired as it is bound (a failure half-way
    through would leave the rows before it written, so nothing may fail to encode)."""
    for row in rows:
        yield storable_parameters(row)
