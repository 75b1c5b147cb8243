"""End to end: the installed ``hermes gateway run`` with the sms plugin, Twilio's webhooks from
the stand-in's phone side, answers through the twilio SDK to the stand-in's REST API, the
stand-in model: one continuous session per sender (E.164), ``/title`` and ``/new`` by SMS, long
answers in several messages; missing credentials are one line at start."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from gateway_helpers import user_texts
from gateway_process import GatewayProcess, environment, write_config
from installed_hermes import hermes_command
from platform_process import model_standin
from standins.openai_server import OpenAIStandIn, Reply
from standins.twilio_api import TwilioStandIn

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

ALICE = "+14155550100"
BOB = "+442079460958"


@pytest.fixture
def standin() -> Any:
    with model_standin() as server:
        yield server


@pytest.fixture
def twilio() -> Any:
    with TwilioStandIn() as server:
        yield server


def platform(server: TwilioStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "sms": {
            "account_sid": server.account_sid,
            "auth_token_env": "HERMES_TEST_TWILIO_TOKEN",
            "api_base_url": server.base_url,
            "port": 0,
            **extra,
        }
    }


def text(twilio: TwilioStandIn, url: str, sender: str, body: str) -> list[dict[str, Any]]:
    """``sender`` texts ``body``; the SMS sent back for it (one or more)."""
    count = len(twilio.sent)
    status, _ = twilio.text_in(url, sender, body)
    assert status == 200
    sent = twilio.wait_for_sent(count + 1)
    return sent[count:]


def test_each_sender_has_one_session_with_the_chat_commands(
    tmp_path: Path,
    standin: OpenAIStandIn,
    twilio: TwilioStandIn,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    long_answer = ("A long answer line.\n" * 120).strip()  # 2,399 characters: two SMS
    standin.add(
        Reply(text="Hello Alice!", match="hi from alice"),
        Reply(text="Hello Bob!", match="hi from bob"),
        Reply(text=long_answer, match="tell me more"),
        Reply(text="Fresh.", match="new topic"),
    )
    monkeypatch.setenv("HERMES_TEST_TWILIO_TOKEN", twilio.auth_token)
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(twilio))
    with GatewayProcess(home) as gateway:
        url = gateway.addresses["sms"]
        (hello,) = text(twilio, url, ALICE, "hi from alice")
        assert (hello["to"], hello["from"], hello["body"]) == (ALICE, twilio.number, "Hello Alice!")
        count = len(twilio.sent)
        assert twilio.text_in(url, BOB, "hi from bob", message_sid="SMbob1")[0] == 200
        assert twilio.wait_for_sent(count + 1)[count]["body"] == "Hello Bob!"
        # Twilio sends a webhook again (no acknowledgement seen): stored once, answered once.
        assert twilio.text_in(url, BOB, "hi from bob", message_sid="SMbob1")[0] == 200
        assert text(twilio, url, BOB, "/title")[0]["body"].startswith(
            ("Title:", "This session has no title.")
        )
        assert twilio.text_in(url, ALICE, "tell me more")[0] == 200
        pieces = twilio.wait_for_sent(5)[3:]
        assert [len(p["body"]) <= 1600 for p in pieces] == [True, True]
        assert "".join(p["body"] for p in pieces) == long_answer
        assert text(twilio, url, ALICE, "/title Trip planning")[0]["body"] == (
            "✓ Title set: Trip planning"
        )
        assert text(twilio, url, ALICE, "/new")[0]["body"].startswith("✓")
        assert text(twilio, url, ALICE, "new topic")[0]["body"] == "Fresh."
        forged = twilio.text_in(url, ALICE, "forged", signature="bm9wZQ==")
        assert forged[0] == 403
        assert gateway.terminate() == 0
    assert "Traceback" not in gateway.log_text()
    with SessionStore.open(home) as store:
        sessions = sorted(
            (s for s in store.select_sessions() if s.source == "sms"), key=lambda s: s.started_at
        )
        by_key = [(s.session_key, user_texts(store.messages(s.id))) for s in sessions]
        titles = [s.title for s in sessions]
    assert by_key == [
        (f"agent:main:sms:dm:{ALICE}", ["hi from alice", "tell me more"]),
        (f"agent:main:sms:dm:{BOB}", ["hi from bob"]),
        (f"agent:main:sms:dm:{ALICE}", ["new topic"]),
    ]
    assert titles[0] == "Trip planning"


def test_missing_credentials_are_one_line_at_gateway_run(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"sms": {"account_sid": "AC123", "port": 0}})
    ran = subprocess.run(
        [hermes_command(), "gateway", "run"],
        env=environment(home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 1
    assert "Traceback" not in ran.stderr
    assert "gateway.platforms.sms.auth_token is not set" in ran.stderr
    lines = [line for line in ran.stderr.splitlines() if "auth_token" in line]
    assert len(lines) == 1, ran.stderr
