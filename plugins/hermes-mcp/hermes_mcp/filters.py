"""The selection filters an outside agent may add to ``session_search`` (cwd and time).

They are the selection's own options (``hermes sessions list --cwd/--newer-than/…``), parsed
by :func:`hermes_core.selection.options.filter_from_options`, under their option names
without the dashes; ``source`` is the tool's own argument and stays with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.selection.filters import SessionFilter
from hermes_core.selection.options import FilterError, filter_from_options

FILTER_NAMES = ("cwd", "newer_than", "older_than", "after", "before")
"""The filter arguments, in the order the schema lists them."""

_WHEN = (
    "a duration back from now (5h, 30m, 2d, 1w), a number of days, or a date (2026-07-05, "
    "2026-07-05 14:30; local time unless a zone such as Z or +02:00 follows)"
)

FILTER_PROPERTIES: dict[str, dict[str, Any]] = {
    "cwd": {
        "type": "string",
        "description": "Discovery/browse: only sessions whose working directory is this "
        "absolute path or a folder below it (the workspace you are in).",
    },
    "newer_than": {
        "type": "string",
        "description": f"Discovery/browse: only sessions active at or after this time: {_WHEN}.",
    },
    "older_than": {
        "type": "string",
        "description": "Discovery/browse: only sessions last active before this time.",
    },
    "after": {
        "type": "string",
        "description": "Discovery/browse: only sessions started at or after this time.",
    },
    "before": {
        "type": "string",
        "description": "Discovery/browse: only sessions started before this time.",
    },
}
"""JSON-schema properties of the filter arguments."""


class FilterArgumentError(ValueError):
    """A filter argument that cannot be used (one line, naming the argument)."""


def selection_from(arguments: Mapping[str, Any]) -> SessionFilter | None:
    """The selection the filter arguments in ``arguments`` ask for, or None when none is set."""
    given: dict[str, str] = {}
    for name in FILTER_NAMES:
        value = arguments.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise FilterArgumentError(f"{name} must be a string, not {value!r}"[:200])
        given[name] = value
    if not given:
        return None
    try:
        return filter_from_options(**given)  # type: ignore[arg-type]
    except FilterError as error:
        message = str(error)
        for name in FILTER_NAMES:
            message = message.replace("--" + name.replace("_", "-"), name)
        raise FilterArgumentError(message) from None

