"""Phone numbers as SMS sessions are keyed: E.164 (``+`` and up to 15 digits)."""

from __future__ import annotations

import re

_E164 = re.compile(r"\+[1-9][0-9]{1,14}")
_SEPARATORS = re.compile(r"[\s\-.()/]")


def canonical_number(number: str) -> str:
    """``number`` in E.164 when it is a phone number written with separators or an ``00``
    international prefix (``+1 (415) 555-0100`` → ``+14155550100``); anything else (a short
    code, an alphanumeric sender id) stripped of surrounding blanks, as it is."""
    compact = _SEPARATORS.sub("", number.strip())
    if compact.startswith("00"):
        compact = "+" + compact[2:]
    if _E164.fullmatch(compact):
        return compact
    return number.strip()
