"""How figures read, wherever the report is shown: dollars, shares, the filters line and the
note about sessions that could not be priced."""

from __future__ import annotations

from .report import InsightsReport


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


def unpriced_note(report: InsightsReport) -> str | None:
    """The line that names the sessions whose cost is unknown, or None when there are none."""
    unpriced = report.totals.cost.unpriced_sessions
    if not unpriced:
        return None
    models = ", ".join(model or "(no model)" for model in report.unpriced_models)
    return (
        f"{unpriced:,} session(s) recorded tokens but no cost, and insights.prices in "
        f"config.yaml has no price for their model ({models}): their cost is not counted."
    )
