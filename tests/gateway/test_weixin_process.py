"""End to end: the installed ``hermes gateway run`` with the weixin plugin; the Weixin stand-in
plays the Official Account platform both ways over real HTTP (the URL check and message pushes
into the gateway, waiting five seconds for each answer; the access token and customer-service
messages out of it); the stand-in model. A follower's chat with the commands answered by
passive replies, re-pushed messages, forged pushes refused, the safe mode with a slow answer
that follows by the API, a kill -9 right after the acknowledgement, the missing-token line, and
the plugin installed alone (SPEC O2, G1)."""

from __future__ import annotations

import threading
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
from standins.openai_server import OpenAIStandIn, Reply
from standins.weixin_api import (
    APP_ID,
    APP_SECRET,
    ENCODING_AES_KEY,
    TOKEN,
    CallbackAnswer,
    WeixinStandIn,
)

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

# XML 1.0 cannot carry control characters at all, so none come from Weixin; the rest can.
HOSTILE = "'; DROP TABLE sessions; -- $(rm -rf ~) `id` <script>x</script> ]]> <!DOCTYPE x> &amp;"


@pytest.fixture
def standin() -> Any:
    with model_standin() as server:
        yield server


@pytest.fixture
def weixin() -> Any:
    with WeixinStandIn() as server:
        yield server


def platform(server: WeixinStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "weixin": {
            "app_id": APP_ID,
            "app_secret": APP_SECRET,
            "token": TOKEN,
            "encoding_aes_key": ENCODING_AES_KEY,
            "api_base": server.base_url,
            "port": 0,
            **extra,
        }
    }


def answer_to(server: WeixinStandIn, open_id: str, text: str, **how: Any) -> dict[str, Any]:
    """A follower writes ``text`` (acknowledged 200); the next message they get."""
    count = len(server.received)
    _, answer = server.user_says(open_id, text, **how)
    assert answer.status == 200, answer
    return server.wait_for_received(count + 1)[count]


def test_a_follower_chat_with_passive_replies_repushed_messages_and_forged_pushes(
    tmp_path: Path, standin: OpenAIStandIn, weixin: WeixinStandIn
) -> None:
    standin.add(Reply(text="Hello from Hermes"), Reply(text="Still here."), Reply(text="Seen."))
    standin.add(Reply(text="Fresh."))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(weixin))
    with GatewayProcess(home) as gateway:
        weixin.server_url = gateway.addresses["weixin"]
        assert weixin.verify_url("7259358112223458") == CallbackAnswer(200, "7259358112223458")
        assert weixin.verify_url(token="not-the-token").status == 401
        first = answer_to(weixin, "o_alice", "hi there")
        assert first == {"touser": "o_alice", "text": "Hello from Hermes", "via": "passive"}
        message, _ = weixin.user_says("o_alice", HOSTILE)
        assert weixin.wait_for_received(2)[1]["text"] == "Still here."
        # The platform pushing the same MsgId again: acknowledged, stored once, no reply.
        assert weixin.deliver(message) == CallbackAnswer(200, "success")
        # Refused, nothing stored: signed with another token, not signed, a document type.
        forged = message.replace(b"<MsgId>", b"<MsgId>9")
        assert weixin.deliver(forged, token="not-the-token").status == 401
        assert weixin.deliver(forged, signed=False).status == 401
        assert weixin.deliver(b'<!DOCTYPE x [<!ENTITY a "b">]>' + forged).status == 400
        assert answer_to(weixin, "o_alice", "", msgtype="image")["text"] == "Seen."
        assert answer_to(weixin, "o_alice", "/title Trip planning")["text"] == (
            "✓ Title set: Trip planning"
        )
        assert answer_to(weixin, "o_alice", "/new")["text"].startswith("✓")
        assert answer_to(weixin, "o_alice", "new one")["text"] == "Fresh."
        assert gateway.terminate() == 0
    assert len(weixin.received) == 6 and {r["via"] for r in weixin.received} == {"passive"}
    log = gateway.log_text()
    assert "Traceback" not in log
    assert sum("weixin refused a request" in line for line in log.splitlines()) == 4
    key = "agent:main:weixin:dm:o_alice"
    with SessionStore.open(home) as store:
        old, new = sorted(
            (s for s in store.select_sessions() if s.session_key == key),
            key=lambda s: s.started_at,
        )
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        texts = user_texts(store.messages(old.id))
        assert texts[:2] == ["hi there", HOSTILE] and len(texts) == 3
        assert user_texts(store.messages(new.id)) == ["new one"]


