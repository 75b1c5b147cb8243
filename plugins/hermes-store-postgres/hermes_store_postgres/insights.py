"""The PostgreSQL side of ``Store.insight_rows``: the same rows, with the same meaning, as the
SQLite queries (``hermes_core/store/insight_rows.py`` says what each figure is).

Session-level figures are ``GROUP BY`` over the session counters. Tool results are counted in
SQL by tool name; the failure rule (``TOOL_FAILURE_RULE`` in the core) is applied in SQL for its
text forms (``error…``, a Python traceback) and, for results that start with ``{``, by reading
them as JSON here — PostgreSQL 15 has no ``IS JSON`` test that could refuse invalid text without
raising, and only those rows are read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_core.store.insight_rows import (
    ACTIVITY_BUCKET_SECONDS,
    LARGEST_SESSIONS,
    ActivityRow,
    InsightRows,
    SessionUsageRow,
    ToolResultRow,
    UsageRow,
)
from hermes_core.store.selection_sql import SESSION_TOKENS_SQL

if TYPE_CHECKING:
    import psycopg

_HEAD = "ltrim(left(m.content, 300), E' \\t\\n\\r')"
"""The start of a tool result, leading white space removed."""

_TEXT_FAILED = (
    f"((lower(left({_HEAD}, 5)) = 'error' AND substr({_HEAD}, 6, 1) !~ '[A-Za-z]') "
    f"OR left({_HEAD}, 34) = 'Traceback (most recent call last):')"
)
"""The text forms of a failed tool result."""

_JSON_CANDIDATE = f"(left({_HEAD}, 1) = '{{' AND NOT {_TEXT_FAILED})"
"""Results whose failure depends on what their JSON says."""

_CALL_NAME = (
    "(SELECT call ->> 'name' FROM messages a, jsonb_array_elements(a.tool_calls::jsonb) AS call "
    "WHERE a.session_id = m.session_id AND a.id < m.id AND a.tool_calls IS NOT NULL "
    "AND call ->> 'id' = m.tool_call_id ORDER BY a.id DESC LIMIT 1)"
)
"""The name of the assistant call a result without a tool name answers."""


def json_result_failed(content: str) -> bool:
    """Whether a tool result that is a JSON object reports a failure: ``error`` set to
    anything but null, false, ``""`` or 0, or ``isError`` / ``is_error`` true."""
    try:
        value = json.loads(content)
    except ValueError:
        return False
    if not isinstance(value, dict):
        return False
    error = value.get("error")
    if error is not None and error is not False and error != "":
        is_zero = isinstance(error, int | float) and not isinstance(error, bool) and error == 0
        if not is_zero:
            return True
    return value.get("isError") is True or value.get("is_error") is True


def usage_rows(db: psycopg.Connection[Any], where: str, params: Sequence[object]) -> list[UsageRow]:
    """Session counters per (source, model) over the sessions matching ``where``."""
    uncosted = "s.cost_actual_usd IS NULL AND s.cost_estimated_usd IS NULL"
    rows = db.execute(
        "SELECT s.source, s.model, count(*), sum(s.message_count), sum(s.input_tokens), "
        "sum(s.output_tokens), sum(s.tool_call_count), "
        "coalesce(sum(s.cost_actual_usd), 0), count(s.cost_actual_usd), "
        "coalesce(sum(CASE WHEN s.cost_actual_usd IS NULL THEN s.cost_estimated_usd END), 0), "
        "count(CASE WHEN s.cost_actual_usd IS NULL THEN s.cost_estimated_usd END), "
        f"count(*) FILTER (WHERE {uncosted}), "
        f"count(*) FILTER (WHERE {uncosted} AND {SESSION_TOKENS_SQL} > 0), "
        f"coalesce(sum(s.input_tokens) FILTER (WHERE {uncosted}), 0), "
        f"coalesce(sum(s.output_tokens) FILTER (WHERE {uncosted}), 0), "
        "min(s.started_at), max(s.last_active_at), "
        "sum(s.cache_read_tokens), sum(s.cache_write_tokens), "
        f"coalesce(sum(s.cache_read_tokens) FILTER (WHERE {uncosted}), 0), "
        f"coalesce(sum(s.cache_write_tokens) FILTER (WHERE {uncosted}), 0) "
        f"FROM sessions s WHERE {where} GROUP BY s.source, s.model "
        'ORDER BY s.source COLLATE "C", s.model COLLATE "C" NULLS FIRST',
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
            first_started_at=float(row[15]),
            last_active_at=float(row[16]),
            cache_read_tokens=int(row[17]),
            cache_write_tokens=int(row[18]),
            uncosted_cache_read_tokens=int(row[19]),
            uncosted_cache_write_tokens=int(row[20]),
        )
        for row in rows
    ]


def activity_rows(
    db: psycopg.Connection[Any], where: str, params: Sequence[object]
) -> list[ActivityRow]:
    """Session starts per :data:`ACTIVITY_BUCKET_SECONDS` of UTC time, oldest first."""
    size = ACTIVITY_BUCKET_SECONDS
    rows = db.execute(
        f"SELECT floor(s.started_at / {size})::bigint AS bucket, count(*), "
        f"sum(s.message_count), sum({SESSION_TOKENS_SQL}) "
        f"FROM sessions s WHERE {where} GROUP BY bucket ORDER BY bucket",
        list(params),
    ).fetchall()
    return [
        ActivityRow(float(row[0] * size), int(row[1]), int(row[2]), int(row[3])) for row in rows
    ]


def tool_result_rows(
    db: psycopg.Connection[Any], where: str, params: Sequence[object]
) -> list[ToolResultRow]:
    """Tool results and failures per tool over the sessions matching ``where``."""
    selected = f"m.session_id IN (SELECT s.id FROM sessions s WHERE {where})"
    name = f"coalesce(m.tool_name, {_CALL_NAME})"
    counts: dict[str | None, list[int]] = {}
    for tool, results, failed in db.execute(
        f"SELECT {name} AS name, count(*), count(*) FILTER (WHERE {_TEXT_FAILED}) "
        f"FROM messages m WHERE m.role = 'tool' AND {selected} GROUP BY name",
        list(params),
    ).fetchall():
        counts[tool if tool else None] = [int(results), int(failed)]
    for tool, content in db.execute(
        f"SELECT {name}, m.content FROM messages m "
        f"WHERE m.role = 'tool' AND {selected} AND {_JSON_CANDIDATE}",
        list(params),
    ).fetchall():
        if json_result_failed(str(content)):
            counts.setdefault(tool if tool else None, [0, 0])[1] += 1
    return [ToolResultRow(tool, results, failed) for tool, (results, failed) in counts.items()]


def largest_session_rows(
    db: psycopg.Connection[Any],
    where: str,
    params: Sequence[object],
    limit: int = LARGEST_SESSIONS,
) -> list[SessionUsageRow]:
    """The ``limit`` sessions matching ``where`` with the most tokens."""
    rows = db.execute(
        "SELECT s.id, s.title, s.source, s.model, s.started_at, s.message_count, "
        "s.input_tokens, s.output_tokens, s.cost_actual_usd, s.cost_estimated_usd, "
        "s.cache_read_tokens, s.cache_write_tokens "
        f"FROM sessions s WHERE {where} AND {SESSION_TOKENS_SQL} > 0 "
        f'ORDER BY {SESSION_TOKENS_SQL} DESC, s.id COLLATE "C" LIMIT %s',
        [*params, limit],
    ).fetchall()
    return [SessionUsageRow(*row) for row in rows]


def insight_rows(db: psycopg.Connection[Any], where: str, params: Sequence[object]) -> InsightRows:
    """Usage, activity and tool rows for one selection, read in one snapshot."""
    with db.transaction():
        db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return InsightRows(
            usage=usage_rows(db, where, params),
            activity=activity_rows(db, where, params),
            tools=tool_result_rows(db, where, params),
            largest=largest_session_rows(db, where, params),
        )
