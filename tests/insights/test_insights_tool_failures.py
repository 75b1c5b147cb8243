"""When a tool result counts as failed (``messages.tool_failed``, schema v4), how a v3 store gets
the flag for the results it already holds, and that the tool figures come from the index."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_hookspecs import Message

from hermes_core.insights import build_report
from hermes_core.insights.pricing import PriceTable
from hermes_core.store import STATE_DB_NAME, SessionStore
from hermes_core.store.connection import open_connection
from hermes_core.store.schema import SCHEMA_VERSION, migrate

FAILED = [
    "Error: file not found",
    "error: permission denied",
    "ERROR",
    "Error",
    "  \n\tError - the command exited 2",
    "Error(connection refused)",
    "Traceback (most recent call last):\n  File 'x', line 1\nKeyError: 'a'",
    '{"error": "timeout"}',
    '  {"error": {"code": 500, "message": "boom"}}',
    '{"error": true, "output": ""}',
    '{"isError": true, "content": []}',
    '{"is_error": true}',
]
SUCCEEDED = [
    "ok",
    "",
    "errors found: 0",
    "Errorless run",
    "The command printed Error: only later",
    '{"error": null, "output": "fine"}',
    '{"error": false}',
    '{"error": ""}',
    '{"error": 0}',
    '{"isError": false}',
    '["error"]',
    "{not json at all, error: x}",
    "traceback: none",
]


@pytest.mark.parametrize(
    ("content", "failed"), [(c, 1) for c in FAILED] + [(c, 0) for c in SUCCEEDED]
)
def test_failure_rule(tmp_path: Path, content: str, failed: int) -> None:
    with SessionStore.open(tmp_path) as store:
        session = store.create_session()
        [message_id] = store.append_messages(
            session.id, [Message(role="tool", content=content, tool_name="terminal")]
        )
        flag = store.connection.execute(
            "SELECT tool_failed FROM messages WHERE id = ?", (message_id,)
        ).fetchone()[0]
        assert flag == failed
        [tool] = build_report(store.insight_rows(), PriceTable()).tools
        assert (tool.calls, tool.failed) == (1, failed)


def test_only_tool_results_can_fail(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        session = store.create_session()
        store.append_messages(
            session.id,
            [
                Message(role="user", content="Error: this is me typing"),
                Message(role="assistant", content="Error: I am not a tool"),
            ],
        )
        flags = [row[0] for row in store.connection.execute("SELECT tool_failed FROM messages")]
        assert flags == [None, None]
        assert build_report(store.insight_rows(), PriceTable()).tools == []


def test_editing_a_result_updates_its_flag(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path) as store:
        session = store.create_session()
        [message_id] = store.append_messages(
            session.id, [Message(role="tool", content="ok", tool_name="patch")]
        )
        store.update_message_content(message_id, "Error: patch did not apply")
        [tool] = build_report(store.insight_rows(), PriceTable()).tools
        assert (tool.name, tool.calls, tool.failed) == ("patch", 1, 1)


def test_a_v3_store_gets_the_flag_for_the_results_it_holds(tmp_path: Path) -> None:
    connection = open_connection(tmp_path / STATE_DB_NAME)
    try:
        migrate(connection, target=3)
        connection.execute("BEGIN")
        connection.execute(
            "INSERT INTO sessions (id, source, started_at, last_active_at, message_count) "
            "VALUES ('20240101_000000_abcdef', 'cli', 1704067200, 1704067300, 3)"
        )
        connection.executemany(
            "INSERT INTO messages (session_id, role, content, tool_name, timestamp) "
            "VALUES ('20240101_000000_abcdef', ?, ?, ?, 1704067201)",
            [
                ("user", "Error: a person wrote this", None),
                ("tool", "Error: disk full", "terminal"),
                ("tool", "done", "terminal"),
            ],
        )
        connection.execute("COMMIT")
    finally:
        connection.close()
    with SessionStore.open(tmp_path) as store:
        assert store.connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        [tool] = build_report(store.insight_rows(), PriceTable()).tools
        assert (tool.name, tool.calls, tool.failed) == ("terminal", 2, 1)


def test_tool_figures_read_the_tool_result_index(tmp_path: Path) -> None:
    from hermes_core.selection.filters import SessionFilter

    with SessionStore.open(tmp_path) as store:
        statements: list[str] = []
        store.connection.set_trace_callback(statements.append)
        store.insight_rows(SessionFilter(source="cli"))
        store.connection.set_trace_callback(None)
        [named] = [s for s in statements if "m.tool_name IS NOT NULL" in s]
        plan = " ".join(
            str(row[3]) for row in store.connection.execute("EXPLAIN QUERY PLAN " + named)
        )
    assert "idx_messages_tool_results" in plan
