"""End to end: the installed ``hermes gateway run`` with the slack plugin; the Slack stand-in
plays Slack both ways over real HTTP (signed Events API deliveries and slash commands into the
gateway, slack_sdk's Web API calls out of it); the stand-in model. A DM, a channel with two
users, a thread, the chat commands from Slack, signature refusals and retries; and the plugin
installed alone beside the core (SPEC O2, G1, G7)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fresh_venv import fresh_venv_with, listed_distributions, run_hermes
from gateway_helpers import title_reply, user_texts
from gateway_process import GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply
from standins.slack_api import BOT_USER, SlackStandIn

from hermes_core.store import SessionStore
from hermes_core.store.routed_sessions import RoutingStore

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Any:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def slack() -> Any:
    with SlackStandIn() as server:
        yield server


def platform(server: SlackStandIn) -> dict[str, Any]:
    return {
        "slack": {
            "bot_token": server.token,
            "signing_secret": server.signing_secret,
            "base_url": server.base_url,
            "port": 0,
        }
    }


def answer_to(server: SlackStandIn, act: Any) -> dict[str, Any]:
    """Do ``act`` (a Slack delivery, acknowledged 200) and return the app's next post."""
    count = len(server.posted)
    result = act()
    answer = result[1] if isinstance(result, tuple) else result
    assert answer.status == 200, answer
    return server.wait_for_posts(count + 1)[count]


def sessions_by_key(home: Path) -> dict[str, list[str]]:
    with SessionStore.open(home) as store:
        return {
            str(s.session_key): user_texts(store.messages(s.id))
            for s in store.select_sessions()
            if s.source == "slack"
        }


def test_a_dm_with_the_commands_signatures_and_retries(
    tmp_path: Path, standin: OpenAIStandIn, slack: SlackStandIn
) -> None:
    standin.add(Reply(text="Hello from Hermes"), Reply(text="Still here."), Reply(text="Fresh."))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(slack))
    dm = slack.channel("im")
    with GatewayProcess(home) as gateway:
        slack.events_url = gateway.addresses["slack"]
        assert slack.events_url.startswith("http://127.0.0.1:")
        verified = slack.verify_url("challenge-123")
        assert verified.status == 200 and json.loads(verified.body) == {
            "challenge": "challenge-123"
        }
        first = answer_to(slack, lambda: slack.user_says(dm, "U1", "hi there"))
        assert first["text"] == "Hello from Hermes" and first["channel"] == dm
        assert "thread_ts" not in first
        ts, _ = slack.user_says(dm, "U1", "are you there?")
        assert slack.wait_for_posts(2)[1]["text"] == "Still here."
        # Slack retrying a delivery it thinks was lost: acknowledged, stored once.
        retry = {"type": "message", "channel": dm, "channel_type": "im", "user": "U1",
                 "text": "are you there?", "ts": ts}  # fmt: skip
        assert slack.deliver_event(retry, headers={"X-Slack-Retry-Num": "1"}).status == 200
        # Refusals, one log line each, nothing stored.
        body = json.dumps(slack.envelope({**retry, "ts": "1.1", "text": "forged"})).encode()
        assert slack.post_signed(body, secret="not-the-secret").status == 401
        assert slack.post_signed(body, timestamp=str(int(time.time()) - 3600)).status == 401
        titled = answer_to(slack, lambda: slack.slash_command(dm, "U1", "/title", "Trip planning"))
        assert titled["text"] == "✓ Title set: Trip planning" and titled["channel"] == dm
        shown = answer_to(slack, lambda: slack.slash_command(dm, "U1", "/title", ""))
        assert shown["text"] == "Title: Trip planning"
        home_set = answer_to(slack, lambda: slack.slash_command(dm, "U1", "/sethome", ""))
        assert home_set["text"] == "✓ This chat is now the home channel of slack."
        renewed = answer_to(slack, lambda: slack.user_says(dm, "U1", f"<@{BOT_USER}> /new"))
        assert renewed["text"].startswith("✓")
        assert answer_to(slack, lambda: slack.user_says(dm, "U1", "new topic"))["text"] == "Fresh."
        # Slack delivers the bot's own messages back to the app: each acknowledged, none stored.
        assert {echo.status for echo in slack.wait_for_echoes()} == {200}
        assert gateway.terminate() == 0
    log = gateway.log_text()
    assert "Traceback" not in log
    assert sum("slack refused a request" in line for line in log.splitlines()) == 2
    key = f"agent:main:slack:dm:{dm}"
    with SessionStore.open(home) as store:
        old, new = sorted(
            (s for s in store.select_sessions() if s.session_key == key),
            key=lambda s: s.started_at,
        )
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        texts = user_texts(store.messages(old.id))
        assert texts[:2] == ["hi there", "are you there?"] and texts.count("are you there?") == 1
        assert "forged" not in str(user_texts(store.messages(old.id)))
        assert user_texts(store.messages(new.id)) == ["new topic"]
        assert RoutingStore(store).home("slack") == (dm, None)


