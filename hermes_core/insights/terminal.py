"""``hermes insights`` in the terminal: an overview, then tables with bar charts (rich).

Every name that comes from the store (sources, models, titles, tools) is shown as plain text,
never as rich markup, its control characters as ``^[``…
(:func:`~hermes_core.terminal_text.terminal_line`).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.text import Text

from hermes_core.terminal_text import terminal_line

from .figures import filters_text, share, unpriced_note, usd
from .report import WEEKDAYS, Activity, Cost, InsightsReport

BAR_WIDTH = 24
GAP = 3
"""Spaces between columns."""
RECENT_DAYS = 14
"""How many of the latest active days the terminal lists (``--json``/``--html`` have all)."""
_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(value: float, maximum: float, width: int = BAR_WIDTH) -> str:
    """A horizontal bar of ``value`` out of ``maximum`` in ``width`` cells (eighths of a cell
    resolution); a non-zero value always shows at least a sliver."""
    if maximum <= 0 or value <= 0:
        return ""
    eighths = max(1, round(value / maximum * width * 8))
    full, rest = divmod(min(eighths, width * 8), 8)
    return "█" * full + (_EIGHTHS[rest] if rest else "")


def render(report: InsightsReport, console: Console) -> None:
    """Print the whole report on ``console``; bars take the width the figures leave."""
    console.print(_heading(report))
    if report.empty:
        console.print("No sessions match: nothing to report.")
        return
    console.print(_overview(report))
    note = unpriced_note(report)
    if note:
        console.print(Text(terminal_line(note), style="yellow"))
    width = console.width
    console.print(_sources(report, width))
    console.print(_models(report, width))
    if report.totals.cache_read_tokens or report.totals.cache_write_tokens:
        console.print(_prompt_cache(report, width))
    if report.largest:
        console.print(_largest(report, width))
    if report.tools:
        console.print(_tools(report, width))
    console.print(_activity_table("By weekday", "Day", WEEKDAYS, report.by_weekday, width))
    hours = [f"{h:02d}:00" for h in range(24)]
    console.print(_activity_table("By hour of day", "Hour", hours, report.by_hour, width))
    recent = report.by_day[-RECENT_DAYS:]
    title = "By day" if len(recent) == len(report.by_day) else f"Latest {len(recent)} active days"
    days = [d.isoformat() for d, _ in recent]
    console.print(_activity_table(title, "Date", days, [a for _, a in recent], width))


def _heading(report: InsightsReport) -> Text:
    heading = Text("Insights", style="bold")
    heading.append(f" · {report.totals.sessions:,} sessions")
    if report.first_started_at and report.last_active_at:
        first = report.first_started_at.strftime("%Y-%m-%d")
        last = report.last_active_at.strftime("%Y-%m-%d")
        heading.append(f" · {first} → {last}")
    heading.append(f" · {terminal_line(filters_text(dict(report.filters)))}")
    return heading


def _chart_table(
    title: str,
    headings: Sequence[str],
    rows: Sequence[Sequence[str]],
    values: Sequence[float],
    width: int,
) -> Text:
    """``rows`` (first column a name, the others figures) as aligned lines under a bold title,
    with a bar per row for ``values``. Figures are never cut; the bars get what is left of
    ``width`` (6 to :data:`BAR_WIDTH` cells) and a name too long for what remains is cut with
    ``…``. Plain text lines, not a rich Table: a report prints in a few milliseconds."""
    rows = [[terminal_line(row[0]), *row[1:]] for row in rows]
    figure_widths = [
        max(cell_len(headings[i]), *(cell_len(row[i]) for row in rows))
        for i in range(1, len(headings))
    ]
    figures = sum(w + GAP for w in figure_widths)
    name_width = max(cell_len(headings[0]), *(cell_len(row[0]) for row in rows))
    cells = max(6, min(BAR_WIDTH, width - figures - name_width - GAP - 2))
    name_width = max(cell_len(headings[0]), min(name_width, width - figures - cells - GAP - 2))
    top = max(values, default=0)
    text = Text(title, style="bold")
    text.append("\n  ")
    text.append(_fit(headings[0], name_width), style="bold")
    for heading, figure_width in zip(headings[1:], figure_widths, strict=True):
        text.append(" " * GAP + heading.rjust(figure_width), style="bold")
    for row, value in zip(rows, values, strict=True):
        text.append("\n  ")
        text.append(_fit(row[0], name_width))
        for cell, figure_width in zip(row[1:], figure_widths, strict=True):
            text.append(" " * GAP + cell.rjust(figure_width))
        text.append(" " * GAP + bar(value, top, cells))
    text.append("\n")
    return text


def _fit(name: str, width: int) -> str:
    """``name`` padded to ``width`` terminal cells, or cut to it with ``…``."""
    if cell_len(name) <= width:
        return name + " " * (width - cell_len(name))
    cut = set_cell_size(name, width - 1) + "…"
    return cut + " " * (width - cell_len(cut))


def _cost_cell(cost: Cost) -> str:
    if cost.total_usd == 0 and cost.unpriced_sessions:
        return "?"
    mark = "~" if cost.estimated_usd else ""
    return f"{mark}{usd(cost.total_usd)}" + ("+?" if cost.unpriced_sessions else "")


def _overview(report: InsightsReport) -> Text:
    totals, cost = report.totals, report.totals.cost
    lines = [
        ("Sessions", f"{totals.sessions:,}"),
        ("Messages", f"{totals.messages:,}"),
        ("Input tokens", f"{totals.input_tokens:,}"),
        ("Cache reads", f"{totals.cache_read_tokens:,}"),
        ("Cache writes", f"{totals.cache_write_tokens:,}"),
        ("Output tokens", f"{totals.output_tokens:,}"),
        (
            "Tool calls",
            f"{totals.tool_calls:,} asked · {report.tool_results:,} results, "
            f"{report.tool_failures:,} failed "
            f"({share(report.tool_failures, report.tool_results)})",
        ),
        (
            "Cost",
            f"{usd(cost.total_usd)}  (actual {usd(cost.actual_usd)} over "
            f"{cost.actual_sessions:,} sessions, estimated {usd(cost.estimated_usd)} over "
            f"{cost.stored_estimate_sessions + cost.price_estimate_sessions:,})",
        ),
    ]
    text = Text()
    for name, value in lines:
        text.append(f"  {name:<15}", style="bold")
        text.append(value + "\n")
    return text


def _sources(report: InsightsReport, width: int) -> Text:
    rows = [
        [
            s.source,
            f"{s.usage.sessions:,}",
            f"{s.usage.messages:,}",
            f"{s.usage.tokens:,}",
            _cost_cell(s.usage.cost),
        ]
        for s in report.by_source
    ]
    headings = ["Source", "Sessions", "Messages", "Tokens", "Cost"]
    values = [s.usage.sessions for s in report.by_source]
    return _chart_table("By source", headings, rows, values, width)


def _models(report: InsightsReport, width: int) -> Text:
    rows = [
        [
            m.model or "(no model)",
            f"{m.usage.sessions:,}",
            f"{m.usage.input_tokens:,}",
            f"{m.usage.output_tokens:,}",
            _cost_cell(m.usage.cost),
        ]
        for m in report.by_model
    ]
    headings = ["Model", "Sessions", "Input", "Output", "Cost"]
    values = [m.usage.tokens for m in report.by_model]
    return _chart_table("By model", headings, rows, values, width)


def _prompt_cache(report: InsightsReport, width: int) -> Text:
    """Prompt-cache tokens per model (a table of its own, so the model table stays narrow);
    shown when some session recorded any."""
    cached = [m for m in report.by_model if m.usage.cache_read_tokens or m.usage.cache_write_tokens]
    rows = [
        [
            m.model or "(no model)",
            f"{m.usage.cache_read_tokens:,}",
            f"{m.usage.cache_write_tokens:,}",
        ]
        for m in cached
    ]
    headings = ["Model", "Cache read", "Cache write"]
    values = [m.usage.cache_read_tokens + m.usage.cache_write_tokens for m in cached]
    return _chart_table("Prompt cache by model (tokens)", headings, rows, values, width)


def _largest(report: InsightsReport, width: int) -> Text:
    rows = [
        [
            s.title or "(untitled)",
            s.id,
            f"{s.tokens:,}",
            "?"
            if s.cost_usd is None
            else ("" if s.cost_source == "actual" else "~") + usd(s.cost_usd),
        ]
        for s in report.largest
    ]
    headings = ["Largest sessions", "ID", "Tokens", "Cost"]
    values = [s.tokens for s in report.largest]
    return _chart_table("By session (most tokens)", headings, rows, values, width)


def _tools(report: InsightsReport, width: int) -> Text:
    rows = [
        [t.name or "(unnamed)", f"{t.calls:,}", f"{t.failed:,}", share(t.failed, t.calls)]
        for t in report.tools
    ]
    headings = ["Tool", "Calls", "Failed", "Failure share"]
    return _chart_table("Tools", headings, rows, [t.calls for t in report.tools], width)


def _activity_table(
    title: str, label: str, names: Sequence[str], activities: Sequence[Activity], width: int
) -> Text:
    rows = [
        [name, f"{a.sessions:,}", f"{a.messages:,}"]
        for name, a in zip(names, activities, strict=True)
    ]
    values = [a.sessions for a in activities]
    return _chart_table(title, [label, "Sessions", "Messages"], rows, values, width)
