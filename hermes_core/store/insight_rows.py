"""What a store answers for ``hermes insights`` (``Store.insight_rows``), whatever the database:
plain rows of aggregates over one selection of sessions.

The built-in SQLite backend computes them in :mod:`.insights`; another backend returns the same
rows. The meaning every backend must keep:

- usage rows sum the session counters per (source, model) pair;
- activity rows count session *starts* per :data:`ACTIVITY_BUCKET_SECONDS` of UTC time;
- tool result rows count ``tool`` messages per tool name — the message's ``tool_name``, else the
  name of the assistant tool call with the same call id in the same session — and how many of
  them failed, by the rule :data:`TOOL_FAILURE_RULE` states;
- the largest sessions are those with the most tokens — input, prompt-cache reads and writes,
  output (``selection_sql.SESSION_TOKENS_SQL``) — sessions with none left out, most first, at
  most :data:`LARGEST_SESSIONS`; activity rows count the same tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

ACTIVITY_BUCKET_SECONDS = 900
"""Session starts are counted per 15 minutes of UTC time: every time zone's offset is a
multiple of 15 minutes, so each bucket falls inside one local hour and one local day."""

LARGEST_SESSIONS = 10

TOOL_FAILURE_RULE = (
    "A tool result failed when its text, leading white space aside, starts with 'error' in "
    "any case followed by anything but a letter ('Error: …', 'error - …', 'ERROR', not "
    "'errors found: 0'), or with 'Traceback (most recent call last):', or when it is a JSON "
    "object whose 'error' is neither null, false, \"\" nor 0, or whose 'isError' / "
    "'is_error' is true. Only the first 300 characters are looked at for the text prefixes."
)


@dataclass(frozen=True, slots=True)
class UsageRow:
    """Session counters summed over the selected sessions of one (source, model) pair."""

    source: str
    model: str | None
    sessions: int
    messages: int
    input_tokens: int
    output_tokens: int
    tool_calls: int
    """Tool calls the assistant asked for (the sessions' ``tool_call_count``)."""
    actual_cost_usd: float
    actual_cost_sessions: int
    """Sessions with a stored actual cost (summed in ``actual_cost_usd``)."""
    stored_estimate_usd: float
    stored_estimate_sessions: int
    """Sessions without an actual cost but with a stored estimate."""
    uncosted_sessions: int
    """Sessions with neither; their cost can only come from a price table."""
    uncosted_with_tokens: int
    """Of those, the ones that recorded any tokens (a session without tokens costs nothing)."""
    uncosted_input_tokens: int
    uncosted_output_tokens: int
    first_started_at: float
    last_active_at: float
    cache_read_tokens: int = 0
    """Input tokens read from the prompt cache (not in ``input_tokens``)."""
    cache_write_tokens: int = 0
    """Input tokens written to the prompt cache (not in ``input_tokens``)."""
    uncosted_cache_read_tokens: int = 0
    uncosted_cache_write_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ActivityRow:
    """Sessions that started within one :data:`ACTIVITY_BUCKET_SECONDS` bucket of UTC time."""

    bucket_start: float
    """POSIX time at which the bucket starts."""
    sessions: int
    messages: int
    tokens: int
    """Every token: input, prompt-cache reads and writes, output."""


@dataclass(frozen=True, slots=True)
class ToolResultRow:
    """Tool results of one tool over the selected sessions."""

    name: str | None
    """The tool's name (from the result, else from the assistant call it answers); None when
    neither names it."""
    results: int
    failed: int


@dataclass(frozen=True, slots=True)
class SessionUsageRow:
    """One session's usage (the largest sessions of a selection)."""

    id: str
    title: str | None
    source: str
    model: str | None
    started_at: float
    messages: int
    input_tokens: int
    output_tokens: int
    cost_actual_usd: float | None
    cost_estimated_usd: float | None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True, slots=True)
class InsightRows:
    """Everything ``hermes insights`` reads from the store for one selection."""

    usage: list[UsageRow]
    activity: list[ActivityRow]
    tools: list[ToolResultRow]
    largest: list[SessionUsageRow]
    """The sessions with the most tokens, most first."""
