"""The SQLite side of ``Store.insight_rows`` (the rows and what they mean: :mod:`.insight_rows`):
usage, cost inputs, activity and tool results over a selection of sessions, each one ``GROUP BY``
in SQL (never a walk over messages in Python).

The selection is the F1 condition :func:`.selection_sql.build_where` produces over ``sessions``
aliased ``s``. Session-level figures come from the session counters alone; the tool
figures read the partial index ``idx_messages_tool_results`` (schema v4), which holds every tool
result's session, tool name and failure flag, so no message row is read for them.

When a tool result counts as failed is :data:`TOOL_FAILED_SQL` (the generated column
``messages.tool_failed``); ``docs/cli.md`` documents the rule.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from .insight_rows import (
    ACTIVITY_BUCKET_SECONDS,
    LARGEST_SESSIONS,
    ActivityRow,
    InsightRows,
    SessionUsageRow,
    ToolResultRow,
    UsageRow,
)
from .selection_sql import SESSION_TOKENS_SQL

_HEAD = "ltrim(substr(content, 1, 300), char(32, 9, 10, 13))"
"""The start of a message, leading white space removed (only the head is ever copied)."""

TOOL_FAILED_SQL = f"""CASE
    WHEN role != 'tool' THEN NULL
    WHEN lower(substr({_HEAD}, 1, 5)) = 'error' AND substr({_HEAD}, 6, 1) NOT GLOB '[A-Za-z]'
        THEN 1
    WHEN substr({_HEAD}, 1, 34) = 'Traceback (most recent call last):' THEN 1
    WHEN substr({_HEAD}, 1, 1) = '{{' AND json_valid(content) THEN
        CASE
            WHEN json_type(content, '$.error') NOT IN ('null', 'false')
                AND json_extract(content, '$.error') NOT IN ('', 0) THEN 1
            WHEN json_type(content, '$.isError') = 'true' THEN 1
            WHEN json_type(content, '$.is_error') = 'true' THEN 1
            ELSE 0
        END
    ELSE 0
END"""
"""1 when a tool result reports a failure, 0 when not, NULL for other roles.

