"""``hermes insights`` in the terminal: an overview, then tables with bar charts (rich).

Every name that comes from the store (sources, models, tools) is shown as plain text, never as
rich markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .report import WEEKDAYS, Activity, Cost, InsightsReport

BAR_WIDTH = 24
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


def usd(value: float) -> str:
    """``$12.34``; amounts under a cent keep four decimals (``$0.0042``)."""
    if value == 0:
        return "$0.00"
    return f"${value:,.2f}" if abs(value) >= 0.01 else f"${value:.4f}"


def share(part: int, whole: int) -> str:
    """``25.0 %``; ``—`` when there is no whole."""
    return f"{part / whole * 100:.1f} %" if whole else "—"


def filters_text(filters: dict[str, str] | None) -> str:
    """``--source cli --newer-than 30d`` (``all sessions`` when none)."""
    if not filters:
        return "all sessions"
    return " ".join(f"--{name.replace('_', '-')} {value}" for name, value in filters.items())


def render(report: InsightsReport, console: Console) -> None:
    """Print the whole report on ``console``; bars take the width the figures leave."""
    console.print(_heading(report))
    if report.empty:
        console.print("No sessions match: nothing to report.")
        return
    console.print(_overview(report))
    note = _unpriced_note(report)
    if note:
        console.print(Text(note, style="yellow"))
    width = console.width
    console.print(_sources(report, width))
    console.print(_models(report, width))
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
    heading.append(f" · {filters_text(dict(report.filters))}")
    return heading


def _chart_table(
    title: str,
    headings: Sequence[str],
    rows: Sequence[Sequence[str]],
    values: Sequence[float],
    width: int,
) -> Table:
    """A table of ``rows`` (first column a name, the others figures) with a bar per row for
    ``values``. Figures never wrap; the bars get what is left of ``width``, at most
    :data:`BAR_WIDTH` cells, and the name column folds when even that is not enough."""
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD)
    table.add_column(headings[0], overflow="fold")
    for heading in headings[1:]:
        table.add_column(heading, justify="right", no_wrap=True)
    table.add_column("", no_wrap=True, overflow="crop")
    used = sum(
        max(len(headings[i]), *(len(row[i]) for row in rows)) + 3 for i in range(len(headings))
    )
    cells = max(6, min(BAR_WIDTH, width - used - 4))
    top = max(values, default=0)
    for row, value in zip(rows, values, strict=True):
        table.add_row(Text(row[0]), *row[1:], bar(value, top, cells))
    return table


def _cost_cell(cost: Cost) -> str:
    if cost.total_usd == 0 and cost.unpriced_sessions:
        return "?"
    mark = "~" if cost.estimated_usd else ""
    return f"{mark}{usd(cost.total_usd)}" + ("+?" if cost.unpriced_sessions else "")


def _overview(report: InsightsReport) -> Table:
    totals, cost = report.totals, report.totals.cost
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("Sessions", f"{totals.sessions:,}")
    table.add_row("Messages", f"{totals.messages:,}")
    table.add_row("Input tokens", f"{totals.input_tokens:,}")
    table.add_row("Output tokens", f"{totals.output_tokens:,}")
    table.add_row(
        "Tool calls",
        f"{totals.tool_calls:,} asked · {report.tool_results:,} results, "
        f"{report.tool_failures:,} failed ({share(report.tool_failures, report.tool_results)})",
    )
    table.add_row(
        "Cost",
        f"{usd(cost.total_usd)}  (actual {usd(cost.actual_usd)} over {cost.actual_sessions:,} "
        f"sessions, estimated {usd(cost.estimated_usd)} over "
        f"{cost.stored_estimate_sessions + cost.price_estimate_sessions:,})",
    )
    return table


def _unpriced_note(report: InsightsReport) -> str | None:
    unpriced = report.totals.cost.unpriced_sessions
    if not unpriced:
        return None
    models = ", ".join(model or "(no model)" for model in report.unpriced_models)
    return (
        f"{unpriced:,} session(s) recorded tokens but no cost, and insights.prices in "
        f"config.yaml has no price for their model ({models}): their cost is not counted."
    )


def _sources(report: InsightsReport, width: int) -> Table:
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


def _models(report: InsightsReport, width: int) -> Table:
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


def _largest(report: InsightsReport, width: int) -> Table:
    rows = [
        [
            s.title or "(untitled)",
            s.id,
            f"{s.input_tokens + s.output_tokens:,}",
            "?"
            if s.cost_usd is None
            else ("" if s.cost_source == "actual" else "~") + usd(s.cost_usd),
        ]
        for s in report.largest
    ]
    headings = ["Largest sessions", "ID", "Tokens", "Cost"]
    values = [s.input_tokens + s.output_tokens for s in report.largest]
    return _chart_table("By session (most tokens)", headings, rows, values, width)


def _tools(report: InsightsReport, width: int) -> Table:
    rows = [
        [t.name or "(unnamed)", f"{t.calls:,}", f"{t.failed:,}", share(t.failed, t.calls)]
        for t in report.tools
    ]
    headings = ["Tool", "Calls", "Failed", "Failure share"]
    return _chart_table("Tools", headings, rows, [t.calls for t in report.tools], width)


def _activity_table(
    title: str, label: str, names: Sequence[str], activities: Sequence[Activity], width: int
) -> Table:
    rows = [
        [name, f"{a.sessions:,}", f"{a.messages:,}"]
        for name, a in zip(names, activities, strict=True)
    ]
    values = [a.sessions for a in activities]
    return _chart_table(title, [label, "Sessions", "Messages"], rows, values, width)
