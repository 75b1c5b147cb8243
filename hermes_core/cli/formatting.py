"""Plain-text helpers for listings: relative times, sizes, fitting text into columns."""

from __future__ import annotations

import time
import unicodedata


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
    """Terminal columns ``text`` takes (wide CJK and emoji count two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def fit(text: str, width: int) -> str:
    """Cut ``text`` to ``width`` columns (with an ellipsis) and pad it to exactly that width."""
    if display_width(text) > width:
        out = []
        used = 0
        for ch in text:
            w = display_width(ch)
            if used + w > width - 1:
                break
            out.append(ch)
            used += w
        text = "".join(out) + "…"
    return text + " " * max(0, width - display_width(text))
