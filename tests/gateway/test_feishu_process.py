"""End to end: the installed ``hermes gateway run`` with the feishu plugin; the Feishu stand-in
plays Feishu both ways over real HTTP (event callbacks into the gateway, Open API calls out of
it); the stand-in model. A one-to-one chat with the commands, Feishu re-sending an event, forged
callbacks refused, a group with two people and a thread, encrypted callbacks, a kill -9 right
after the acknowledgement, and the missing-secret line (SPEC O2, G1)."""

from __future__ import annotations

import json
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
from standins.feishu_api import (
    APP_ID,
    APP_SECRET,
    ENCRYPT_KEY,
    VERIFICATION_TOKEN,
    FeishuStandIn,
)
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

HOSTILE = "'; DROP TABLE sessions; -- $(rm -rf ~) `id` \x1b]0;PWNED\x07 <script>x</script>"


@pytest.fixture
def standin() -> Any:
    with model_standin() as server:
        yield server


def platform(server: FeishuStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "feishu": {
            "app_id": APP_ID,
            "app_secret": APP_SECRET,
            "verification_token": VERIFICATION_TOKEN,
            "base_url": server.base_url,
            "port": 0,
            **extra,
        }
    }


def answer_to(server: FeishuStandIn, act: Any) -> dict[str, Any]:
    """Do ``act`` (a callback, acknowledged 200) and return the app's next post."""
    count = len(server.posted)
    _, answer = act()
    assert answer.status == 200, answer
    return server.wait_for_posts(count + 1)[count]


def test_a_p2p_chat_with_the_commands_a_resent_event_and_forged_callbacks(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="Hello from Hermes"), Reply(text="Still here."), Reply(text="Fresh."))
    home = tmp_path / "home"
    with FeishuStandIn() as feishu:
        write_config(home, standin.base_url, platform(feishu))
        with GatewayProcess(home) as gateway:
            feishu.events_url = gateway.addresses["feishu"]
            verified = feishu.verify_url("challenge-123")
            assert verified.status == 200
            assert json.loads(verified.body) == {"challenge": "challenge-123"}
            assert feishu.verify_url("c", token="not-the-token").status == 401
            first = answer_to(feishu, lambda: feishu.user_says("oc_p2p", "ou_alice", "hi there"))
            assert first["text"] == "Hello from Hermes" and first["reply_in_thread"] is False
            assert json.loads(first["body"]["content"]) == {"text": "Hello from Hermes"}
            envelope, _ = feishu.user_says("oc_p2p", "ou_alice", HOSTILE)
            assert feishu.wait_for_posts(2)[1]["text"] == "Still here."
            # Feishu sending the same event again: acknowledged, stored once, nothing posted.
            assert feishu.deliver(envelope).status == 200
            # A forged event (wrong verification token): refused, nothing stored.
            forged = json.loads(json.dumps(envelope))
            forged["header"].update(event_id="forged", token="guessed")
            forged["event"]["message"].update(message_id="om_forged", content='{"text":"forged"}')
            assert feishu.deliver(forged).status == 401
            titled = answer_to(
                feishu, lambda: feishu.user_says("oc_p2p", "ou_alice", "/title Trip planning")
            )
            assert titled["text"] == "✓ Title set: Trip planning"
            assert answer_to(feishu, lambda: feishu.user_says("oc_p2p", "ou_alice", "/new"))[
                "text"
            ].startswith("✓")
            fresh = answer_to(feishu, lambda: feishu.user_says("oc_p2p", "ou_alice", "new topic"))
            assert fresh["text"] == "Fresh."
            assert gateway.terminate() == 0
        assert len(feishu.posted) == 5
        assert feishu.token_requests == 1  # the token is kept until it expires
    log = gateway.log_text()
    assert "Traceback" not in log
    assert sum("feishu refused a request" in line for line in log.splitlines()) == 2
    key = "agent:main:feishu:dm:oc_p2p"
    with SessionStore.open(home) as store:
        old, new = sorted(
            (s for s in store.select_sessions() if s.session_key == key),
            key=lambda s: s.started_at,
        )
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        assert user_texts(store.messages(old.id)) == ["hi there", HOSTILE]
        assert user_texts(store.messages(new.id)) == ["new topic"]


