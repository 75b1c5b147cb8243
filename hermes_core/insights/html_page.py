"""``hermes insights --html FILE``: one self-contained page with inline SVG charts.

Nothing on the page loads anything: no remote resource, no script at all, and a
Content-Security-Policy (``default-src 'none'``) that lets only the page's own style sheet apply,
through a nonce drawn fresh for each page. Every text from the store is escaped. A file is
written atomically with mode 0600 (a temporary file in the same folder, then renamed); a device,
a FIFO or ``/dev/stdout`` is written in place (``hermes_core.files``).
"""

from __future__ import annotations

import secrets
from html import escape
from pathlib import Path

from .figures import filters_text, share, unpriced_note, usd
from .report import WEEKDAYS, Cost, InsightsReport
from .svg import Bar, columns, horizontal_bars

_STYLE = """
:root { color-scheme: light dark; --fg: #1d2430; --muted: #5b6575; --bg: #f7f8fa;
  --card: #ffffff; --line: #d9dee6; --bar: #3f7cc4; --warn: #b25e00; --fail: #c2413b; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ef; --muted: #a0a8b6; --bg: #14171c; --card: #1d2128; --line: #353b46;
    --bar: #6aa3e6; --warn: #f0a24a; --fail: #ec6b64; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 980px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { margin: 0 0 4px; font-size: 26px; }
h2 { margin: 32px 0 10px; font-size: 19px; }
h3 { margin: 16px 0 0; font-size: 14px; font-weight: 600; color: var(--muted); }
.muted { color: var(--muted); }
.warn { color: var(--warn); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 12px;
  margin: 20px 0 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px; }
.card dt { color: var(--muted); font-size: 13px; }
.card dd { margin: 2px 0 0; font-size: 22px; font-weight: 600; }
.card dd small { display: block; font-size: 12px; font-weight: 400; color: var(--muted); }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 4px 16px 16px; margin-top: 18px; }
table { border-collapse: collapse; width: 100%; margin-top: 12px; font-size: 14px; }
th, td { text-align: right; padding: 4px 8px; border-bottom: 1px solid var(--line); }
th:first-child, td:first-child { text-align: left; overflow-wrap: anywhere; }
svg.chart { display: block; width: 100%; height: auto; margin-top: 8px; }
svg .bar { fill: var(--bar); }
svg .fail { fill: var(--fail); }
svg .label, svg .value, svg .tick { fill: var(--fg); font-size: 12px; }
svg .tick { font-size: 11px; fill: var(--muted); }
svg .axis { stroke: var(--line); }
"""


def new_nonce() -> str:
    """A fresh random nonce (base64url, 128 bits) for one page."""
    return secrets.token_urlsafe(16)


def content_security_policy(nonce: str) -> str:
    """Nothing may load or run; only the page's nonce-tagged style sheet applies."""
    return (
        "default-src 'none'; "
        f"style-src 'nonce-{nonce}'; "
        "img-src 'none'; script-src 'none'; base-uri 'none'; form-action 'none'"
    )


def render_page(report: InsightsReport, *, nonce: str | None = None) -> str:
    """The whole page as text."""
    nonce = nonce or new_nonce()
    body = [_header(report)]
    if report.empty:
        body.append('<p class="muted" id="empty">No sessions match: nothing to report.</p>')
    else:
        body.append(_cards(report))
        note = unpriced_note(report)
        if note:
            body.append(f'<p class="warn" id="unpriced">{escape(note)}</p>')
        body.extend(
            [_activity(report), _tools(report), _sources(report), _models(report), _largest(report)]
        )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(nonce)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="generator" content="hermes insights">\n'
        "<title>Hermes insights</title>\n"
        f'<style nonce="{nonce}">{_STYLE}</style>\n'
        "</head><body><main>\n" + "\n".join(body) + "\n</main></body></html>\n"
    )


def write_page(report: InsightsReport, target: Path) -> None:
    """Write the page to ``target``: a file is replaced atomically (mode 0600), a device, FIFO
    or ``/dev/stdout`` written in place. Raises :class:`~hermes_core.files.OutputError`."""
    from hermes_core.files import open_output

    with open_output(target) as out:
        out.write(render_page(report).encode("utf-8"))


def _header(report: InsightsReport) -> str:
    period = ""
    if report.first_started_at and report.last_active_at:
        period = (
            f"{report.first_started_at:%Y-%m-%d %H:%M} → {report.last_active_at:%Y-%m-%d %H:%M}"
            f" (UTC{report.last_active_at:%z}) · "
        )
    selection = filters_text(dict(report.filters))
    generated = f"{report.generated_at:%Y-%m-%d %H:%M}"
    return (
        "<header><h1>Hermes insights</h1>"
        f'<p class="muted">{report.totals.sessions:,} sessions · {escape(period)}'
        f"{escape(selection)} · generated {escape(generated)}</p></header>"
    )


def _card(name: str, value: str, detail: str = "") -> str:
    small = f"<small>{escape(detail)}</small>" if detail else ""
    return f'<div class="card"><dt>{escape(name)}</dt><dd>{escape(value)}{small}</dd></div>'


