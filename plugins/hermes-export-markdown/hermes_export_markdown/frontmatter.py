"""YAML front matter written without a YAML library (the plugin depends on the contract only).

Strings are YAML double-quoted scalars with every character a YAML reader could fold,
reject or misread escaped (control characters, NEL, line and paragraph separators, the BOM,
surrogates), so any title or path reads back exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

_SIMPLE_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _needs_escape(code: int) -> bool:
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF)
        or 0xD800 <= code <= 0xDFFF
    )


def yaml_string(text: str) -> str:
    """``text`` as a YAML double-quoted scalar."""
    out = ['"']
    for character in text:
        code = ord(character)
        if character in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[character])
        elif _needs_escape(code):
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
        else:
            out.append(character)
    out.append('"')
    return "".join(out)


def yaml_value(value: Any) -> str:
    """A scalar or a flat list as YAML (strings quoted, None as null)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, str):
        return yaml_string(value)
    if isinstance(value, Sequence):
        return "[" + ", ".join(yaml_value(item) for item in value) + "]"
    return yaml_string(str(value))


def front_matter(fields: Sequence[tuple[str, Any]]) -> str:
    """A ``---`` block of ``key: value`` lines (keys are plain identifiers chosen by the code)."""
    lines = ["---", *(f"{key}: {yaml_value(value)}" for key, value in fields), "---", ""]
    return "\n".join(lines)