def test_a_group_keeps_people_apart_and_a_thread_is_shared_and_answered_in_it(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    with FeishuStandIn() as feishu:
        write_config(home, standin.base_url, platform(feishu, domain="lark"))
        with GatewayProcess(home) as gateway:
            feishu.events_url = gateway.addresses["feishu"]

            def say(user: str, text: str, thread: str | None = None) -> dict[str, Any]:
                return answer_to(
                    feishu,
                    lambda: feishu.user_says(
                        "oc_group", user, text, chat_type="group", thread_id=thread,
                        mention_bot=True,
                    ),
                )  # fmt: skip

            assert say("ou_alice", "alice: my secret is 42")["reply_in_thread"] is False
            say("ou_bob", "bob: my secret is 7")
            in_thread = say("ou_alice", "thread: ship?", "omt_release")
            assert in_thread["reply_in_thread"] is True
            assert in_thread["thread_id"] == "omt_release"
            say("ou_bob", "thread: yes", "omt_release")
            assert say("ou_bob", "/title Release plan", "omt_release")["text"] == (
                "✓ Title set: Release plan"
            )
            assert gateway.terminate() == 0
    assert sessions_by_key(home, "feishu") == {
        "agent:main:feishu:group:oc_group:ou_alice": ["alice: my secret is 42"],
        "agent:main:feishu:group:oc_group:ou_bob": ["bob: my secret is 7"],
        "agent:main:feishu:group:oc_group:omt_release": ["thread: ship?", "thread: yes"],
    }
    bob_turn = next(b for b in standin.requests if "bob: my" in str(b["messages"][-1]))
    assert "secret is 42" not in str(bob_turn["messages"])


def test_encrypted_callbacks_are_decrypted_and_a_bad_signature_is_refused(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="Decrypted."))
    home = tmp_path / "home"
    with FeishuStandIn(encrypt_key=ENCRYPT_KEY) as feishu:
        write_config(home, standin.base_url, platform(feishu, encrypt_key=ENCRYPT_KEY))
        with GatewayProcess(home) as gateway:
            feishu.events_url = gateway.addresses["feishu"]
            assert json.loads(feishu.verify_url("enc").body) == {"challenge": "enc"}
            answer = answer_to(feishu, lambda: feishu.user_says("oc_p2p", "ou_a", "secret hi"))
            assert answer["text"] == "Decrypted."
            wrong = feishu.user_says("oc_p2p", "ou_a", "forged one", encrypt_key="wrong-key")
            assert wrong[1].status == 401
            assert feishu.user_says("oc_p2p", "ou_a", "unsigned", signed=False)[1].status == 401
            assert gateway.terminate() == 0
    assert sessions_by_key(home, "feishu") == {"agent:main:feishu:dm:oc_p2p": ["secret hi"]}


def test_a_message_acknowledged_before_a_kill_9_is_kept_and_its_resend_is_not_stored_twice(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="After the restart."))
    home = tmp_path / "home"
    with FeishuStandIn() as feishu:
        write_config(home, standin.base_url, platform(feishu))
        gateway = GatewayProcess(home).start()
        try:
            feishu.events_url = gateway.addresses["feishu"]
            envelope, answer = feishu.user_says("oc_p2p", "ou_alice", "kept across the kill")
            assert answer.status == 200
        finally:
            gateway.kill()
        assert sessions_by_key(home, "feishu") == {
            "agent:main:feishu:dm:oc_p2p": ["kept across the kill"]
        }
        with GatewayProcess(home) as again:
            feishu.events_url = again.addresses["feishu"]
            assert feishu.deliver(envelope).status == 200  # Feishu's re-send after the kill
            after = answer_to(feishu, lambda: feishu.user_says("oc_p2p", "ou_alice", "go on"))
            assert after["text"] == "After the restart."
            assert again.terminate() == 0
    assert sessions_by_key(home, "feishu") == {
        "agent:main:feishu:dm:oc_p2p": ["kept across the kill", "go on"]
    }


@pytest.mark.parametrize("missing", ["app_id", "app_secret", "verification_token"])
def test_a_missing_credential_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn, missing: str
) -> None:
    home = tmp_path / "home"
    settings = {"app_id": APP_ID, "app_secret": APP_SECRET, "verification_token": "v"}
    del settings[missing]
    write_config(home, standin.base_url, {"feishu": settings})
    assert f"gateway.platforms.feishu.{missing} is not set" in refused_to_start(home, "feishu")


def test_a_refused_secret_is_one_line(tmp_path: Path, standin: OpenAIStandIn) -> None:
    home = tmp_path / "home"
    with FeishuStandIn() as feishu:
        write_config(home, standin.base_url, platform(feishu, app_secret="wrong"))
        gateway = GatewayProcess(home)
        with pytest.raises(AssertionError, match="exited early"):
            gateway.start()
    assert gateway.process is not None and gateway.process.wait(30) == 1
    lines = [line for line in gateway.log_text().splitlines() if "feishu" in line]
    assert len(lines) == 1
    assert "gateway.platforms.feishu.app_secret was refused by Feishu" in lines[0]
    assert "(code 10014)" in lines[0]


def test_the_feishu_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    assert_installed_alone(tmp_path, "hermes-platform-feishu", "platform:feishu")


def test_feishu_hears_back_in_time_while_the_chat_is_busy_and_its_resends_are_taken_once(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    release = hold_first_turn(standin)
    home = tmp_path / "home"
    with FeishuStandIn() as feishu:
        write_config(home, standin.base_url, platform(feishu, ack_wait_seconds=1))
        with GatewayProcess(home) as gateway:
            feishu.events_url = gateway.addresses["feishu"]
            assert feishu.user_says("oc_p2p", "ou_a", "first")[1].status == 200
            wait_until_asked(standin, "first")
            # The chat is busy: the next message is recorded in the gateway inbox all the
            # same, so Feishu hears 200 in time; a re-send while it waits there is taken once.
            envelope, busy = feishu.user_says("oc_p2p", "ou_a", "second", timeout=3)
            assert busy.status == 200
            assert feishu.deliver(envelope, timeout=3).status == 200
            release.set()
            assert [p["text"] for p in feishu.wait_for_posts(2)] == [
                "Slow answer.",
                "Second answer.",
            ]
            assert feishu.deliver(envelope, timeout=3).status == 200  # stored by now
            assert gateway.terminate() == 0
        assert len(feishu.posted) == 2
    assert sessions_by_key(home, "feishu") == {"agent:main:feishu:dm:oc_p2p": ["first", "second"]}