The rule is :data:`.insight_rows.TOOL_FAILURE_RULE`."""


def usage_rows(
    connection: sqlite3.Connection, where: str, params: Sequence[object]
) -> list[UsageRow]:
    """Session counters per (source, model) over the sessions matching ``where``."""
    rows = connection.execute(
        "SELECT s.source, s.model, count(*), sum(s.message_count), sum(s.input_tokens), "
        "sum(s.output_tokens), sum(s.tool_call_count), "
        "coalesce(sum(s.cost_actual_usd), 0), count(s.cost_actual_usd), "
        "coalesce(sum(CASE WHEN s.cost_actual_usd IS NULL THEN s.cost_estimated_usd END), 0), "
        "count(CASE WHEN s.cost_actual_usd IS NULL THEN s.cost_estimated_usd END), "
        "sum(s.cost_actual_usd IS NULL AND s.cost_estimated_usd IS NULL), "
        "sum(s.cost_actual_usd IS NULL AND s.cost_estimated_usd IS NULL "
        f"    AND {SESSION_TOKENS_SQL} > 0), "
        "sum(CASE WHEN s.cost_actual_usd IS NULL AND s.cost_estimated_usd IS NULL "
        "    THEN s.input_tokens ELSE 0 END), "
        "sum(CASE WHEN s.cost_actual_usd IS NULL AND s.cost_estimated_usd IS NULL "
        "    THEN s.output_tokens ELSE 0 END), "
        "min(s.started_at), max(s.last_active_at), "
        "sum(s.cache_read_tokens), sum(s.cache_write_tokens), "
        "sum(CASE WHEN s.cost_actual_usd IS NULL AND s.cost_estimated_usd IS NULL "
        "    THEN s.cache_read_tokens ELSE 0 END), "
        "sum(CASE WHEN s.cost_actual_usd IS NULL AND s.cost_estimated_usd IS NULL "
        "    THEN s.cache_write_tokens ELSE 0 END) "
        f"FROM sessions s WHERE {where} GROUP BY s.source, s.model ORDER BY s.source, s.model",
        list(params),
    )
    return [
        UsageRow(
            source=row[0],
            model=row[1],
            sessions=row[2],
            messages=row[3],
            input_tokens=row[4],
            output_tokens=row[5],
            tool_calls=row[6],
            actual_cost_usd=float(row[7]),
            actual_cost_sessions=row[8],
            stored_estimate_usd=float(row[9]),
            stored_estimate_sessions=row[10],
            uncosted_sessions=row[11],
            uncosted_with_tokens=row[12],
            uncosted_input_tokens=row[13],
            uncosted_output_tokens=row[14],
            first_started_at=row[15],
            last_active_at=row[16],
            cache_read_tokens=row[17],
            cache_write_tokens=row[18],
            uncosted_cache_read_tokens=row[19],
            uncosted_cache_write_tokens=row[20],
        )
        for row in rows
    ]


def activity_rows(
    connection: sqlite3.Connection, where: str, params: Sequence[object]
) -> list[ActivityRow]:
    """Session starts per :data:`ACTIVITY_BUCKET_SECONDS` of UTC time, oldest first."""
    size = ACTIVITY_BUCKET_SECONDS
    rows = connection.execute(
        f"SELECT CAST(s.started_at / {size} AS INTEGER) AS bucket, count(*), "
        f"sum(s.message_count), sum({SESSION_TOKENS_SQL}) "
        f"FROM sessions s WHERE {where} GROUP BY bucket ORDER BY bucket",
        list(params),
    )
    return [ActivityRow(float(row[0] * size), row[1], row[2], row[3]) for row in rows]


def tool_result_rows(
    connection: sqlite3.Connection, where: str, params: Sequence[object]
) -> list[ToolResultRow]:
    """Tool results and failures per tool over the sessions matching ``where``.

    The selected sessions' ids drive seeks into the covering index (one range per session),
    so named results are counted without reading a message row. A result stored without a tool
    name (rare) takes the name of the assistant tool call it answers (same session, same call
    id); those are looked up in a second query that reads only their rows.
    """
    counts: dict[str | None, list[int]] = {}
    named = connection.execute(
        "SELECT m.tool_name, count(*), sum(m.tool_failed) FROM messages m "
        "WHERE m.role = 'tool' AND m.tool_name IS NOT NULL "
        f"AND m.session_id IN (SELECT s.id FROM sessions s WHERE {where}) GROUP BY m.tool_name",
        list(params),
    )
    for name, results, failed in named:
        counts[name] = [results, failed]
    unnamed = connection.execute(
        "SELECT (SELECT json_extract(call.value, '$.name') "
        "        FROM messages a, json_each(a.tool_calls) AS call "
        "        WHERE a.session_id = m.session_id AND a.id < m.id "
        "          AND a.tool_calls IS NOT NULL "
        "          AND json_extract(call.value, '$.id') = m.tool_call_id "
        "        ORDER BY a.id DESC LIMIT 1) AS name, count(*), sum(m.tool_failed) "
        "FROM messages m WHERE m.role = 'tool' AND m.tool_name IS NULL "
        f"AND m.session_id IN (SELECT s.id FROM sessions s WHERE {where}) GROUP BY name",
        list(params),
    )
    for name, results, failed in unnamed:
        found = counts.setdefault(name if isinstance(name, str) and name else None, [0, 0])
        found[0] += results
        found[1] += failed
    return [ToolResultRow(name, results, failed) for name, (results, failed) in counts.items()]


def largest_session_rows(
    connection: sqlite3.Connection,
    where: str,
    params: Sequence[object],
    limit: int = LARGEST_SESSIONS,
) -> list[SessionUsageRow]:
    """The ``limit`` sessions matching ``where`` with the most tokens."""
    rows = connection.execute(
        "SELECT s.id, s.title, s.source, s.model, s.started_at, s.message_count, "
        "s.input_tokens, s.output_tokens, s.cost_actual_usd, s.cost_estimated_usd, "
        "s.cache_read_tokens, s.cache_write_tokens "
        f"FROM sessions s WHERE {where} AND {SESSION_TOKENS_SQL} > 0 "
        f"ORDER BY {SESSION_TOKENS_SQL} DESC, s.id LIMIT ?",
        [*params, limit],
    )
    return [SessionUsageRow(*row) for row in rows]


def insight_rows(
    connection: sqlite3.Connection, where: str, params: Sequence[object]
) -> InsightRows:
    """Usage, activity and tool rows for one selection, read in one snapshot."""
    in_transaction = connection.in_transaction
    if not in_transaction:
        # One read transaction: the three queries see the same store even while others write.
        connection.execute("BEGIN")
    try:
        return InsightRows(
            usage=usage_rows(connection, where, params),
            activity=activity_rows(connection, where, params),
            tools=tool_result_rows(connection, where, params),
            largest=largest_session_rows(connection, where, params),
        )
    finally:
        if not in_transaction:
            connection.execute("COMMIT")
