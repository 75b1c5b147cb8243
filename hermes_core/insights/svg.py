"""Inline SVG bar charts for the insights page: plain shapes and text, every string escaped,
no script, no style attribute (the page's policy allows only its nonced style sheet), no link.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

LABEL_CHARACTERS = 28
"""Longer labels are cut (with ``…``); the full text stays in the bar's tooltip."""


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar: what it is, how long it is, and the text shown beside it."""

    label: str
    value: float
    shown: str
    """The figure written at the end of the bar (``12``, ``$3.40``, ``25.0 %``…)."""
    tooltip: str = ""


def _cut(label: str) -> str:
    return label if len(label) <= LABEL_CHARACTERS else label[: LABEL_CHARACTERS - 1] + "…"


def horizontal_bars(title: str, bars: Sequence[Bar], *, css_class: str = "bar") -> str:
    """One row per bar, labels on the left; the longest bar fills the width."""
    row, label_width, bar_width, value_width = 22, 190, 420, 110
    width = label_width + bar_width + value_width
    height = max(1, len(bars)) * row + 6
    top = max((b.value for b in bars), default=0.0)
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
    ]
    for index, item in enumerate(bars):
        y = index * row + 3
        length = 0.0 if top <= 0 else max(item.value / top * bar_width, 1.0 if item.value else 0)
        tooltip = item.tooltip or f"{item.label}: {item.shown}"
        parts.append(
            f"<g><title>{escape(tooltip)}</title>"
            f'<text class="label" x="{label_width - 8}" y="{y + 15}" text-anchor="end">'
            f"{escape(_cut(item.label))}</text>"
            f'<rect class="{css_class}" x="{label_width}" y="{y + 3}" width="{length:.1f}" '
            f'height="{row - 6}" rx="3"></rect>'
            f'<text class="value" x="{label_width + length + 6:.1f}" y="{y + 15}">'
            f"{escape(item.shown)}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def columns(title: str, bars: Sequence[Bar]) -> str:
    """Vertical columns left to right (hours, days) across a fixed width: wide columns for few
    bars (at most 36 units), thin ones for many; labels thinned out so they never overlap."""
    width, plot_height, label_height = 900, 160, 24
    slot = width / max(1, len(bars))
    column = min(36.0, slot * 0.8)
    every_label = max(1, math.ceil(48 / slot))
    height = plot_height + label_height
    top = max((b.value for b in bars), default=0.0)
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
        f'<line class="axis" x1="0" y1="{plot_height}" x2="{width}" y2="{plot_height}"></line>'
    ]
    for index, item in enumerate(bars):
        x = index * slot + (slot - column) / 2
        size = (
            0.0 if top <= 0 else max(item.value / top * (plot_height - 8), 1.0 if item.value else 0)
        )
        tooltip = item.tooltip or f"{item.label}: {item.shown}"
        label = ""
        if index % every_label == 0:
            label = (
                f'<text class="tick" x="{x + column / 2:.1f}" y="{plot_height + 16}" '
                f'text-anchor="middle">{escape(_cut(item.label))}</text>'
            )
        parts.append(
            f"<g><title>{escape(tooltip)}</title>"
            f'<rect class="bar" x="{x:.1f}" y="{plot_height - size:.1f}" width="{column:.1f}" '
            f'height="{size:.1f}" rx="2"></rect>{label}</g>'
        )
    parts.append("</svg>")
    return "".join(parts)
