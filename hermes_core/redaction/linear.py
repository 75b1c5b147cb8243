"""A static check that a pattern cannot backtrack exponentially: no unbounded repeat nested
in another unbounded repeat (``(a+)+``, ``(?:x*y)*``), the classic catastrophic shape.

It walks the parse tree ``re`` itself builds (``re._parser``, formerly ``sre_parse``). The
built-in rules pass it (a test checks); plugin authors can call it in their own tests.
It does not prove linear time — overlapping alternatives under a bounded repeat can still be
slow — but it catches the shape that turns seconds into hours.
"""

from __future__ import annotations

import importlib
from typing import Any

# ``re._parser`` and ``re._constants`` have no type stubs (the public ``sre_parse`` alias is
# deprecated since 3.11); loaded by name they are typed ``Any``.
sre_parse: Any = importlib.import_module("re._parser")
sre_constants: Any = importlib.import_module("re._constants")

_REPEATS = {
    sre_constants.MAX_REPEAT,
    sre_constants.MIN_REPEAT,
    sre_constants.POSSESSIVE_REPEAT,
}


def nested_unbounded_repeats(pattern: str) -> list[str]:
    """Descriptions of every unbounded repeat found inside another unbounded repeat of
    ``pattern`` (an empty list when there is none)."""
    problems: list[str] = []
    _walk(sre_parse.parse(pattern), inside=None, problems=problems)
    return problems


def _walk(items: Any, inside: str | None, problems: list[str]) -> None:
    for op, argument in items:
        if op in _REPEATS:
            low, high, body = argument
            unbounded = high == sre_constants.MAXREPEAT
            here = f"{{{low},}}" if unbounded else None
            if unbounded and inside is not None:
                problems.append(f"unbounded repeat {here} inside unbounded repeat {inside}")
            _walk(body, inside if inside is not None else here, problems)
        elif op is sre_constants.SUBPATTERN:
            _walk(argument[-1], inside, problems)
        elif op is sre_constants.BRANCH:
            for alternative in argument[1]:
                _walk(alternative, inside, problems)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            _walk(argument[1], inside, problems)
        elif op is sre_constants.ATOMIC_GROUP:
            _walk(argument, inside, problems)
        elif op is sre_constants.GROUPREF_EXISTS:
            _walk(argument[1], inside, problems)
            if argument[2] is not None:
                _walk(argument[2], inside, problems)
