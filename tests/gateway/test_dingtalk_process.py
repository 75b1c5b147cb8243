"""End to end: the installed ``hermes gateway run`` with the dingtalk plugin; the DingTalk
stand-in plays DingTalk both ways over real HTTP (signed robot callbacks into the gateway, the
answers to its sessionWebhook); the stand-in model. A single chat with the commands, a re-sent
message, forged and stale requests refused, a group with two people, a kill -9 right after the
acknowledgement, and the missing-secret line (SPEC O2, G1)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from gateway_helpers import user_texts
from gateway_process import GatewayProcess, write_config
from platform_process import (
    assert_installed_alone,
    hold_first_turn,
    model_standin,
    refused_to_start,
    sessions_by_key,
    wait_until_asked,
)
from standins.dingtalk_api import APP_SECRET, DingTalkStandIn
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

HOSTILE = "'; DROP TABLE sessions; -- $(rm -rf ~) `id` \x1b]0;PWNED\x07 <script>x</script>"


@pytest.fixture
def standin() -> Any:
    with model_standin() as server:
        yield server


@pytest.fixture
def dingtalk() -> Any:
    with DingTalkStandIn() as server:
        yield server


def platform(server: DingTalkStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "dingtalk": {
            "app_secret": APP_SECRET,
            "session_webhook_prefix": server.webhook_prefix,
            "port": 0,
            **extra,
        }
    }


def answer_to(server: DingTalkStandIn, act: Any) -> dict[str, Any]:
    """Do ``act`` (a callback, acknowledged 200) and return the robot's next post."""
    count = len(server.posted)
    _, answer = act()
    assert answer.status == 200, answer
    return server.wait_for_posts(count + 1)[count]


def test_a_single_chat_with_the_commands_a_resent_message_and_forged_requests(
    tmp_path: Path, standin: OpenAIStandIn, dingtalk: DingTalkStandIn
) -> None:
    standin.add(Reply(text="Hello from Hermes"), Reply(text="Still here."), Reply(text="Fresh."))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(dingtalk))
    with GatewayProcess(home) as gateway:
        dingtalk.robot_url = gateway.addresses["dingtalk"]
        first = answer_to(dingtalk, lambda: dingtalk.user_says("cid_single", "alice", "hi there"))
        assert first == {"conversationId": "cid_single", "text": "Hello from Hermes"}
        body, _ = dingtalk.user_says("cid_single", "alice", HOSTILE)
        assert dingtalk.wait_for_posts(2)[1]["text"] == "Still here."
        # DingTalk delivering the same message again: acknowledged, stored once, nothing posted.
        assert dingtalk.deliver(body).status == 200
        # Refused, nothing stored: a wrong signature, no signature, a stale timestamp, and a
        # signed request whose sessionWebhook points elsewhere.
        forged = {**body, "msgId": "forged", "text": {"content": "forged"}}
        assert dingtalk.deliver(forged, secret="not-the-secret").status == 401
        assert dingtalk.deliver(forged, signed=False).status == 401
        stale = str(int((time.time() - 7200) * 1000))
        assert dingtalk.deliver(forged, timestamp=stale).status == 401
        elsewhere = {**forged, "sessionWebhook": "http://127.0.0.1:9/steal"}
        assert dingtalk.deliver(elsewhere).status == 400
        titled = answer_to(
            dingtalk, lambda: dingtalk.user_says("cid_single", "alice", "/title Trip planning")
        )
        assert titled["text"] == "✓ Title set: Trip planning"
        renewed = answer_to(dingtalk, lambda: dingtalk.user_says("cid_single", "alice", "/new"))
        assert renewed["text"].startswith("✓")
        fresh = answer_to(dingtalk, lambda: dingtalk.user_says("cid_single", "alice", "new one"))
        assert fresh["text"] == "Fresh."
        assert gateway.terminate() == 0
    assert len(dingtalk.posted) == 5
    log = gateway.log_text()
    assert "Traceback" not in log
    assert sum("dingtalk refused a request" in line for line in log.splitlines()) == 4
    key = "agent:main:dingtalk:dm:cid_single"
    with SessionStore.open(home) as store:
        old, new = sorted(
            (s for s in store.select_sessions() if s.session_key == key),
            key=lambda s: s.started_at,
        )
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        assert user_texts(store.messages(old.id)) == ["hi there", HOSTILE]
        assert user_texts(store.messages(new.id)) == ["new one"]


