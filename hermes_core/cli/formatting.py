"""Plain-text helpers for listings and pickers: relative times, sizes, and fitting text into
terminal columns by cell width (a CJK character or an emoji takes two cells), not by ``len``."""

from __future__ import annotations

import time

from hermes_core.terminal_text import terminal_line


def relative_time(moment: float, now: float | None = None) -> str:
    """``just now``, ``5m ago``, ``2h ago``, ``yesterday``, ``3d ago``; a date past 30 days."""
    now = time.time() if now is None else now
    seconds = max(0.0, now - moment)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86_400:
        return f"{int(seconds // 3600)}h ago"
    if seconds < 2 * 86_400:
        return "yesterday"
    if seconds < 30 * 86_400:
        return f"{int(seconds // 86_400)}d ago"
    return time.strftime("%Y-%m-%d", time.localtime(moment))


def iso_local(moment: float | None) -> str | None:
    """A POSIX time as local ISO 8601 with its offset (for JSON output)."""
    if moment is None:
        return None
    import datetime as _dt

    return _dt.datetime.fromtimestamp(moment).astimezone().isoformat(timespec="seconds")


def human_size(size: int) -> str:
    """``12.4 MB`` style sizes (powers of 1024, as the seed's stats show them)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return f"{value:.1f} GB"


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes as :func:`truncate_to_width` shows it: wide CJK characters
    and emoji count two, combining marks and zero-width joiners none (grapheme clusters, as
    rich measures them)."""
    from rich.cells import cell_len

    return cell_len(terminal_line(text))


def truncate_to_width(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` cells, ending in ``…`` when cut; newlines and tabs
    become spaces so a row stays one line, other control characters and bidirectional overrides
    are shown as ``^[``, ``<U+202E>`` (:func:`~hermes_core.terminal_text.terminal_line`). A wide
    character is never split in half."""
    from rich.cells import set_cell_size

    text = terminal_line(text)
    if width <= 0:
        return ""
    if display_width(text) <= width:
        return text
    kept = set_cell_size(text, width - 1)
    if not text.startswith(kept):  # a wide character straddled the cut: drop its filler
        kept = kept[:-1]
    return kept + "…"


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells (with an ellipsis) and padded to exactly that width."""
    cut = truncate_to_width(text, width)
    return cut + " " * max(0, width - display_width(cut))
