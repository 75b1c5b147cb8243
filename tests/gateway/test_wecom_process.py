"""End to end: the installed ``hermes gateway run`` with the wecom plugin; the WeCom stand-in
plays WeCom both ways over real HTTP (the URL check and encrypted message callbacks into the
gateway, the access token and ``message/send`` out of it); the stand-in model. A member's chat
with the commands, a re-sent message, forged callbacks refused, a kill -9 right after the
acknowledgement, the missing-token line, and the plugin installed alone (SPEC O2, G1)."""

from __future__ import annotations

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
from standins.wecom_api import (
    AGENT_ID,
    CORP_ID,
    CORP_SECRET,
    ENCODING_AES_KEY,
    TOKEN,
    CallbackAnswer,
    WeComStandIn,
)
from standins.wxbiz_crypto import cdata

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

# XML 1.0 cannot carry control characters at all, so none come from WeCom; the rest can.
HOSTILE = "'; DROP TABLE sessions; -- $(rm -rf ~) `id` <script>x</script> ]]> <!DOCTYPE x> &amp;"


@pytest.fixture
def standin() -> Any:
    with model_standin() as server:
        yield server


@pytest.fixture
def wecom() -> Any:
    with WeComStandIn() as server:
        yield server


def platform(server: WeComStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "wecom": {
            "corp_id": CORP_ID,
            "corp_secret": CORP_SECRET,
            "agent_id": AGENT_ID,
            "token": TOKEN,
            "encoding_aes_key": ENCODING_AES_KEY,
            "api_base": server.base_url,
            "port": 0,
            **extra,
        }
    }


def answer_to(server: WeComStandIn, user_id: str, text: str) -> dict[str, Any]:
    """A member writes ``text`` (acknowledged 200, empty); the application's next message."""
    count = len(server.sent)
    _, answer = server.user_says(user_id, text)
    assert answer == CallbackAnswer(200, ""), answer
    return server.wait_for_sent(count + 1)[count]


def test_a_member_chat_with_the_commands_a_resent_message_and_forged_callbacks(
    tmp_path: Path, standin: OpenAIStandIn, wecom: WeComStandIn
) -> None:
    standin.add(Reply(text="Hello from Hermes"), Reply(text="Still here."), Reply(text="Fresh."))
    standin.add(Reply(text="Bob's answer."))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(wecom))
    with GatewayProcess(home) as gateway:
        wecom.callback_url = gateway.addresses["wecom"]
        assert wecom.verify_url("1616140317555161061") == CallbackAnswer(200, "1616140317555161061")
        first = answer_to(wecom, "zhangsan", "hi there")
        assert first == {"touser": "zhangsan", "text": "Hello from Hermes"}
        body, _ = wecom.user_says("zhangsan", HOSTILE)
        assert wecom.wait_for_sent(2)[1]["text"] == "Still here."
        # WeCom delivering the same message again: acknowledged, stored once, nothing sent.
        assert wecom.deliver(body) == CallbackAnswer(200, "")
        # Refused, nothing stored: signed with another token, not signed, encrypted for
        # another company, and XML with a document type.
        forged = wecom.envelope(
            f"<xml><FromUserName>{cdata('mallory')}</FromUserName><MsgType>text</MsgType>"
            f"<Content>forged</Content><MsgId>1</MsgId><AgentID>{AGENT_ID}</AgentID></xml>"
        )
        assert wecom.deliver(forged, token="not-the-token").status == 401
        assert wecom.deliver(forged, signed=False).status == 401
        other = forged.replace(b"forged", b"other corp")
        assert wecom.deliver(wecom.envelope(other.decode(), corp_id="wwother")).status == 401
        bomb = b'<!DOCTYPE x [<!ENTITY a "b">]>' + forged
        assert wecom.deliver(bomb).status == 400
        assert answer_to(wecom, "zhangsan", "/title Trip planning")["text"] == (
            "✓ Title set: Trip planning"
        )
        assert answer_to(wecom, "zhangsan", "/new")["text"].startswith("✓")
        assert answer_to(wecom, "zhangsan", "new one")["text"] == "Fresh."
        assert answer_to(wecom, "lisi", "bob here") == {"touser": "lisi", "text": "Bob's answer."}
        assert gateway.terminate() == 0
    assert len(wecom.sent) == 6
    log = gateway.log_text()
    assert "Traceback" not in log
    assert sum("wecom refused a request" in line for line in log.splitlines()) == 4
    key = "agent:main:wecom:dm:zhangsan"
    with SessionStore.open(home) as store:
        old, new = sorted(
            (s for s in store.select_sessions() if s.session_key == key),
            key=lambda s: s.started_at,
        )
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        assert user_texts(store.messages(old.id)) == ["hi there", HOSTILE]
        assert user_texts(store.messages(new.id)) == ["new one"]
    assert sessions_by_key(home, "wecom")["agent:main:wecom:dm:lisi"] == ["bob here"]


