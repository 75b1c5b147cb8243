"""``insight_rows``: the aggregates ``hermes insights`` reports, over a selection (SPEC C5).

The meaning every backend keeps is in ``hermes_core/store/insight_rows.py``."""

from __future__ import annotations

from hermes_hookspecs import Message, ToolCall

from hermes_core.selection.filters import SessionFilter
from hermes_core.store.insight_rows import ACTIVITY_BUCKET_SECONDS
from hermes_core.store.protocol import Store

T0 = 1_780_000_500.0  # 1_780_000_200 is a multiple of 900
"""A start time 5 minutes into a 15-minute bucket."""


def _fixture(store: Store) -> dict[str, str]:
    made: dict[str, str] = {}
    a = store.create_session("cli", model="gpt-5", started_at=T0, title="Alpha")
    store.append_messages(
        a.id,
        [
            Message("user", "list the files", timestamp=T0 + 1),
            Message(
                "assistant",
                "",
                timestamp=T0 + 2,
                tool_calls=(
                    ToolCall(name="terminal", arguments="{}", id="c1"),
                    ToolCall(name="read_file", arguments="{}", id="c2"),
                ),
            ),
            Message("tool", "a.py", timestamp=T0 + 3, tool_name="terminal", tool_call_id="c1"),
            Message("tool", "Error: gone", timestamp=T0 + 4, tool_call_id="c2"),
        ],
    )
    store.record_usage(a.id, input_tokens=1_000, output_tokens=100, cost_actual_usd=0.25)
    made["a"] = a.id
    b = store.create_session(
        "telegram",
        model="gpt-5",
        started_at=T0 + 600,  # the next bucket
        input_tokens=50,
        output_tokens=5,
        cost_estimated_usd=0.01,
    )
    store.append_messages(
        b.id,
        [
            Message("user", "hi", timestamp=T0 + 601),
            Message("tool", '{"error": "no network"}', timestamp=T0 + 602, tool_name="web"),
        ],
    )
    made["b"] = b.id
    c = store.create_session("cli", started_at=T0 + 60, input_tokens=7, output_tokens=3)
    made["c"] = c.id
    store.create_session("cli", started_at=T0 + 120)  # no usage at all
    return made


def test_usage_rows_sum_the_counters_per_source_and_model(store: Store) -> None:
    _fixture(store)
    rows = {(r.source, r.model): r for r in store.insight_rows().usage}
    assert set(rows) == {("cli", "gpt-5"), ("telegram", "gpt-5"), ("cli", None)}
    a = rows[("cli", "gpt-5")]
    assert (a.sessions, a.messages, a.tool_calls) == (1, 4, 2)
    assert (a.input_tokens, a.output_tokens) == (1_000, 100)
    assert (a.actual_cost_usd, a.actual_cost_sessions) == (0.25, 1)
    assert (a.uncosted_sessions, a.uncosted_with_tokens) == (0, 0)
    b = rows[("telegram", "gpt-5")]
    assert (b.stored_estimate_usd, b.stored_estimate_sessions, b.actual_cost_sessions) == (
        0.01,
        1,
        0,
    )
    unnamed = rows[("cli", None)]
    assert (unnamed.sessions, unnamed.uncosted_sessions, unnamed.uncosted_with_tokens) == (2, 2, 1)
    assert (unnamed.uncosted_input_tokens, unnamed.uncosted_output_tokens) == (7, 3)
    assert unnamed.first_started_at == T0 + 60


def test_activity_rows_count_session_starts_per_quarter_hour(store: Store) -> None:
    _fixture(store)
    buckets = {
        r.bucket_start: (r.sessions, r.messages, r.tokens) for r in store.insight_rows().activity
    }
    first = T0 - T0 % ACTIVITY_BUCKET_SECONDS
    assert buckets == {
        first: (3, 4, 1_110),  # a, c and the empty one
        first + ACTIVITY_BUCKET_SECONDS: (1, 2, 55),  # b
    }


def test_tool_rows_name_results_by_their_call_and_count_failures(store: Store) -> None:
    _fixture(store)
    tools = {r.name: (r.results, r.failed) for r in store.insight_rows().tools}
    assert tools == {"terminal": (1, 0), "read_file": (1, 1), "web": (1, 1)}


def test_largest_sessions_have_tokens_most_first(store: Store) -> None:
    made = _fixture(store)
    largest = store.insight_rows().largest
    assert [s.id for s in largest] == [made["a"], made["b"], made["c"]]
    assert largest[0].title == "Alpha"
    assert (largest[0].cost_actual_usd, largest[1].cost_estimated_usd) == (0.25, 0.01)


def test_every_row_follows_the_selection(store: Store) -> None:
    _fixture(store)
    rows = store.insight_rows(SessionFilter(source="telegram"))
    assert [(r.source, r.sessions) for r in rows.usage] == [("telegram", 1)]
    assert [(r.name, r.results) for r in rows.tools] == [("web", 1)]
    assert [r.sessions for r in rows.activity] == [1]
    nothing = store.insight_rows(SessionFilter(source="matrix"))
    assert (nothing.usage, nothing.activity, nothing.tools, nothing.largest) == ([], [], [], [])


FAILURE_SAMPLES = [
    ("a.py\nb.py", False),
    ("Error: gone", True),
    ("  error", True),
    ("errors found: none", False),
    ("Traceback (most recent call last):\n  File …", True),
    ('{"error": "no network"}', True),
    ('{"error": null}', False),
    ('{"error": false}', False),
    ('{"error": ""}', False),
    ('{"error": 0}', False),
    ('{"error": {"code": 1}}', True),
    ('{"isError": true}', True),
    ('{"is_error": true}', True),
    ('{"is_error": false, "result": 1}', False),
    ("{not json", False),
    ("[1, 2]", False),
]


def test_every_backend_applies_the_same_tool_failure_rule(store: Store) -> None:
    session = store.create_session("cli", started_at=T0)
    calls = tuple(
        ToolCall(name=f"t{n}", arguments="{}", id=f"c{n}") for n in range(len(FAILURE_SAMPLES))
    )
    results = [
        Message("tool", text, timestamp=T0 + n, tool_name=f"t{n}", tool_call_id=f"c{n}")
        for n, (text, _) in enumerate(FAILURE_SAMPLES)
    ]
    store.append_messages(
        session.id, [Message("assistant", "", timestamp=T0, tool_calls=calls), *results]
    )
    tools = {row.name: row for row in store.insight_rows(SessionFilter()).tools}
    for n, (text, failed) in enumerate(FAILURE_SAMPLES):
        assert (tools[f"t{n}"].results, tools[f"t{n}"].failed) == (1, int(failed)), text
