"""The PostgreSQL side of ``Store.insight_rows``: the same rows, with the same meaning, as the
SQLite queries (``hermes_core/store/insight_rows.py`` says what each figure is).

Session-level figures (usage, activity, the largest sessions) are the statements both stores
take (``hermes_core/store/insight_queries.py``); this module gives them the time bucket. Tool
results are counted in SQL by tool name; the failure rule (``TOOL_FAILURE_RULE`` in the core)
is applied in SQL for its text forms (``error…``, a Python traceback) and, for results that start with ``{``, by reading
them as JSON here — PostgreSQL 15 has no ``IS JSON`` test that could refuse invalid text without
raising, and only those rows are read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hermes_core.store.insight_queries import activity_rows, largest_session_rows, usage_rows
from hermes_core.store.insight_rows import ACTIVITY_BUCKET_SECONDS, InsightRows, ToolResultRow

from .statements import PostgresSql

if TYPE_CHECKING:
    import psycopg

_BUCKET = f"floor(s.started_at / {ACTIVITY_BUCKET_SECONDS})::bigint"
"""A session's activity bucket: its start over the bucket size, rounded down."""

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


def insight_rows(db: psycopg.Connection[Any], where: str, params: Sequence[object]) -> InsightRows:
    """Usage, activity and tool rows for one selection, read in one snapshot."""
    sql = PostgresSql(db)
    with db.transaction():
        db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return InsightRows(
            usage=usage_rows(sql, where, params),
            activity=activity_rows(sql, where, params, _BUCKET),
            tools=tool_result_rows(db, where, params),
            largest=largest_session_rows(sql, where, params),
        )