def test_a_message_acknowledged_before_a_kill_9_is_kept_and_its_resend_is_not_stored_twice(
    tmp_path: Path, standin: OpenAIStandIn, wecom: WeComStandIn
) -> None:
    standin.add(Reply(text="After the restart."))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(wecom))
    gateway = GatewayProcess(home).start()
    try:
        wecom.callback_url = gateway.addresses["wecom"]
        body, answer = wecom.user_says("zhangsan", "kept across the kill")
        assert answer.status == 200
    finally:
        gateway.kill()
    assert sessions_by_key(home, "wecom") == {
        "agent:main:wecom:dm:zhangsan": ["kept across the kill"]
    }
    with GatewayProcess(home) as again:
        wecom.callback_url = again.addresses["wecom"]
        assert wecom.deliver(body).status == 200  # the same message again after the kill
        assert answer_to(wecom, "zhangsan", "go on")["text"] == "After the restart."
        assert again.terminate() == 0
    assert sessions_by_key(home, "wecom") == {
        "agent:main:wecom:dm:zhangsan": ["kept across the kill", "go on"]
    }


def test_a_missing_token_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn, wecom: WeComStandIn
) -> None:
    home = tmp_path / "home"
    settings = platform(wecom)
    settings["wecom"].pop("token")
    settings["wecom"]["token_env"] = "NOT_SET_ANYWHERE"
    write_config(home, standin.base_url, settings)
    assert "gateway.platforms.wecom.token is not set" in refused_to_start(home, "wecom")


def test_the_wecom_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    assert_installed_alone(tmp_path, "hermes-platform-wecom", "platform:wecom")


def test_a_message_sent_while_the_member_is_busy_is_acknowledged_at_once_and_answered_next(
    tmp_path: Path, standin: OpenAIStandIn, wecom: WeComStandIn
) -> None:
    release = hold_first_turn(standin)
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(wecom, ack_wait_seconds=1))
    with GatewayProcess(home) as gateway:
        wecom.callback_url = gateway.addresses["wecom"]
        assert wecom.user_says("zhangsan", "first")[1] == CallbackAnswer(200, "")
        wait_until_asked(standin, "first")
        # Recorded in the gateway's inbox at once although the first turn still runs:
        # acknowledged within WeCom's five seconds, answered after the first.
        body, busy = wecom.user_says("zhangsan", "second")
        assert busy == CallbackAnswer(200, "")
        release.set()
        sent = wecom.wait_for_sent(2)
        assert [s["text"] for s in sent] == ["Slow answer.", "Second answer."]
        assert wecom.deliver(body) == CallbackAnswer(200, "")  # a retry anyway: stored once
        assert gateway.terminate() == 0
    assert len(wecom.sent) == 2
    assert sessions_by_key(home, "wecom") == {"agent:main:wecom:dm:zhangsan": ["first", "second"]}
