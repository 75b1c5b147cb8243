"""Sample sessions for ``hermes demo``: a small, varied history made by the project itself,
so a new user sees listings, titles, lineage, pins and stats without any data of their own."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from hermes_hookspecs import Message, ToolCall

from hermes_core.store import SessionStore


@dataclass(frozen=True, slots=True)
class DemoConversation:
    source: str
    title: str | None
    cwd: str | None
    model: str
    turns: tuple[tuple[str, str, str | None], ...]
    """(user text, assistant text, tool used or None)."""


CONVERSATIONS: tuple[DemoConversation, ...] = (
    DemoConversation(
        "cli",
        "refactoring auth",
        "/home/ana/code/payments",
        "claude-sonnet-4",
        (
            (
                "Help me refactor the auth module please, the token refresh logic is duplicated.",
                "I found the refresh logic in `auth/session.py` and `auth/api.py`. I'll extract it into "
                "`auth/tokens.py` with one `refresh_if_expired()` function and update both callers.",
                "read_file",
            ),
            (
                "Good. Keep the retry behaviour exactly as it is.",
                "Done: retries (3 attempts, exponential back-off) are unchanged and the tests pass.",
                "terminal",
            ),
        ),
    ),
    DemoConversation(
        "telegram",
        None,
        None,
        "gpt-5",
        (
            (
                "What's the weather in Las Vegas?",
                "It is sunny in Las Vegas, 31 °C in the afternoon, dropping to 19 °C tonight.",
                "web_search",
            ),
        ),
    ),
    DemoConversation(
        "cli",
        "my project",
        "/home/ana/code/atlas",
        "gpt-5",
        (
            (
                "Can you check the test failures?",
                "Two tests fail in `test_parser.py`: both expect the old date format. Updating them.",
                "terminal",
            ),
            ("Also run the linter.", "ruff reports no problems after the fix.", "terminal"),
        ),
    ),
    DemoConversation(
        "discord",
        "release checklist",
        None,
        "qwen3-coder",
        (
            (
                "Draft the release checklist for v2.3",
                "1. Freeze main  2. Update CHANGELOG  3. Tag v2.3.0  4. Build wheels  5. Publish  6. Announce.",
                None,
            ),
        ),
    ),
    DemoConversation(
        "slack",
        None,
        None,
        "claude-sonnet-4",
        (
            (
                "Summarise yesterday's incident thread for the status page.",
                "Between 14:05 and 14:40 UTC the API returned errors for 8% of requests after a bad config "
                "push. The change was rolled back; no data was lost.",
                None,
            ),
        ),
    ),
    DemoConversation(
        "cron",
        "nightly backup report",
        None,
        "gpt-5-mini",
        (
            (
                "Run the nightly backup check and report.",
                "All 4 backup targets completed. Largest: postgres (12.4 GB, 6 min).",
                "terminal",
            ),
        ),
    ),
    DemoConversation(
        "cli",
        "数据库迁移计划",
        "/home/ana/code/atlas",
        "qwen3-coder",
        (
            (
                "帮我写一个数据库迁移计划，把用户表拆成两张表。",
                "好的：第一步新建 profiles 表，第二步回填数据，第三步切换读写，最后删除旧列。",
                None,
            ),
        ),
    ),
    DemoConversation(
        "whatsapp",
        None,
        None,
        "gpt-5",
        (
            (
                "Remind me what we decided about the team offsite?",
                "You chose Lisbon, 12–14 March, with the budget capped at 900 € per person.",
                None,
            ),
        ),
    ),
    DemoConversation(
        "cli",
        "flaky CI investigation",
        "/home/ana/code/payments",
        "claude-sonnet-4",
        (
            (
                "The CI job `integration` fails one run in five. Find out why.",
                "The failing runs all start the mock server before the port is free. I added a readiness "
                "wait; 40 consecutive runs passed.",
                "terminal",
            ),
        ),
    ),
    DemoConversation(
        "api-server",
        None,
        None,
        "gpt-5-mini",
        (
            (
                "Classify this support ticket: 'I was charged twice for March'.",
                "Category: billing / duplicate charge. Priority: high.",
                None,
            ),
        ),
    ),
    DemoConversation(
        "matrix",
        "reading group notes",
        None,
        "claude-sonnet-4",
        (
            (
                "Give me three discussion questions for chapter 4 of 'Designing Data-Intensive Applications'.",
                "1. When is a leaderless design worth its complexity? 2. How would you test read-your-writes? "
                "3. Which of your systems silently relies on clock synchronisation?",
                None,
            ),
        ),
    ),
    DemoConversation(
        "cli",
        None,
        "/home/ana/code/dotfiles",
        "gpt-5",
        (
            (
                "Why does my zsh prompt take two seconds to appear?",
                "`nvm` is loaded eagerly in `.zshrc`. Loading it lazily cuts start-up to 0.2 s.",
                "terminal",
            ),
        ),
    ),
)


def fill_demo_store(store: SessionStore, *, seed: int = 7, now: float | None = None) -> list[str]:
    """Write the demo conversations into ``store``; returns the ids created."""
    rng = random.Random(seed)
    now = time.time() if now is None else now
    created: list[str] = []
    for index, conversation in enumerate(CONVERSATIONS):
        started = now - (index * 0.9 + rng.uniform(0.05, 0.8)) * 86_400
        session = store.create_session(
            conversation.source,
            title=conversation.title,
            started_at=started,
            gateway=conversation.source not in {"cli", "cron", "api-server"},
            cwd=conversation.cwd,
            model=conversation.model,
            system_prompt="You are Hermes, a helpful agent.",
        )
        clock = started
        for user_text, assistant_text, tool in conversation.turns:
            clock += rng.uniform(20, 300)
            messages = [Message("user", user_text, timestamp=clock)]
            if tool:
                messages.append(
                    Message(
                        "assistant",
                        "",
                        timestamp=clock + 2,
                        tool_calls=(ToolCall(tool, "{}", "call_1"),),
                    )
                )
                messages.append(
                    Message(
                        "tool",
                        f"[{tool}] ok\n(output of {tool})",
                        timestamp=clock + 4,
                        tool_name=tool,
                        tool_call_id="call_1",
                    )
                )
            messages.append(Message("assistant", assistant_text, timestamp=clock + 8))
            store.append_messages(session.id, messages)
            store.record_usage(
                session.id,
                input_tokens=rng.randint(300, 3000),
                output_tokens=rng.randint(100, 900),
                cost_estimated_usd=round(rng.uniform(0.001, 0.05), 4),
            )
        if index > 0:
            store.end_session(session.id, "user_exit", ended_at=clock + 60)
        created.append(session.id)
    # A compression lineage: "my project" → "my project #2" → "my project #3".
    lineage_root = created[2]
    tip = lineage_root
    for step in (2, 3):
        child = store.continue_after_compression(tip)
        store.append_messages(
            child.id,
            [
                Message(
                    "user",
                    f"Continue with step {step} of the test clean-up.",
                    timestamp=time.time() - (4 - step) * 3600,
                ),
                Message(
                    "assistant",
                    "Continuing from the compressed summary: done.",
                    timestamp=time.time() - (4 - step) * 3600 + 30,
                ),
            ],
        )
        created.append(child.id)
        tip = child.id
    # A delegate working for the flaky-CI session (hidden from listings unless --all).
    delegate = store.create_session(
        "cli",
        parent_session_id=created[8],
        parent_kind="delegate",
        started_at=now - 3 * 86_400,
        cwd="/home/ana/code/payments",
    )
    store.append_messages(
        delegate.id,
        [
            Message("user", "Run the integration job 40 times and count failures."),
            Message("assistant", "0 failures in 40 runs."),
        ],
    )
    store.end_session(delegate.id, "done")
    created.append(delegate.id)
    store.set_pinned([created[0]], True)
    store.wait_for_titles(timeout=5)
    return created