def test_a_group_keeps_people_apart(
    tmp_path: Path, standin: OpenAIStandIn, dingtalk: DingTalkStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(dingtalk))
    with GatewayProcess(home) as gateway:
        dingtalk.robot_url = gateway.addresses["dingtalk"]

        def say(user: str, text: str, **extra: Any) -> dict[str, Any]:
            return answer_to(
                dingtalk,
                lambda: dingtalk.user_says("cid_group", user, text, conversation_type="2", **extra),
            )

        assert say("alice", "alice: my secret is 42")["conversationId"] == "cid_group"
        say("bob", "bob: my secret is 7")
        assert say("bob", "/title Bob's plan")["text"] == "✓ Title set: Bob's plan"
        say("alice", "", msgtype="picture")
        assert gateway.terminate() == 0
    assert sessions_by_key(home, "dingtalk") == {
        "agent:main:dingtalk:group:cid_group:alice": [
            "alice: my secret is 42",
            "[attachment: picture message]",
        ],
        "agent:main:dingtalk:group:cid_group:bob": ["bob: my secret is 7"],
    }
    bob_turn = next(b for b in standin.requests if "bob: my" in str(b["messages"][-1]))
    assert "secret is 42" not in str(bob_turn["messages"])


def test_a_message_acknowledged_before_a_kill_9_is_kept_and_its_resend_is_not_stored_twice(
    tmp_path: Path, standin: OpenAIStandIn, dingtalk: DingTalkStandIn
) -> None:
    standin.add(Reply(text="After the restart."))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(dingtalk))
    gateway = GatewayProcess(home).start()
    try:
        dingtalk.robot_url = gateway.addresses["dingtalk"]
        body, answer = dingtalk.user_says("cid_single", "alice", "kept across the kill")
        assert answer.status == 200
    finally:
        gateway.kill()
    assert sessions_by_key(home, "dingtalk") == {
        "agent:main:dingtalk:dm:cid_single": ["kept across the kill"]
    }
    with GatewayProcess(home) as again:
        dingtalk.robot_url = again.addresses["dingtalk"]
        assert dingtalk.deliver(body).status == 200  # the same message again after the kill
        after = answer_to(dingtalk, lambda: dingtalk.user_says("cid_single", "alice", "go on"))
        assert after["text"] == "After the restart."
        assert again.terminate() == 0
    assert sessions_by_key(home, "dingtalk") == {
        "agent:main:dingtalk:dm:cid_single": ["kept across the kill", "go on"]
    }


def test_a_missing_secret_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"dingtalk": {"app_secret_env": "NOT_SET_ANYWHERE"}})
    assert "gateway.platforms.dingtalk.app_secret is not set" in refused_to_start(home, "dingtalk")


def test_the_dingtalk_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    assert_installed_alone(tmp_path, "hermes-platform-dingtalk", "platform:dingtalk")


def test_dingtalk_hears_back_in_time_while_the_chat_is_busy_and_its_resends_are_taken_once(
    tmp_path: Path, standin: OpenAIStandIn, dingtalk: DingTalkStandIn
) -> None:
    release = hold_first_turn(standin)
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(dingtalk, ack_wait_seconds=1))
    with GatewayProcess(home) as gateway:
        dingtalk.robot_url = gateway.addresses["dingtalk"]
        assert dingtalk.user_says("cid_single", "alice", "first")[1].status == 200
        wait_until_asked(standin, "first")
        # The chat is busy: the next message is recorded in the gateway inbox all the same,
        # so DingTalk hears 200 in time; a re-send while it waits there is taken once.
        body, busy = dingtalk.user_says("cid_single", "alice", "second", timeout=3)
        assert busy.status == 200
        assert dingtalk.deliver(body, timeout=3).status == 200
        release.set()
        posts = dingtalk.wait_for_posts(2)
        assert [p["text"] for p in posts] == ["Slow answer.", "Second answer."]
        assert dingtalk.deliver(body, timeout=3).status == 200  # stored by now
        assert gateway.terminate() == 0
    assert len(dingtalk.posted) == 2
    assert sessions_by_key(home, "dingtalk") == {
        "agent:main:dingtalk:dm:cid_single": ["first", "second"]
    }
