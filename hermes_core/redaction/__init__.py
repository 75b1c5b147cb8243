"""Redaction (SPEC K1): one engine that removes secrets from every string field of a session
before any exporter sees it.

One concern per module: :mod:`.token_patterns` (secrets known by their shape),
:mod:`.context_patterns` (secrets known by their surroundings), :mod:`.rules` (the built-in
rule set and the marker),
:mod:`.engine` (the :class:`Redactor`: keyword pre-filter, text and nested values),
:mod:`.records` (which fields of a session record are redacted), :mod:`.linear` (the static
check that no pattern nests unbounded repeats). See ``docs/redaction.md``.
"""

from __future__ import annotations

from .engine import InvalidRedactionRule, Redactor
from .linear import nested_unbounded_repeats
from .rules import BUILTIN_RULES, MARKER_PREFIX, marker

__all__ = [
    "BUILTIN_RULES",
    "MARKER_PREFIX",
    "InvalidRedactionRule",
    "Redactor",
    "marker",
    "nested_unbounded_repeats",
]
