"""``hermes insights``: token use, cost, tools and activity over a selection of sessions.

The store computes the aggregates (``Store.insight_rows``); this package turns them into
a report (:mod:`.report`, priced by :mod:`.pricing`) and renders it for the terminal
(:mod:`.terminal`), as JSON (:mod:`.json_report`) or as one HTML page (:mod:`.html_page`, charts
from :mod:`.svg`); :mod:`.figures` makes dollars and shares read alike everywhere.
"""

from __future__ import annotations

from .pricing import ModelPrice, PriceTable
from .report import (
    Activity,
    Cost,
    InsightsReport,
    ModelUsage,
    SourceUsage,
    ToolUsage,
    Usage,
    build_report,
)

__all__ = [
    "Activity",
    "Cost",
    "InsightsReport",
    "ModelPrice",
    "ModelUsage",
    "PriceTable",
    "SourceUsage",
    "ToolUsage",
    "Usage",
    "build_report",
]
