"""A store of five known sessions for the insights tests, built through ``SessionStore``, and
the figures they must give, worked out by hand (times in UTC).

| session | source | model | started (UTC) | messages | tokens in / out | cost | tool results |
|---|---|---|---|---|---|---|---|
| A | cli | gpt-5 | Mon 2026-07-06 09:10 | 5 | 1,000,000 / 200,000 | actual 1.00 + 2.00 | terminal ok, read_file "Error: …" |
| B | telegram | gpt-5-2025-08-07 | Mon 2026-07-06 21:40 | 4 | 2,000,000 / 500,000 | none → price table | unnamed, answers call c1 = terminal, `{"error": …}` |
| C | telegram | llama3 | Wed 2026-07-08 21:05 | 2 | 100 / 50 | none, no price | — |
| D | cli | claude-sonnet-4 | Wed 2026-07-08 10:00 | 4 | 3,000 / 1,000 | stored estimate 0.42 | terminal "Traceback …" |
| E | cli | (none) | Thu 2026-07-09 23:59 | 1 | 0 / 0 | none (nothing used) | — |

With ``PRICES`` (gpt-5: 1.25 in, 10 out per million tokens): B costs 2 × 1.25 + 0.5 × 10 = 7.50.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path

from hermes_hookspecs import Message, ToolCall

from hermes_core.insights import PriceTable
from hermes_core.store import SessionStore

UTC = _dt.UTC
PRICES_CONFIG = {"gpt-5": {"input_per_mtok": 1.25, "output_per_mtok": 10}}
PRICES = PriceTable.from_config(PRICES_CONFIG)

HOSTILE_TITLE = "<script>window.__pwned = 1</script>"
HOSTILE_MODEL = '"><img src=x onerror=alert(1)>'
HOSTILE_TOOL = "</style><svg onload=alert(2)><a href='https://evil.example/'>x</a>"
HOSTILE_SOURCE = "<iframe src=//evil.example>"


def utc(text: str) -> float:
    """``2026-07-06 09:10`` in UTC as a POSIX time."""
    return _dt.datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@dataclass(frozen=True)
class Sample:
    """The ids of the five sessions, by letter."""

    home: Path
    ids: dict[str, str]


def _messages(start: float, *messages: Message) -> list[Message]:
    for offset, message in enumerate(messages):
        message.timestamp = start + 60 * (offset + 1)
    return list(messages)


def build_sample(home: Path) -> Sample:
    """Create the five sessions of the table above in ``home``'s store."""
    ids: dict[str, str] = {}
    with SessionStore.open(home) as store:
        start = utc("2026-07-06 09:10")
        a = store.create_session("cli", title="Fix the parser", model="gpt-5", started_at=start)
        store.append_messages(
            a.id,
            _messages(
                start,
                Message(role="user", content="Why does the parser fail?"),
                Message(
                    role="assistant",
                    content="Let me look.",
                    tool_calls=(
                        ToolCall(name="terminal", arguments='{"cmd": "ls"}', id="c1"),
                        ToolCall(name="read_file", arguments='{"path": "p.py"}', id="c2"),
                    ),
                ),
                Message(
                    role="tool", content="p.py\ntests/", tool_name="terminal", tool_call_id="c1"
                ),
                Message(
                    role="tool",
                    content="Error: no such file p.py",
                    tool_name="read_file",
                    tool_call_id="c2",
                ),
                Message(role="assistant", content="The file is missing."),
            ),
        )
        store.record_usage(a.id, input_tokens=400_000, output_tokens=50_000, cost_actual_usd=1.0)
        store.record_usage(a.id, input_tokens=600_000, output_tokens=150_000, cost_actual_usd=2.0)
        ids["A"] = a.id

        start = utc("2026-07-06 21:40")
        b = store.create_session(
            "telegram",
            model="gpt-5-2025-08-07",
            started_at=start,
            input_tokens=2_000_000,
            output_tokens=500_000,
            chat_id="42",
        )
        store.append_messages(
            b.id,
            _messages(
                start,
                Message(role="user", content="weather in Porto?"),
                Message(
                    role="assistant",
                    content="",
                    tool_calls=(ToolCall(name="terminal", arguments="{}", id="c1"),),
                ),
                Message(role="tool", content='{"error": "timeout after 30 s"}', tool_call_id="c1"),
                Message(role="assistant", content="The lookup timed out."),
            ),
        )
        ids["B"] = b.id

        start = utc("2026-07-08 21:05")
        c = store.create_session(
            "telegram",
            model="llama3",
            started_at=start,
            input_tokens=100,
            output_tokens=50,
            chat_id="42",
        )
        store.append_messages(
            c.id,
            _messages(
                start,
                Message(role="user", content="hi"),
                Message(role="assistant", content="hello"),
            ),
        )
        ids["C"] = c.id

        start = utc("2026-07-08 10:00")
        d = store.create_session(
            "cli",
            model="claude-sonnet-4",
            started_at=start,
            input_tokens=3_000,
            output_tokens=1_000,
            cost_estimated_usd=0.42,
        )
        store.append_messages(
            d.id,
            _messages(
                start,
                Message(role="user", content="run the tests"),
                Message(
                    role="assistant",
                    content="",
                    tool_calls=(ToolCall(name="terminal", arguments="{}", id="c9"),),
                ),
                Message(
                    role="tool",
                    content="Traceback (most recent call last):\n  File 'x'\nValueError",
                    tool_name="terminal",
                    tool_call_id="c9",
                ),
                Message(role="assistant", content="A test fails."),
            ),
        )
        ids["D"] = d.id

        start = utc("2026-07-09 23:59")
        e = store.create_session("cli", started_at=start)
        store.append_messages(e.id, _messages(start, Message(role="user", content="anyone?")))
        ids["E"] = e.id
    return Sample(home, ids)


def hostile_home(tmp_path: Path) -> Path:
    """A store of one session whose title, source, model and tool name are hostile HTML."""
    home = tmp_path / "hostile"
    with SessionStore.open(home) as store:
        session = store.create_session(
            HOSTILE_SOURCE, title=HOSTILE_TITLE, model=HOSTILE_MODEL, input_tokens=10
        )
        store.append_messages(
            session.id,
            [Message(role="tool", content="Error: <b>x</b>", tool_name=HOSTILE_TOOL)],
        )
    return home
