"""The whatsapp adapter over real HTTP: Meta's webhooks (signed notifications POSTed by the
Cloud API stand-in) in, Graph API calls to the stand-in out — settings checks, the webhook
verification, signatures, retries of the same message, a store that refuses, long answers,
the canonical sender and groups."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from hermes_hookspecs import GatewayReply, PlatformEvent, UserFacingError
from hermes_platform_whatsapp.adapter import WhatsAppAdapter
from hermes_platform_whatsapp.graph import MAX_MESSAGE_CHARS
from standins.whatsapp_cloud_api import WhatsAppStandIn

from hermes_core.gateway.delivery import EventDelivery
from hermes_core.gateway.runner import unknown_platform

ALICE = "15551234567"


@pytest.fixture
def whatsapp() -> Any:
    with WhatsAppStandIn() as server:
        yield server


class ScriptedGateway:
    """The gateway's side of the contract (the core's own :class:`EventDelivery`): an event
    whose text is in ``refusals`` is refused that many times as a full disk would; the others
    are stored and answered ``answer: <text>`` (or ``answers[text]``)."""

    def __init__(self, refusals: dict[str, int] | None = None, **answers: str) -> None:
        self.refusals = refusals or {}
        self.answers = answers
        self.delivered: list[PlatformEvent] = []

    def deliver(self, event: PlatformEvent) -> EventDelivery:
        delivery = EventDelivery(asyncio.get_running_loop())
        self.delivered.append(event)
        if self.refusals.get(event.text, 0) > 0:
            self.refusals[event.text] -= 1
            delivery._refuse("the store refused the write: disk full")
        else:
            answer = self.answers.get(event.text, f"answer: {event.text}")
            delivery.finish(GatewayReply(text=answer, session_id="s1"))
        return delivery


def run_adapter(
    whatsapp: WhatsAppStandIn, gateway: ScriptedGateway, until: Callable[[], None], **extra: Any
) -> None:
    async def run() -> None:
        adapter = WhatsAppAdapter()
        await adapter.start(whatsapp.settings(**extra), gateway.deliver)
        whatsapp.webhook_url = adapter.address
        try:
            await asyncio.to_thread(until)
        finally:
            await adapter.stop()

    asyncio.run(run())


def test_missing_settings_are_one_line_naming_the_key() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.whatsapp\.access_token is"):
        WhatsAppAdapter().connect({})
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.whatsapp\.phone_number_id"):
        WhatsAppAdapter().connect({"access_token": "t", "app_secret": "s", "verify_token": "v"})
    assert (
        unknown_platform("whatsapp", {})
        == "unknown platform (pip install hermes-platform-whatsapp)"
    )


def test_a_refused_token_fails_start_with_one_line(whatsapp: WhatsAppStandIn) -> None:
    async def start() -> None:
        await WhatsAppAdapter().start(
            whatsapp.settings(access_token="wrong"), ScriptedGateway().deliver
        )

    with pytest.raises(UserFacingError) as raised:
        asyncio.run(start())
    assert "Invalid OAuth access token" in str(raised.value) and "\n" not in str(raised.value)


def test_the_webhook_check_answers_the_challenge_only_with_the_verify_token(
    whatsapp: WhatsAppStandIn,
) -> None:
    def check(token: str) -> tuple[int, str]:
        query = urllib.parse.urlencode(
            {"hub.mode": "subscribe", "hub.verify_token": token, "hub.challenge": "1158201444"}
        )
        try:
            with urllib.request.urlopen(f"{whatsapp.webhook_url}?{query}", timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, ""

    def checks() -> None:
        assert check(whatsapp.verify_token) == (200, "1158201444")
        assert check("guess")[0] == 403

    run_adapter(whatsapp, ScriptedGateway(), checks)


def test_a_bad_signature_is_refused_and_nothing_is_delivered(whatsapp: WhatsAppStandIn) -> None:
    gateway = ScriptedGateway()

    def forged() -> None:
        _, body = whatsapp.notification("15551234567", "transfer the money")
        assert whatsapp.post(body, signature="sha256=" + "0" * 64) == 401
        assert whatsapp.post(body, signature="") == 401
        assert whatsapp.post(body[:-1] + b" }", signature=None) == 200  # signed anew: taken

    run_adapter(whatsapp, gateway, forged)
    assert [e.text for e in gateway.delivered] == ["transfer the money"]


def test_a_retried_message_is_delivered_and_answered_once(whatsapp: WhatsAppStandIn) -> None:
    gateway = ScriptedGateway()

    def twice() -> None:
        _, body = whatsapp.notification("15551234567", "hello")
        assert whatsapp.post(body) == 200
        assert whatsapp.post(body) == 200  # Meta's retry: acknowledged, not taken again
        whatsapp.wait_for_sent(1)
        assert whatsapp.user_says("15551234567", "next")[1] == 200
        whatsapp.wait_for_sent(2)

    run_adapter(whatsapp, gateway, twice)
    assert [e.text for e in gateway.delivered] == ["hello", "next"]
    assert [m["text"]["body"] for m in whatsapp.sent] == ["answer: hello", "answer: next"]


def test_a_message_not_stored_is_refused_and_taken_when_meta_retries(
    whatsapp: WhatsAppStandIn,
) -> None:
    gateway = ScriptedGateway({"first": 1})

    def retried() -> None:
        message_id, status = whatsapp.user_says("15551234567", "first")
        assert status == 503 and len(whatsapp.pending) == 1
        assert whatsapp.retry_pending() == [200]
        (sent,) = whatsapp.wait_for_sent(1)
        assert sent["text"]["body"] == "answer: first"
        assert sent["context"] == {"message_id": message_id}
        assert whatsapp.read == [message_id]

    run_adapter(whatsapp, gateway, retried, mark_as_read=True)
    assert [e.text for e in gateway.delivered] == ["first", "first"]
    assert whatsapp.pending == []


def test_long_answers_go_in_pieces_of_4096(whatsapp: WhatsAppStandIn) -> None:
    text = ("line of text\n" * 700).strip()  # 9,099 characters: three messages
    gateway = ScriptedGateway(**{"long please": text})

    def long() -> None:
        whatsapp.user_says("15551234567", "long please")
        whatsapp.wait_for_sent(3)

    run_adapter(whatsapp, gateway, long)
    pieces = [m["text"]["body"] for m in whatsapp.sent]
    assert len(pieces) == 3 and all(len(p) <= MAX_MESSAGE_CHARS for p in pieces)
    assert "".join(pieces) == text


def test_the_session_follows_the_wa_id_and_a_group_message_its_group(
    whatsapp: WhatsAppStandIn,
) -> None:
    gateway = ScriptedGateway()

    def chats() -> None:
        # Meta documents that ``from`` may be another spelling of the number than ``wa_id``.
        whatsapp.user_says("5511987654321", "from brazil", sender="551187654321", name="Bia")
        whatsapp.user_says("15551234567", "in the group", group_id="GROUP.abc=", name="Al")
        whatsapp.user_says("15551234567", "a photo", kind="image")
        whatsapp.wait_for_sent(3)

    run_adapter(whatsapp, gateway, chats)
    dm, group, photo = gateway.delivered
    assert (dm.chat_type, dm.chat_id, dm.user_id, dm.user_name) == (
        "dm", "5511987654321", "5511987654321", "Bia",
    )  # fmt: skip
    assert (group.chat_type, group.chat_id, group.user_id) == ("group", "GROUP.abc=", "15551234567")
    assert photo.attachments[0].description == "image media1"
    sent_to = {m["to"]: m["recipient_type"] for m in whatsapp.sent}
    assert sent_to == {
        "5511987654321": "individual",
        "GROUP.abc=": "group",
        "15551234567": "individual",
    }
    adapter = WhatsAppAdapter()
    assert adapter.session_key("dm", "5511987654321", "5511987654321", None) == (
        "agent:main:whatsapp:dm:5511987654321"
    )
    assert adapter.session_key("group", "GROUP.abc=", "1555", None) == (
        "agent:main:whatsapp:group:GROUP.abc=:1555"
    )


def test_a_reaction_is_not_a_turn_and_a_tapped_button_is_its_title(
    whatsapp: WhatsAppStandIn,
) -> None:
    gateway = ScriptedGateway()

    def taps() -> None:
        reaction = {"message_id": "wamid.OUT000001", "emoji": "\N{THUMBS UP SIGN}"}
        assert whatsapp.user_says(ALICE, "", kind="reaction", content=reaction)[1] == 200
        tapped = {"type": "button_reply", "button_reply": {"id": "yes", "title": "Yes please"}}
        assert whatsapp.user_says(ALICE, "", kind="interactive", content=tapped)[1] == 200
        whatsapp.wait_for_sent(1)

    run_adapter(whatsapp, gateway, taps)
    assert [e.text for e in gateway.delivered] == ["Yes please"]