def test_a_channel_keeps_users_apart_and_a_thread_is_shared(
    tmp_path: Path, standin: OpenAIStandIn, slack: SlackStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(slack))
    channel = slack.channel("channel")
    with GatewayProcess(home) as gateway:
        slack.events_url = gateway.addresses["slack"]
        answer_to(slack, lambda: slack.user_says(channel, "UALICE", "alice: my secret is 42"))
        answer_to(slack, lambda: slack.user_says(channel, "UBOB", "bob: my secret is 7"))
        answer_to(slack, lambda: slack.user_says(channel, "UALICE", "alice again"))
        anchor, _ = slack.user_says(channel, "UBOB", "bob again")
        assert "thread_ts" not in slack.wait_for_posts(4)[3]
        in_thread = answer_to(
            slack, lambda: slack.user_says(channel, "UALICE", "thread: ship?", thread_ts=anchor)
        )
        assert in_thread["thread_ts"] == anchor
        answer_to(slack, lambda: slack.user_says(channel, "UBOB", "thread: yes", thread_ts=anchor))
        titled = answer_to(
            slack,
            lambda: slack.user_says(
                channel, "UBOB", f"<@{BOT_USER}> /title Release plan", thread_ts=anchor
            ),
        )
        assert titled["text"] == "✓ Title set: Release plan" and titled["thread_ts"] == anchor
        assert gateway.terminate() == 0
    assert sessions_by_key(home) == {
        f"agent:main:slack:group:{channel}:UALICE": ["alice: my secret is 42", "alice again"],
        f"agent:main:slack:group:{channel}:UBOB": ["bob: my secret is 7", "bob again"],
        f"agent:main:slack:group:{channel}:{anchor}": ["thread: ship?", "thread: yes"],
    }
    bob_turn = next(
        body for body in standin.requests
        if "bob again" in str(body["messages"][-1].get("content"))
    )  # fmt: skip
    assert "secret is 42" not in str(bob_turn["messages"])
    with SessionStore.open(home) as store:
        (shared,) = [s for s in store.select_sessions() if s.thread_id == anchor]
        assert shared.title == "Release plan"


def test_a_refused_token_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn, slack: SlackStandIn
) -> None:
    home = tmp_path / "home"
    settings = platform(slack)
    settings["slack"]["bot_token"] = "xoxb-wrong"
    write_config(home, standin.base_url, settings)
    gateway = GatewayProcess(home)
    with pytest.raises(AssertionError, match="exited early"):
        gateway.start()
    assert gateway.process is not None and gateway.process.wait(30) == 1
    lines = [line for line in gateway.log_text().splitlines() if "slack" in line]
    assert len(lines) == 1
    assert "gateway.platforms.slack.bot_token was refused by Slack (invalid_auth)" in lines[0]


def test_the_slack_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    bin_folder = fresh_venv_with(tmp_path, "hermes-platform-slack")
    home = tmp_path / "home"
    home.mkdir()
    assert listed_distributions(bin_folder, home) == {"hermes-platform-slack"}
    listed = run_hermes(bin_folder, home, "plugins")
    assert listed.returncode == 0 and "platform:slack" in listed.stdout


