"""``hermes insights --json``: the report as one JSON object of a documented, stable shape
(``docs/cli.md``; ``tests/insights/test_insights_json.py`` checks the documented example
against what this produces)."""

from __future__ import annotations

import datetime as _dt
from typing import Any

from .report import WEEKDAYS, Activity, Cost, InsightsReport, Usage

USD_DIGITS = 6
"""Dollar figures are rounded to a millionth of a dollar (sums of floats carry noise)."""


def report_as_json(report: InsightsReport) -> dict[str, Any]:
    """The report as plain JSON values, keys in documented order."""
    return {
        "generated_at": _iso(report.generated_at),
        "filters": dict(report.filters),
        "period": {
            "first_started_at": _iso(report.first_started_at),
            "last_active_at": _iso(report.last_active_at),
        },
        "totals": {
            **_usage(report.totals),
            "tool_results": report.tool_results,
            "tool_failures": report.tool_failures,
        },
        "by_source": [{"source": s.source, **_usage(s.usage)} for s in report.by_source],
        "by_model": [
            {
                "model": m.model,
                **_usage(m.usage),
                "price": None
                if m.price is None
                else {
                    "input_per_mtok": m.price.input_per_mtok,
                    "output_per_mtok": m.price.output_per_mtok,
                    "cache_read_per_mtok": m.price.cache_read_price,
                    "cache_write_per_mtok": m.price.cache_write_price,
                },
            }
            for m in report.by_model
        ],
        "tools": [
            {
                "name": t.name,
                "calls": t.calls,
                "failed": t.failed,
                "failure_share": round(t.failure_share, 4),
            }
            for t in report.tools
        ],
        "activity": {
            "by_day": [{"date": day.isoformat(), **_activity(a)} for day, a in report.by_day],
            "by_weekday": [
                {"weekday": name, **_activity(a)}
                for name, a in zip(WEEKDAYS, report.by_weekday, strict=True)
            ],
            "by_hour": [{"hour": hour, **_activity(a)} for hour, a in enumerate(report.by_hour)],
        },
        "largest_sessions": [
            {
                "id": s.id,
                "title": s.title,
                "source": s.source,
                "model": s.model,
                "started_at": _iso(s.started_at),
                "messages": s.messages,
                "input_tokens": s.input_tokens,
                "output_tokens": s.output_tokens,
                "cache_read_tokens": s.cache_read_tokens,
                "cache_write_tokens": s.cache_write_tokens,
                "cost_usd": None if s.cost_usd is None else _usd(s.cost_usd),
                "cost_source": s.cost_source,
            }
            for s in report.largest
        ],
        "unpriced": {
            "sessions": report.totals.cost.unpriced_sessions,
            "models": report.unpriced_models,
        },
    }


def _iso(moment: _dt.datetime | None) -> str | None:
    return None if moment is None else moment.isoformat(timespec="seconds")


def _usd(value: float) -> float:
    return round(value, USD_DIGITS)


def _cost(cost: Cost) -> dict[str, Any]:
    return {
        "total_usd": _usd(cost.total_usd),
        "actual_usd": _usd(cost.actual_usd),
        "estimated_usd": _usd(cost.estimated_usd),
        "stored_estimate_usd": _usd(cost.stored_estimate_usd),
        "price_estimate_usd": _usd(cost.price_estimate_usd),
        "actual_sessions": cost.actual_sessions,
        "stored_estimate_sessions": cost.stored_estimate_sessions,
        "price_estimate_sessions": cost.price_estimate_sessions,
        "unpriced_sessions": cost.unpriced_sessions,
    }


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "sessions": usage.sessions,
        "messages": usage.messages,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "tool_calls": usage.tool_calls,
        "cost": _cost(usage.cost),
    }


def _activity(activity: Activity) -> dict[str, int]:
    return {
        "sessions": activity.sessions,
        "messages": activity.messages,
        "tokens": activity.tokens,
    }
