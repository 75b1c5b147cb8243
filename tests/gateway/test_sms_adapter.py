"""The sms adapter over real HTTP: Twilio's webhooks from the stand-in's phone side (signed as
Twilio signs them), answers through the twilio SDK's REST client pointed (``api_base_url``) at
the stand-in's REST side; settings and credential checks, E.164 keys, long answers, retries."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from hermes_hookspecs import GatewayReply, PlatformEvent, UserFacingError
from hermes_platform_sms.adapter import SmsAdapter
from hermes_platform_sms.numbers import canonical_number
from hermes_platform_sms.rest import MAX_SMS_CHARS
from standins.twilio_api import TwilioStandIn

from hermes_core.gateway.delivery import EventDelivery


@pytest.fixture
def twilio() -> Any:
    with TwilioStandIn() as server:
        yield server


def settings(server: TwilioStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "account_sid": server.account_sid,
        "auth_token": server.auth_token,
        "api_base_url": server.base_url,
        "port": 0,
        **extra,
    }


def test_missing_credentials_are_one_line_naming_the_key() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.sms\.account_sid is not set"):
        SmsAdapter().connect({"auth_token": "x"})
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.sms\.auth_token is not set"):
        SmsAdapter().connect({"account_sid": "AC1", "auth_token_env": "HERMES_NO_SUCH_VARIABLE"})
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.sms\.port must be"):
        SmsAdapter().connect({"account_sid": "AC1", "auth_token": "x", "port": "any"})


def test_refused_credentials_fail_start_with_one_line(twilio: TwilioStandIn) -> None:
    def refuse(event: PlatformEvent) -> Any:
        raise AssertionError("nothing may be delivered")

    with pytest.raises(UserFacingError) as raised:
        asyncio.run(SmsAdapter().start(settings(twilio, auth_token="wrong"), refuse))
    assert str(raised.value) == (
        "gateway.platforms.sms: Twilio refused the account_sid/auth_token (HTTP 401)"
    )


def test_numbers_are_keyed_in_e164() -> None:
    assert canonical_number("+1 (415) 555-0100") == "+14155550100"
    assert canonical_number("0044 20 7946 0958") == "+442079460958"
    assert canonical_number(" 12345 ") == "12345"  # a short code stays as it is
    adapter = SmsAdapter()
    key = adapter.session_key("group", "+1 415-555-0100", None, None)
    assert key == "agent:main:sms:dm:+14155550100"


def test_send_splits_long_texts_at_1600_characters(twilio: TwilioStandIn) -> None:
    adapter = SmsAdapter()
    adapter.connect(settings(twilio, from_number=twilio.number))
    text = ("a line of an answer\n" * 200).strip()  # 3,999 characters: three SMS
    sid = adapter.send("+1 415 555 0100", text)
    sent = twilio.wait_for_sent(3)
    assert len(sent) == 3 and all(len(m["body"]) <= MAX_SMS_CHARS for m in sent)
    assert "".join(m["body"] for m in sent) == text
    assert {(m["to"], m["from"]) for m in sent} == {("+14155550100", twilio.number)}
    assert sid == sent[-1]["sid"]
    without = SmsAdapter()
    without.connect(settings(twilio))
    with pytest.raises(UserFacingError, match="from_number is not set"):
        without.send("+14155550100", "hello")


class Gateway:
    """The gateway's side of the contract: each event's :class:`EventDelivery` (the core's
    own) stored and answered ``answer: <text>``, or refused as a stopping gateway does."""

    def __init__(self, *, stopping: bool = False) -> None:
        self.events: list[PlatformEvent] = []
        self.stopping = stopping

    def deliver(self, event: PlatformEvent) -> EventDelivery:
        delivery = EventDelivery(asyncio.get_running_loop())
        self.events.append(event)
        if self.stopping:
            delivery.refuse("the gateway is stopping")
        else:
            delivery.finish(GatewayReply(text=f"answer: {event.text}", session_id="s1"))
        return delivery


def run_adapter(
    twilio: TwilioStandIn, gateway: Gateway, until: Callable[[str], None], **extra: Any
) -> None:
    async def run() -> None:
        adapter = SmsAdapter()
        await adapter.start(settings(twilio, **extra), gateway.deliver)
        try:
            assert adapter.address is not None
            await asyncio.to_thread(until, adapter.address)
        finally:
            await adapter.stop()

    asyncio.run(run())


def test_a_signed_sms_is_delivered_and_answered_from_our_number(twilio: TwilioStandIn) -> None:
    gateway = Gateway()

    def exchange(url: str) -> None:
        status, body = twilio.text_in(url, "+14155550100", "hello there", message_sid="SM1")
        assert status == 200 and "<Response>" in body
        (answer,) = twilio.wait_for_sent(1)
        assert (answer["to"], answer["from"], answer["body"]) == (
            "+14155550100",
            twilio.number,
            "answer: hello there",
        )

    run_adapter(twilio, gateway, exchange)
    (event,) = gateway.events
    assert (event.platform, event.chat_id, event.chat_type) == ("sms", "+14155550100", "dm")
    assert (event.message_id, event.text) == ("SM1", "hello there")


def test_unsigned_and_badly_signed_requests_are_refused(twilio: TwilioStandIn) -> None:
    gateway = Gateway()

    def forged(url: str) -> None:
        assert twilio.text_in(url, "+14155550100", "forged", signature="")[0] == 403
        assert twilio.text_in(url, "+14155550100", "forged", signature="bm9wZQ==")[0] == 403
        # Signed for another URL (the public one is what Twilio signs).
        assert twilio.text_in(url, "+14155550100", "hi")[0] == 403

    run_adapter(twilio, gateway, forged, public_url="https://sms.example.org/sms")
    assert gateway.events == []


def test_the_public_url_is_what_signatures_are_checked_against(twilio: TwilioStandIn) -> None:
    gateway = Gateway()
    public = "https://sms.example.org/sms"

    def through_a_proxy(url: str) -> None:
        from standins.twilio_api import twilio_signature

        params = {"From": "+14155550100", "To": twilio.number, "Body": "via proxy"}
        signature = twilio_signature(twilio.auth_token, public, {
            "MessageSid": "SM9", "AccountSid": twilio.account_sid, "NumMedia": "0",
            "NumSegments": "1", **params,
        })  # fmt: skip
        status, _ = twilio.text_in(
            url, "+14155550100", "via proxy", message_sid="SM9", signature=signature
        )
        assert status == 200
        twilio.wait_for_sent(1)

    run_adapter(twilio, gateway, through_a_proxy, public_url=public)
    assert [e.text for e in gateway.events] == ["via proxy"]


def test_a_failing_rest_call_is_tried_again(twilio: TwilioStandIn) -> None:
    gateway = Gateway()
    twilio.fail(500, times=1)

    def answered(url: str) -> None:
        assert twilio.text_in(url, "+14155550100", "retry me")[0] == 200
        assert twilio.wait_for_sent(1)[0]["body"] == "answer: retry me"

    run_adapter(twilio, gateway, answered)


def test_a_stopping_gateway_gets_503_with_retry_after(twilio: TwilioStandIn) -> None:
    gateway = Gateway(stopping=True)

    def refused(url: str) -> None:
        import urllib.error
        import urllib.parse
        import urllib.request

        from standins.twilio_api import twilio_signature

        params = {"From": "+14155550100", "To": twilio.number, "Body": "late"}
        data = urllib.parse.urlencode(params).encode()
        request = urllib.request.Request(url, data=data, method="POST", headers={
            "X-Twilio-Signature": twilio_signature(twilio.auth_token, url, params),
        })  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=30)
        assert raised.value.code == 503 and raised.value.headers["Retry-After"] == "5"

    run_adapter(twilio, gateway, refused)
    assert twilio.sent == []
