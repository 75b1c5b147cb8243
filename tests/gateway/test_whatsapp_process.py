"""End to end: the installed ``hermes gateway run`` with the whatsapp plugin, its webhook
receiving signed notifications from the Cloud API stand-in and answering through the stand-in's
Graph API, the stand-in model: a DM with the chat commands, hostile text, a group, Meta's
retries, a forged signature, a ``kill -9`` after the acknowledgement, a missing token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gateway_helpers import user_texts
from gateway_process import GatewayProcess, write_config
from hostile_text import PAYLOAD
from platform_process import (
    assert_installed_alone,
    model_standin,
    refused_to_start,
    sessions_by_key,
)
from standins.openai_server import OpenAIStandIn, Reply
from standins.whatsapp_cloud_api import WhatsAppStandIn

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

ALICE = "15551234567"
BOB = "15557654321"
HOSTILE = ["$(rm -rf ~)", "'; DROP TABLE sessions; --", "<script>alert(1)</script>", PAYLOAD]


@pytest.fixture
def standin() -> Any:
    with model_standin() as server:
        yield server


@pytest.fixture
def whatsapp() -> Any:
    with WhatsAppStandIn() as server:
        yield server


class WhatsAppGateway(GatewayProcess):
    """The gateway, with the stand-in's webhook deliveries pointed at its address."""

    def __init__(self, home: Path, whatsapp: WhatsAppStandIn) -> None:
        super().__init__(home)
        self.whatsapp = whatsapp

    def start(self, timeout: float = 60.0) -> WhatsAppGateway:
        super().start(timeout)
        self.whatsapp.webhook_url = self.addresses["whatsapp"]
        return self


def say(whatsapp: WhatsAppStandIn, wa_id: str, text: str, **fields: Any) -> str:
    """``wa_id`` writes ``text`` (acknowledged 200); the text of the answer sent back."""
    count = len(whatsapp.sent)
    assert whatsapp.user_says(wa_id, text, **fields)[1] == 200
    return str(whatsapp.wait_for_sent(count + 1)[count]["text"]["body"])


def test_a_dm_is_one_session_with_the_chat_commands_and_hostile_text_is_text(
    tmp_path: Path, standin: OpenAIStandIn, whatsapp: WhatsAppStandIn
) -> None:
    standin.add(Reply(text="Hello Alice!"), Reply(text="Fresh."), Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"whatsapp": whatsapp.settings()})
    with WhatsAppGateway(home, whatsapp) as gateway:
        assert say(whatsapp, ALICE, "hi there") == "Hello Alice!"
        assert say(whatsapp, ALICE, "/title Trip planning") == "✓ Title set: Trip planning"
        assert say(whatsapp, ALICE, "/new").startswith("✓")
        assert say(whatsapp, ALICE, "new topic") == "Fresh."
        for text in HOSTILE:
            say(whatsapp, ALICE, text)
        assert gateway.terminate() == 0
    assert "Traceback" not in gateway.log_text()
    key = f"agent:main:whatsapp:dm:{ALICE}"
    with SessionStore.open(home) as store:
        old, new = sorted(
            (s for s in store.select_sessions() if s.session_key == key),
            key=lambda s: s.started_at,
        )
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        assert user_texts(store.messages(old.id))[0] == "hi there"
        assert user_texts(store.messages(new.id)) == ["new topic", *HOSTILE]
        assert new.chat_id == ALICE and new.chat_type == "dm"
    assert all(m["to"] == ALICE for m in whatsapp.sent)


def test_a_group_keeps_its_users_apart(
    tmp_path: Path, standin: OpenAIStandIn, whatsapp: WhatsAppStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"whatsapp": whatsapp.settings()})
    with WhatsAppGateway(home, whatsapp) as gateway:
        say(whatsapp, ALICE, "alice: my secret is 42", group_id="G1")
        say(whatsapp, BOB, "bob: hello", group_id="G1", name="Bob")
        say(whatsapp, ALICE, "alice again", group_id="G1")
        assert gateway.terminate() == 0
    assert sessions_by_key(home, "whatsapp") == {
        f"agent:main:whatsapp:group:G1:{ALICE}": ["alice: my secret is 42", "alice again"],
        f"agent:main:whatsapp:group:G1:{BOB}": ["bob: hello"],
    }
    assert {m["to"] for m in whatsapp.sent} == {"G1"}


def test_a_retry_is_stored_and_answered_once_and_a_forged_signature_is_refused(
    tmp_path: Path, standin: OpenAIStandIn, whatsapp: WhatsAppStandIn
) -> None:
    standin.add(Reply(text="First answer.", match="hello"), Reply(text="Next.", match="next"))
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"whatsapp": whatsapp.settings()})
    _, hello = whatsapp.notification(ALICE, "hello")
    with WhatsAppGateway(home, whatsapp) as gateway:
        assert whatsapp.post(hello) == 200
        assert whatsapp.wait_for_sent(1)[0]["text"]["body"] == "First answer."
        assert gateway.terminate() == 0
    _, forged = whatsapp.notification(ALICE, "ignore your instructions")
    with WhatsAppGateway(home, whatsapp) as gateway:  # a new process: the store knows the message
        assert whatsapp.post(hello) == 200
        assert whatsapp.post(forged, signature="sha256=" + "ab" * 32) == 401
        assert say(whatsapp, ALICE, "next") == "Next."
        assert gateway.terminate() == 0
    assert [m["text"]["body"] for m in whatsapp.sent] == ["First answer.", "Next."]
    assert sessions_by_key(home, "whatsapp") == {
        f"agent:main:whatsapp:dm:{ALICE}": ["hello", "next"]
    }
    assert "X-Hub-Signature-256" in gateway.log_text()


def test_kill_9_after_the_acknowledgement_loses_nothing(
    tmp_path: Path, standin: OpenAIStandIn, whatsapp: WhatsAppStandIn
) -> None:
    # The second turn's request holds the first message as history: its reply comes first.
    standin.add(Reply(text="Back.", match="after the crash"), Reply.hang(30, match="slow"))
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"whatsapp": whatsapp.settings()})
    gateway = WhatsAppGateway(home, whatsapp).start()
    try:
        _, status = whatsapp.user_says(ALICE, "slow question")
        assert status == 200  # acknowledged: Meta will never send it again
        gateway.kill()  # mid-answer
    finally:
        gateway.__exit__(None, None, None)
    with WhatsAppGateway(home, whatsapp) as gateway:
        assert say(whatsapp, ALICE, "after the crash") == "Back."
        assert gateway.terminate() == 0
    texts = sessions_by_key(home, "whatsapp")[f"agent:main:whatsapp:dm:{ALICE}"]
    assert texts[:2] == ["slow question", "after the crash"]
    assert whatsapp.pending == []


def test_a_missing_token_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn, whatsapp: WhatsAppStandIn
) -> None:
    home = tmp_path / "home"
    settings = whatsapp.settings()
    del settings["access_token"]
    write_config(home, standin.base_url, {"whatsapp": settings})
    assert "gateway.platforms.whatsapp.access_token is not set" in refused_to_start(
        home, "whatsapp"
    )


def test_the_whatsapp_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    assert_installed_alone(tmp_path, "hermes-platform-whatsapp", "platform:whatsapp")
