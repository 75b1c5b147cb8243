"""The insights report: the store's aggregate rows turned into figures per source, model, tool,
day, weekday and hour, with costs priced where the sessions stored none.

Cost of a session, in order: its stored actual cost; else its stored estimate; else an estimate
from the price table (``insights.prices``) for its model and tokens; else it is *unpriced* and
counted as such (a session that recorded no tokens and no cost costs nothing).

Activity counts each session at the moment it started, in the report's time zone: its messages
and tokens count on that day and in that hour.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from hermes_core.store.insight_rows import (
    ActivityRow,
    InsightRows,
    SessionUsageRow,
    ToolResultRow,
    UsageRow,
)

from .pricing import ModelPrice, PriceTable

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True, slots=True)
class Cost:
    """What a set of sessions cost, split by where each figure comes from."""

    actual_usd: float = 0.0
    stored_estimate_usd: float = 0.0
    price_estimate_usd: float = 0.0
    actual_sessions: int = 0
    stored_estimate_sessions: int = 0
    price_estimate_sessions: int = 0
    """Sessions estimated from the price table (they stored no cost but recorded tokens)."""
    unpriced_sessions: int = 0
    """Sessions with tokens but no stored cost and no price for their model: not counted."""

    @property
    def estimated_usd(self) -> float:
        """Stored estimates plus price-table estimates."""
        return self.stored_estimate_usd + self.price_estimate_usd

    @property
    def total_usd(self) -> float:
        """Actual costs plus every estimate."""
        return self.actual_usd + self.estimated_usd

    def plus(self, other: Cost) -> Cost:
        """Both costs together."""
        return Cost(
            self.actual_usd + other.actual_usd,
            self.stored_estimate_usd + other.stored_estimate_usd,
            self.price_estimate_usd + other.price_estimate_usd,
            self.actual_sessions + other.actual_sessions,
            self.stored_estimate_sessions + other.stored_estimate_sessions,
            self.price_estimate_sessions + other.price_estimate_sessions,
            self.unpriced_sessions + other.unpriced_sessions,
        )


@dataclass(frozen=True, slots=True)
class Usage:
    """Counts and cost of a set of sessions."""

    sessions: int = 0
    messages: int = 0
    input_tokens: int = 0
    """Input tokens outside the prompt cache."""
    output_tokens: int = 0
    tool_calls: int = 0
    """Tool calls the assistant asked for."""
    cost: Cost = field(default_factory=Cost)
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def tokens(self) -> int:
        """Every token: input, prompt-cache reads and writes, output."""
        return (
            self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + (self.output_tokens)
        )

    def plus(self, other: Usage) -> Usage:
        """Both sets together."""
        return Usage(
            self.sessions + other.sessions,
            self.messages + other.messages,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.tool_calls + other.tool_calls,
            self.cost.plus(other.cost),
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, slots=True)
class SourceUsage:
    """Usage of the sessions of one origin (``cli``, ``telegram``, ``claude-code``…)."""

    source: str
    usage: Usage


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Usage of the sessions of one model (None: sessions that recorded no model)."""

    model: str | None
    usage: Usage
    price: ModelPrice | None
    """The price-table entry used for this model, if any."""


@dataclass(frozen=True, slots=True)
class ToolUsage:
    """Results of one tool: how many calls returned, how many of them reported a failure."""

    name: str | None
    """None: results that neither they nor the call they answer name."""
    calls: int
    failed: int

    @property
    def failure_share(self) -> float:
        """Failed calls over calls (0 when there were none)."""
        return self.failed / self.calls if self.calls else 0.0