def _cards(report: InsightsReport) -> str:
    totals, cost = report.totals, report.totals.cost
    return (
        '<dl class="cards">'
        + _card("Sessions", f"{totals.sessions:,}", f"{totals.messages:,} messages")
        + _card("Input tokens", f"{totals.input_tokens:,}")
        + _card("Cache reads", f"{totals.cache_read_tokens:,}", "tokens read from the cache")
        + _card("Cache writes", f"{totals.cache_write_tokens:,}", "tokens written to the cache")
        + _card("Output tokens", f"{totals.output_tokens:,}")
        + _card(
            "Cost",
            usd(cost.total_usd),
            f"actual {usd(cost.actual_usd)}, estimated {usd(cost.estimated_usd)}",
        )
        + _card(
            "Tool calls",
            f"{totals.tool_calls:,}",
            f"{report.tool_results:,} results, {report.tool_failures:,} failed "
            f"({share(report.tool_failures, report.tool_results)})",
        )
        + "</dl>"
    )


def _table(headings: list[str], rows: list[list[str]], css_id: str) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headings)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f'<table id="{css_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _cost_cell(cost: Cost) -> str:
    text = usd(cost.total_usd)
    if cost.estimated_usd:
        text = "~" + text
    if cost.unpriced_sessions:
        text += f" (+{cost.unpriced_sessions} unpriced)"
    return text


def _activity(report: InsightsReport) -> str:
    days = report.by_day
    day_bars = [
        Bar(
            day.strftime("%m-%d"),
            a.sessions,
            f"{a.sessions}",
            f"{day.isoformat()}: {a.sessions} sessions, {a.messages} messages",
        )
        for day, a in days
    ]
    hour_bars = [
        Bar(f"{hour:02d}", a.sessions, f"{a.sessions}", f"{hour:02d}:00: {a.sessions} sessions")
        for hour, a in enumerate(report.by_hour)
    ]
    weekday_bars = [
        Bar(name, a.sessions, f"{a.sessions:,}")
        for name, a in zip(WEEKDAYS, report.by_weekday, strict=True)
    ]
    return (
        '<section id="activity"><h2>Activity</h2>'
        '<p class="muted">Each session counts when it started, with its messages.</p>'
        + "<h3>Sessions started per day</h3>"
        + columns("Sessions started per day", day_bars)
        + "<h3>Sessions started per hour of day</h3>"
        + columns("Sessions started per hour of day", hour_bars)
        + "<h3>Sessions started per weekday</h3>"
        + horizontal_bars("Sessions started per weekday", weekday_bars)
        + _table(
            ["Date", "Sessions", "Messages", "Tokens"],
            [
                [d.isoformat(), f"{a.sessions:,}", f"{a.messages:,}", f"{a.tokens:,}"]
                for d, a in days
            ],
            "days",
        )
        + "</section>"
    )


def _tools(report: InsightsReport) -> str:
    if not report.tools:
        return '<section id="tools"><h2>Tools</h2><p class="muted">No tool results.</p></section>'
    calls = [Bar(t.name or "(unnamed)", t.calls, f"{t.calls:,}") for t in report.tools]
    failures = [
        Bar(t.name or "(unnamed)", t.failure_share, share(t.failed, t.calls)) for t in report.tools
    ]
    return (
        '<section id="tools"><h2>Tools</h2>'
        + "<h3>Calls per tool</h3>"
        + horizontal_bars("Calls per tool", calls)
        + "<h3>Failure share per tool</h3>"
        + horizontal_bars("Failure share per tool", failures, css_class="fail")
        + _table(
            ["Tool", "Calls", "Failed", "Failure share"],
            [
                [t.name or "(unnamed)", f"{t.calls:,}", f"{t.failed:,}", share(t.failed, t.calls)]
                for t in report.tools
            ],
            "tool-table",
        )
        + "</section>"
    )


def _sources(report: InsightsReport) -> str:
    bars = [Bar(s.source, s.usage.sessions, f"{s.usage.sessions:,}") for s in report.by_source]
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
    return (
        '<section id="sources"><h2>By source</h2>'
        + horizontal_bars("Sessions per source", bars)
        + _table(["Source", "Sessions", "Messages", "Tokens", "Cost"], rows, "source-table")
        + "</section>"
    )


def _models(report: InsightsReport) -> str:
    bars = [
        Bar(m.model or "(no model)", m.usage.tokens, f"{m.usage.tokens:,}") for m in report.by_model
    ]
    rows = [
        [
            m.model or "(no model)",
            f"{m.usage.sessions:,}",
            f"{m.usage.input_tokens:,}",
            f"{m.usage.cache_read_tokens:,}",
            f"{m.usage.cache_write_tokens:,}",
            f"{m.usage.output_tokens:,}",
            _cost_cell(m.usage.cost),
        ]
        for m in report.by_model
    ]
    headings = ["Model", "Sessions", "Input", "Cache read", "Cache write", "Output", "Cost"]
    return (
        '<section id="models"><h2>By model</h2>'
        + horizontal_bars("Tokens per model", bars)
        + _table(headings, rows, "model-table")
        + "</section>"
    )


def _largest(report: InsightsReport) -> str:
    if not report.largest:
        return ""
    rows = [
        [
            s.title or "(untitled)",
            s.id,
            s.source,
            s.model or "(no model)",
            f"{s.started_at:%Y-%m-%d %H:%M}",
            f"{s.tokens:,}",
            "?" if s.cost_usd is None else usd(s.cost_usd),
        ]
        for s in report.largest
    ]
    headings = ["Title", "ID", "Source", "Model", "Started", "Tokens", "Cost"]
    return (
        '<section id="largest"><h2>Largest sessions</h2>'
        + _table(headings, rows, "largest-table")
        + "</section>"
    )