def test_safe_mode_with_a_slow_answer_and_the_platforms_retries(
    tmp_path: Path, standin: OpenAIStandIn, weixin: WeixinStandIn
) -> None:
    release = threading.Event()
    standin.add(
        Reply(text="Warm.", match="warm up"),
        Reply(text="Sealed hello."),
        Reply(text="Slow answer.", hold=release),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(weixin, reply_wait_seconds=2))
    with GatewayProcess(home) as gateway:
        weixin.server_url = gateway.addresses["weixin"]
        # A started gateway's first turn loads the model client (importing the SDK alone
        # took 1.7 s on a loaded machine), by passive reply or not: another follower's turn
        # pays for it, so the passive reply checked next waits only for its own answer.
        assert answer_to(weixin, "o_amy", "warm up")["text"] == "Warm."
        first = answer_to(weixin, "o_bob", "hello", safe=True)
        assert first == {"touser": "o_bob", "text": "Sealed hello.", "via": "passive"}
        # Encrypted for another account: refused.
        message, _ = weixin.user_says("o_bob", "think hard", safe=True)
        assert weixin.deliver(message, safe=True, app_id="wxother").status == 401
        # The first push was answered "success" after reply_wait_seconds; the platform's
        # retries of it are acknowledged and stored once; the answer comes once, by the API.
        assert weixin.deliver(message, safe=True) == CallbackAnswer(200, "success")
        assert weixin.deliver(message, safe=True) == CallbackAnswer(200, "success")
        release.set()
        assert weixin.wait_for_received(3)[2] == {
            "touser": "o_bob",
            "text": "Slow answer.",
            "via": "custom",
        }
        time.sleep(0.5)
        assert gateway.terminate() == 0
    assert len(weixin.received) == 3
    assert sessions_by_key(home, "weixin") == {
        "agent:main:weixin:dm:o_amy": ["warm up"],
        "agent:main:weixin:dm:o_bob": ["hello", "think hard"],
    }


def test_a_message_acknowledged_before_a_kill_9_is_kept_and_its_repush_is_not_stored_twice(
    tmp_path: Path, standin: OpenAIStandIn, weixin: WeixinStandIn
) -> None:
    release = threading.Event()
    standin.add(
        Reply(text="After the restart.", match="go on"),
        Reply(text="Never sent.", match="kept across", hold=release, times=None),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(weixin, reply_wait_seconds=1))
    gateway = GatewayProcess(home).start()
    try:
        weixin.server_url = gateway.addresses["weixin"]
        message, answer = weixin.user_says("o_carol", "kept across the kill")
        assert answer == CallbackAnswer(200, "success")
    finally:
        gateway.kill()
        release.set()
    assert sessions_by_key(home, "weixin") == {
        "agent:main:weixin:dm:o_carol": ["kept across the kill"]
    }
    with GatewayProcess(home) as again:
        weixin.server_url = again.addresses["weixin"]
        assert weixin.deliver(message) == CallbackAnswer(200, "success")  # pushed again
        assert answer_to(weixin, "o_carol", "go on")["text"] == "After the restart."
        assert again.terminate() == 0
    assert sessions_by_key(home, "weixin") == {
        "agent:main:weixin:dm:o_carol": ["kept across the kill", "go on"]
    }


def test_a_missing_token_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn, weixin: WeixinStandIn
) -> None:
    home = tmp_path / "home"
    settings = platform(weixin)
    settings["weixin"].pop("token")
    settings["weixin"]["token_env"] = "NOT_SET_ANYWHERE"
    write_config(home, standin.base_url, settings)
    assert "gateway.platforms.weixin.token is not set" in refused_to_start(home, "weixin")


def test_the_weixin_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    assert_installed_alone(tmp_path, "hermes-platform-weixin", "platform:weixin")


def test_a_message_pushed_while_the_follower_is_busy_is_acknowledged_at_once_and_answered_next(
    tmp_path: Path, standin: OpenAIStandIn, weixin: WeixinStandIn
) -> None:
    release = hold_first_turn(standin)
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(weixin, reply_wait_seconds=1))
    with GatewayProcess(home) as gateway:
        weixin.server_url = gateway.addresses["weixin"]
        assert weixin.user_says("o_dan", "first")[1] == CallbackAnswer(200, "success")
        wait_until_asked(standin, "first")
        # Recorded in the gateway's inbox at once although the first turn still runs:
        # acknowledged ("success": the answer follows through the customer-service API).
        message, busy = weixin.user_says("o_dan", "second")
        assert busy == CallbackAnswer(200, "success")
        release.set()
        got = weixin.wait_for_received(2)
        assert [(r["text"], r["via"]) for r in got] == [
            ("Slow answer.", "custom"),
            ("Second answer.", "custom"),
        ]
        assert weixin.deliver(message) == CallbackAnswer(200, "success")  # a re-push: once
        assert gateway.terminate() == 0
    assert len(weixin.received) == 2
    assert sessions_by_key(home, "weixin") == {"agent:main:weixin:dm:o_dan": ["first", "second"]}
