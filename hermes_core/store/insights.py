"""The SQLite side of ``Store.insight_rows`` (the rows and what they mean: :mod:`.insight_rows`):
usage, cost inputs, activity and tool results over a selection of sessions, each one ``GROUP BY``
in SQL (never a walk over messages in Python). Usage, activity and the largest sessions are
the statements both stores take (:mod:`.insight_queries`); the tool results and the snapshot
are SQLite's own.

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

from .insight_queries import activity_rows, largest_session_rows, usage_rows
from .insight_rows import ACTIVITY_BUCKET_SECONDS, InsightRows, ToolResultRow
from .statements import SqliteSql

_BUCKET = f"CAST(s.started_at / {ACTIVITY_BUCKET_SECONDS} AS INTEGER)"
"""A session's activity bucket: its start over the bucket size, truncated."""

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


def insight_rows(
    connection: sqlite3.Connection, where: str, params: Sequence[object]
) -> InsightRows:
    """Usage, activity and tool rows for one selection, read in one snapshot."""
    sql = SqliteSql(connection)
    in_transaction = connection.in_transaction
    if not in_transaction:
        # One read transaction: the three queries see the same store even while others write.
        connection.execute("BEGIN")
    try:
        return InsightRows(
            usage=usage_rows(sql, where, params),
            activity=activity_rows(sql, where, params, _BUCKET),
            tools=tool_result_rows(connection, where, params),
            largest=largest_session_rows(sql, where, params),
        )
    finally:
        if not in_transaction:
            connection.execute("COMMIT")