def test_slack_hears_back_within_three_seconds_while_the_chat_is_busy(
    tmp_path: Path, standin: OpenAIStandIn, slack: SlackStandIn
) -> None:
    release = threading.Event()
    standin.add(
        Reply(text="Slow answer.", match="first", hold=release, hold_after_chunks=1),
        Reply(text="Second answer.", match="second"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(slack))
    dm = slack.channel("im")
    with GatewayProcess(home) as gateway:
        slack.events_url = gateway.addresses["slack"]
        assert slack.user_says(dm, "U1", "first")[1].status == 200
        deadline = time.monotonic() + 30
        while not any("first" in str(b["messages"]) for b in standin.requests):
            assert time.monotonic() < deadline, "the model was never asked"
            time.sleep(0.05)
        # The chat is busy with the first answer: Slack hears back within its window
        # (timeout=3 as Slack waits), 200 since the message is recorded in the gateway inbox;
        # a retry while it waits there is taken once.
        event = {"type": "message", "channel": dm, "channel_type": "im", "user": "U1",
                 "text": "second", "ts": "1700000000.000200"}  # fmt: skip
        assert slack.deliver_event(event, timeout=3).status == 200
        retried = slack.deliver_event(event, headers={"X-Slack-Retry-Num": "1"}, timeout=3)
        assert retried.status == 200
        release.set()
        posts = slack.wait_for_posts(2)
        assert [p["text"] for p in posts] == ["Slow answer.", "Second answer."]
        # Slack's later retry of the stored message: 200, not delivered again.
        again = slack.deliver_event(event, headers={"X-Slack-Retry-Num": "2"}, timeout=3)
        assert again.status == 200
        assert gateway.terminate() == 0
    assert len(slack.posted) == 2
    assert sessions_by_key(home) == {"agent:main:slack:dm:" + dm: ["first", "second"]}


def test_messages_written_while_the_gateway_was_down_are_answered_once_after_it_starts(
    tmp_path: Path, standin: OpenAIStandIn, slack: SlackStandIn
) -> None:
    standin.add(
        Reply(text="Before.", match="before the stop"),
        Reply(text="Caught up one.", match="while down one"),
        Reply(text="Caught up two.", match="while down two"),
        Reply(text="Live again.", match="after the start"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(slack))
    dm = slack.channel("im")
    with GatewayProcess(home) as gateway:
        slack.events_url = gateway.addresses["slack"]
        assert (
            answer_to(slack, lambda: slack.user_says(dm, "U1", "before the stop"))["text"]
            == "Before."
        )
        assert gateway.terminate() == 0
    slack.events_url = None
    slack.user_says(dm, "U1", "while down one", app_reachable=False)
    slack.user_says(dm, "U1", "while down two", app_reachable=False)
    with GatewayProcess(home) as gateway:
        slack.events_url = gateway.addresses["slack"]
        caught = slack.wait_for_posts(3)[1:]
        assert [p["text"] for p in caught] == ["Caught up one.", "Caught up two."]
        assert (
            answer_to(slack, lambda: slack.user_says(dm, "U1", "after the start"))["text"]
            == "Live again."
        )
        assert gateway.terminate() == 0
    with GatewayProcess(home) as gateway:  # nothing left to catch up
        time.sleep(3)
        assert gateway.terminate() == 0
    assert len(slack.posted) == 4
    assert sessions_by_key(home) == {
        "agent:main:slack:dm:" + dm: [
            "before the stop",
            "while down one",
            "while down two",
            "after the start",
        ]
    }


def test_a_reply_in_a_thread_written_while_the_gateway_was_down_is_answered_once_in_it(
    tmp_path: Path, standin: OpenAIStandIn, slack: SlackStandIn
) -> None:
    """``conversations.history`` leaves thread replies out: the threads the gateway took part
    in are read back with ``conversations.replies`` at start, and what came after the last
    stored reply is answered once, in its thread."""
    standin.add(
        Reply(text="In the thread.", match="thread: first"),
        Reply(text="Caught up in the thread.", match="thread: while down"),
        Reply(text="Top level.", times=None),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(slack))
    channel = slack.channel("channel")
    with GatewayProcess(home) as gateway:
        slack.events_url = gateway.addresses["slack"]
        anchor, _ = slack.user_says(channel, "UALICE", "a top-level question")
        slack.wait_for_posts(1)
        first = answer_to(
            slack, lambda: slack.user_says(channel, "UBOB", "thread: first", thread_ts=anchor)
        )
        assert first["thread_ts"] == anchor
        assert gateway.terminate() == 0
    slack.events_url = None
    slack.user_says(channel, "UBOB", "thread: while down", thread_ts=anchor, app_reachable=False)
    with GatewayProcess(home) as gateway:
        slack.events_url = gateway.addresses["slack"]
        caught = slack.wait_for_posts(3)[2]
        assert (caught["text"], caught["thread_ts"]) == ("Caught up in the thread.", anchor)
        assert gateway.terminate() == 0
    with GatewayProcess(home) as gateway:  # nothing left to catch up
        time.sleep(3)
        assert gateway.terminate() == 0
    assert len(slack.posted) == 3
    assert sessions_by_key(home)[f"agent:main:slack:group:{channel}:{anchor}"] == [
        "thread: first",
        "thread: while down",
    ]