@dataclass(frozen=True, slots=True)
class SessionCost:
    """One of the largest sessions: its usage and what it cost."""

    id: str
    title: str | None
    source: str
    model: str | None
    started_at: _dt.datetime
    messages: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None: the session stored no cost and its model has no price."""
    cost_source: str | None
    """``actual``, ``stored_estimate``, ``price_table`` or None (no cost known)."""
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def tokens(self) -> int:
        """Every token: input, prompt-cache reads and writes, output."""
        return (
            self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + (self.output_tokens)
        )


@dataclass(frozen=True, slots=True)
class Activity:
    """Sessions started in a period, with their messages and tokens."""

    sessions: int = 0
    messages: int = 0
    tokens: int = 0

    def plus(self, row: ActivityRow) -> Activity:
        """This activity with one more bucket of session starts."""
        return Activity(
            self.sessions + row.sessions, self.messages + row.messages, self.tokens + row.tokens
        )


@dataclass(frozen=True, slots=True)
class InsightsReport:
    """Everything ``hermes insights`` shows, for one selection of sessions."""

    generated_at: _dt.datetime
    filters: Mapping[str, str]
    """The filters as given on the command line (option name without dashes → value)."""
    first_started_at: _dt.datetime | None
    last_active_at: _dt.datetime | None
    totals: Usage
    by_source: list[SourceUsage]
    by_model: list[ModelUsage]
    tools: list[ToolUsage]
    by_day: list[tuple[_dt.date, Activity]]
    """Each day with a session start, oldest first."""
    by_weekday: list[Activity]
    """Seven entries, Monday first."""
    by_hour: list[Activity]
    """Twenty-four entries, hour 0 first."""
    largest: list[SessionCost] = field(default_factory=list)
    """The sessions with the most tokens (at most ten), most first."""
    price_table_models: int = 0
    """How many models the price table has."""

    @property
    def empty(self) -> bool:
        """No session matched."""
        return self.totals.sessions == 0

    @property
    def tool_results(self) -> int:
        """Tool results stored (one per call that returned)."""
        return sum(tool.calls for tool in self.tools)

    @property
    def tool_failures(self) -> int:
        """Tool results that reported a failure."""
        return sum(tool.failed for tool in self.tools)

    @property
    def unpriced_models(self) -> list[str | None]:
        """Models of the sessions that could not be priced (None: no model recorded)."""
        return [m.model for m in self.by_model if m.usage.cost.unpriced_sessions]


def build_report(
    rows: InsightRows,
    prices: PriceTable,
    *,
    filters: Mapping[str, str] | None = None,
    zone: _dt.tzinfo | None = None,
    now: _dt.datetime | None = None,
) -> InsightsReport:
    """The report for the store's ``rows``; times in ``zone`` (default: the local zone)."""
    by_source: dict[str, Usage] = {}
    by_model: dict[str | None, Usage] = {}
    totals = Usage()
    for row in rows.usage:
        usage = _usage(row, prices.price_for(row.model))
        by_source[row.source] = by_source.get(row.source, Usage()).plus(usage)
        by_model[row.model] = by_model.get(row.model, Usage()).plus(usage)
        totals = totals.plus(usage)
    first = min((row.first_started_at for row in rows.usage), default=None)
    last = max((row.last_active_at for row in rows.usage), default=None)
    days, weekdays, hours = _activity(rows.activity, zone)
    return InsightsReport(
        generated_at=(now or _dt.datetime.now(zone)).astimezone(zone),
        filters=dict(filters or {}),
        first_started_at=None if first is None else _moment(first, zone),
        last_active_at=None if last is None else _moment(last, zone),
        totals=totals,
        by_source=[
            SourceUsage(source, usage)
            for source, usage in sorted(by_source.items(), key=lambda i: (-i[1].sessions, i[0]))
        ],
        by_model=[
            ModelUsage(model, usage, prices.price_for(model))
            for model, usage in sorted(
                by_model.items(), key=lambda i: (-i[1].tokens, -i[1].sessions, i[0] or "")
            )
        ],
        tools=_tools(rows.tools),
        by_day=days,
        by_weekday=weekdays,
        by_hour=hours,
        largest=[_session_cost(row, prices, zone) for row in rows.largest],
        price_table_models=len(prices),
    )


def _usage(row: UsageRow, price: ModelPrice | None) -> Usage:
    priced = row.uncosted_with_tokens if price is not None else 0
    cost = Cost(
        actual_usd=row.actual_cost_usd,
        stored_estimate_usd=row.stored_estimate_usd,
        price_estimate_usd=(
            price.estimate(
                row.uncosted_input_tokens,
                row.uncosted_output_tokens,
                row.uncosted_cache_read_tokens,
                row.uncosted_cache_write_tokens,
            )
            if price is not None
            else 0.0
        ),
        actual_sessions=row.actual_cost_sessions,
        stored_estimate_sessions=row.stored_estimate_sessions,
        price_estimate_sessions=priced,
        unpriced_sessions=row.uncosted_with_tokens - priced,
    )
    return Usage(
        row.sessions,
        row.messages,
        row.input_tokens,
        row.output_tokens,
        row.tool_calls,
        cost,
        row.cache_read_tokens,
        row.cache_write_tokens,
    )


def _session_cost(row: SessionUsageRow, prices: PriceTable, zone: _dt.tzinfo | None) -> SessionCost:
    cost: float | None
    if row.cost_actual_usd is not None:
        cost, source = row.cost_actual_usd, "actual"
    elif row.cost_estimated_usd is not None:
        cost, source = row.cost_estimated_usd, "stored_estimate"
    else:
        price = prices.price_for(row.model)
        if price is None:
            cost, source = None, None
        else:
            cost = price.estimate(
                row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens
            )
            source = "price_table"
    return SessionCost(
        row.id,
        row.title,
        row.source,
        row.model,
        _moment(row.started_at, zone),
        row.messages,
        row.input_tokens,
        row.output_tokens,
        cost,
        source,
        row.cache_read_tokens,
        row.cache_write_tokens,
    )


def _tools(rows: Iterable[ToolResultRow]) -> list[ToolUsage]:
    tools = [ToolUsage(row.name, row.results, row.failed) for row in rows]
    return sorted(tools, key=lambda tool: (-tool.calls, tool.name is None, tool.name or ""))


def _moment(timestamp: float, zone: _dt.tzinfo | None) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(timestamp, _dt.UTC).astimezone(zone)


def _activity(
    rows: Iterable[ActivityRow], zone: _dt.tzinfo | None
) -> tuple[list[tuple[_dt.date, Activity]], list[Activity], list[Activity]]:
    days: dict[_dt.date, Activity] = {}
    weekdays = [Activity()] * 7
    hours = [Activity()] * 24
    for row in rows:
        start = _moment(row.bucket_start, zone)
        day = start.date()
        days[day] = days.get(day, Activity()).plus(row)
        weekdays[start.weekday()] = weekdays[start.weekday()].plus(row)
        hours[start.hour] = hours[start.hour].plus(row)
    return sorted(days.items()), weekdays, hours
