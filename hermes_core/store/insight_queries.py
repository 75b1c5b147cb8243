"""The statements of ``Store.insight_rows`` both stores take (the rows and what they mean:
:mod:`.insight_rows`): usage per source and model, session starts per time bucket, and the
largest sessions, each one ``GROUP BY`` (or one ordered read) over the session counters of a
selection, in the SQL of :mod:`.statements`.

The selection is the F1 condition of the backend's selection dialect over ``sessions``
aliased ``s``. What differs stays with each backend: the time bucket (SQLite truncates, the
PostgreSQL plugin takes the floor), the tool results (SQLite reads a generated failure
column through a covering index; PostgreSQL applies the rule to the JSON forms in Python),
and how the reads share one snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence

from .insight_rows import (
    ACTIVITY_BUCKET_SECONDS,
    LARGEST_SESSIONS,
    ActivityRow,
    SessionUsageRow,
    UsageRow,
)
from .selection_sql import SESSION_TOKENS_SQL
from .statements import Sql

_UNCOSTED = "s.cost_actual_usd IS NULL AND s.cost_estimated_usd IS NULL"
"""A session with neither a provider-reported nor a stored estimated cost."""


def usage_rows(sql: Sql, where: str, params: Sequence[object]) -> list[UsageRow]:
    """Session counters per (source, model) over the sessions matching ``where``, by source
    and model in byte order (no model first)."""
    order = sql.binary_order
    rows = sql.execute(
        "SELECT s.source, s.model, count(*), sum(s.message_count), sum(s.input_tokens), "
        "sum(s.output_tokens), sum(s.tool_call_count), "
        "coalesce(sum(s.cost_actual_usd), 0), count(s.cost_actual_usd), "
        "coalesce(sum(CASE WHEN s.cost_actual_usd IS NULL THEN s.cost_estimated_usd END), 0), "
        "count(CASE WHEN s.cost_actual_usd IS NULL THEN s.cost_estimated_usd END), "
        f"count(CASE WHEN {_UNCOSTED} THEN 1 END), "
        f"count(CASE WHEN {_UNCOSTED} AND {SESSION_TOKENS_SQL} > 0 THEN 1 END), "
        f"sum(CASE WHEN {_UNCOSTED} THEN s.input_tokens ELSE 0 END), "
        f"sum(CASE WHEN {_UNCOSTED} THEN s.output_tokens ELSE 0 END), "
        "min(s.started_at), max(s.last_active_at), "
        "sum(s.cache_read_tokens), sum(s.cache_write_tokens), "
        f"sum(CASE WHEN {_UNCOSTED} THEN s.cache_read_tokens ELSE 0 END), "
        f"sum(CASE WHEN {_UNCOSTED} THEN s.cache_write_tokens ELSE 0 END) "
        f"FROM sessions s WHERE {where} GROUP BY s.source, s.model "
        f"ORDER BY s.source{order}, s.model{order} NULLS FIRST",
        list(params),
    ).fetchall()
    return [
        UsageRow(
            source=row[0],
            model=row[1],
            sessions=int(row[2]),
            messages=int(row[3]),
            input_tokens=int(row[4]),
            output_tokens=int(row[5]),
            tool_calls=int(row[6]),
            actual_cost_usd=float(row[7]),
            actual_cost_sessions=int(row[8]),
            stored_estimate_usd=float(row[9]),
            stored_estimate_sessions=int(row[10]),
            uncosted_sessions=int(row[11]),
            uncosted_with_tokens=int(row[12]),
            uncosted_input_tokens=int(row[13]),
            uncosted_output_tokens=int(row[14]),
            first_started_at=row[15],
            last_active_at=row[16],
            cache_read_tokens=int(row[17]),
            cache_write_tokens=int(row[18]),
            uncosted_cache_read_tokens=int(row[19]),
            uncosted_cache_write_tokens=int(row[20]),
        )
        for row in rows
    ]


def activity_rows(sql: Sql, where: str, params: Sequence[object], bucket: str) -> list[ActivityRow]:
    """Session starts per :data:`ACTIVITY_BUCKET_SECONDS` of UTC time, oldest first.
    ``bucket``: the number of a session's bucket, from ``s.started_at``, as the backend
    rounds it."""
    size = ACTIVITY_BUCKET_SECONDS
    rows = sql.execute(
        f"SELECT {bucket} AS bucket, count(*), sum(s.message_count), sum({SESSION_TOKENS_SQL}) "
        f"FROM sessions s WHERE {where} GROUP BY bucket ORDER BY bucket",
        list(params),
    ).fetchall()
    return [
        ActivityRow(float(row[0] * size), int(row[1]), int(row[2]), int(row[3])) for row in rows
    ]


def largest_session_rows(
    sql: Sql, where: str, params: Sequence[object], limit: int = LARGEST_SESSIONS
) -> list[SessionUsageRow]:
    """The ``limit`` sessions matching ``where`` with the most tokens (ties by id)."""
    rows = sql.execute(
        "SELECT s.id, s.title, s.source, s.model, s.started_at, s.message_count, "
        "s.input_tokens, s.output_tokens, s.cost_actual_usd, s.cost_estimated_usd, "
        "s.cache_read_tokens, s.cache_write_tokens "
        f"FROM sessions s WHERE {where} AND {SESSION_TOKENS_SQL} > 0 "
        f"ORDER BY {SESSION_TOKENS_SQL} DESC, s.id{sql.binary_order} LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [SessionUsageRow(*row) for row in rows]
