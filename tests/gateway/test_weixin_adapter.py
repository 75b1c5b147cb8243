"""The weixin adapter's own pieces: the signatures and the safe mode's encryption (checked
against the Weixin stand-in's own sealing, written from the docs), what pushed messages become,
passive replies, settings checks — and the five-second rule with the adapter on the gateway
core in this process, over real HTTP to the Weixin stand-in and the model stand-in: a quick
answer is the passive reply, a slow or long one follows through the customer-service API."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from gateway_helpers import model_config, running_gateway, title_reply
from hermes_hookspecs import UserFacingError
from hermes_hookspecs.adapter_kit import WebhookRefused as Refused
from hermes_platform_weixin.adapter import MESSAGE_BYTES, WeixinAdapter
from hermes_platform_weixin.messages import event_from_message, read_message, text_reply
from hermes_platform_weixin.safe_mode import SafeMode, sha1_signature
from standins.openai_server import OpenAIStandIn, Reply
from standins.weixin_api import (
    ACCOUNT,
    APP_ID,
    APP_SECRET,
    ENCODING_AES_KEY,
    TOKEN,
    CallbackAnswer,
    WeixinStandIn,
)
from standins.wxbiz_crypto import seal, unseal

SAFE = SafeMode(ENCODING_AES_KEY, APP_ID)
SETTINGS = {"app_id": APP_ID, "app_secret": APP_SECRET, "token": TOKEN}
MESSAGE = (
    f"<xml><ToUserName>{ACCOUNT}</ToUserName><FromUserName>o_alice</FromUserName>"
    "<CreateTime>1700000000</CreateTime><MsgType>text</MsgType>"
    "<Content><![CDATA[ hi ]]></Content><MsgId>42</MsgId></xml>"
).encode()


def signed_query(**extra: str) -> dict[str, str]:
    signature = sha1_signature(TOKEN, "1700000000", "77")
    return {"signature": signature, "timestamp": "1700000000", "nonce": "77", **extra}


def test_the_safe_mode_agrees_with_the_documented_scheme_both_ways() -> None:
    message = "<xml><Content>你好</Content></xml>".encode()
    assert SAFE.open(seal(message, ENCODING_AES_KEY, APP_ID)) == message
    assert unseal(SAFE.seal(message), ENCODING_AES_KEY) == (message, APP_ID)
    with pytest.raises(ValueError, match="another AppID"):
        SAFE.open(seal(message, ENCODING_AES_KEY, "wxsomeoneelse"))
    with pytest.raises(ValueError, match="43 characters"):
        SafeMode("short", APP_ID)


def test_a_push_is_read_only_with_the_right_signatures() -> None:
    fields, encrypted = read_message(signed_query(), MESSAGE, TOKEN, None)
    assert fields["Content"] == " hi " and not encrypted
    with pytest.raises(Refused, match="wrong signature"):
        read_message(signed_query(nonce="78"), MESSAGE, TOKEN, None)
    with pytest.raises(Refused, match="wrong signature"):
        read_message({}, MESSAGE, TOKEN, None)
    sealed = seal(MESSAGE, ENCODING_AES_KEY, APP_ID)
    body = f"<xml><ToUserName>{ACCOUNT}</ToUserName><Encrypt>{sealed}</Encrypt></xml>".encode()
    msg_signature = sha1_signature(TOKEN, "1700000000", "77", sealed)
    safe_query = signed_query(encrypt_type="aes", msg_signature=msg_signature)
    fields, encrypted = read_message(safe_query, body, TOKEN, SAFE)
    assert fields["MsgId"] == "42" and encrypted
    with pytest.raises(Refused, match="msg_signature"):
        read_message({**safe_query, "msg_signature": "0" * 40}, body, TOKEN, SAFE)
    with pytest.raises(Refused, match="no encoding_aes_key"):
        read_message(safe_query, body, TOKEN, None)
    bomb = b'<!DOCTYPE x [<!ENTITY a "b">]>' + MESSAGE
    with pytest.raises(Refused, match="document type"):
        read_message(signed_query(), bomb, TOKEN, None)


def test_messages_map_to_a_dm_per_follower_and_replies_are_xml() -> None:
    event = event_from_message(read_message(signed_query(), MESSAGE, TOKEN, None)[0])
    assert event is not None
    assert (event.chat_type, event.chat_id, event.user_id, event.text, event.message_id) == (
        "dm", "o_alice", "o_alice", "hi", "42"
    )  # fmt: skip
    assert event.sent_at == 1_700_000_000.0
    base = {"FromUserName": "o_alice", "MsgType": "image", "MsgId": "43"}
    image = event_from_message(base)
    assert image is not None and [a.description for a in image.attachments] == ["image message"]
    for other in ({"MsgType": "event", "Event": "subscribe"}, {"MsgId": ""}):
        assert event_from_message({**base, **other}) is None
    assert event_from_message({**base, "MsgType": "text", "Content": "  "}) is None
    voice = event_from_message({**base, "MsgType": "voice", "Recognition": " 你好 "})
    assert voice is not None and voice.text == "你好"
    assert [a.description for a in voice.attachments] == ["voice message"]
    adapter = WeixinAdapter()
    assert adapter.session_key("dm", "o_alice", "o_alice", None) == "agent:main:weixin:dm:o_alice"
    assert adapter.create_thread("o_alice", "Handoff") is None
    plain = text_reply("o_alice", ACCOUNT, "a ]]> b\x1b\x07 c", None, TOKEN)
    assert b"<Content><![CDATA[a ]]]]><![CDATA[> b c]]></Content>" in plain
    sealed = text_reply("o_alice", ACCOUNT, "secret", SAFE, TOKEN)
    assert b"<Encrypt>" in sealed and b"secret" not in sealed


def test_settings_mistakes_are_one_line_naming_the_key() -> None:
    for name in SETTINGS:
        partial = {k: v for k, v in SETTINGS.items() if k != name}
        with pytest.raises(UserFacingError, match=rf"^gateway\.platforms\.weixin\.{name} is not"):
            WeixinAdapter().connect(partial)
    with pytest.raises(UserFacingError, match=r"weixin\.encoding_aes_key must be the 43"):
        WeixinAdapter().connect({**SETTINGS, "encoding_aes_key": "x" * 44})
    with pytest.raises(UserFacingError, match=r"weixin\.reply_wait_seconds must be below 5"):
        WeixinAdapter().connect({**SETTINGS, "reply_wait_seconds": 5})
    WeixinAdapter().connect({**SETTINGS, "encoding_aes_key": ENCODING_AES_KEY})


def test_a_refused_secret_at_start_is_one_line() -> None:
    with WeixinStandIn() as weixin:
        settings = {**SETTINGS, "app_secret": "wrong", "api_base": weixin.base_url, "port": 0}

        async def scenario() -> None:
            with pytest.raises(UserFacingError, match=r"weixin\.app_secret was refused by Weixin"):
                await WeixinAdapter().start(settings, lambda event: None)  # type: ignore[arg-type,return-value]

        asyncio.run(scenario())


def test_quick_answers_are_passive_replies_slow_and_long_ones_follow_by_the_api(
    tmp_path: Path,
) -> None:
    release = threading.Event()
    long_text = "长" * 1000  # 3,000 bytes
    with OpenAIStandIn() as model, WeixinStandIn() as weixin:
        model.add(title_reply(), Reply(text="Quick.", match="quick"))
        model.add(Reply(text="Slow.", match="slow", hold=release, hold_after_chunks=1))
        model.add(Reply(text=long_text, match="long"), Reply(text="Sealed.", match="sealed"))

        async def scenario() -> None:
            config = model_config(model)
            async with running_gateway(tmp_path / "home", config, clock=time.time) as gateway:
                adapter = WeixinAdapter()
                settings = {**SETTINGS, "encoding_aes_key": ENCODING_AES_KEY, "port": 0,
                            "api_base": weixin.base_url, "reply_wait_seconds": 4.5}  # fmt: skip
                await adapter.start(settings, gateway.deliver)
                try:
                    weixin.server_url = adapter.address
                    check = await asyncio.to_thread(weixin.verify_url, "echo-1")
                    assert check == CallbackAnswer(200, "echo-1")
                    _, quick = await asyncio.to_thread(weixin.user_says, "o_al", "quick")
                    assert quick.status == 200 and quick.body.startswith("<xml>")
                    _, slow = await asyncio.to_thread(weixin.user_says, "o_al", "slow")
                    assert slow == CallbackAnswer(200, "success")
                    release.set()
                    await asyncio.to_thread(weixin.wait_for_received, 2)
                    _, long = await asyncio.to_thread(weixin.user_says, "o_al", "long")
                    assert long == CallbackAnswer(200, "success")
                    await asyncio.to_thread(weixin.wait_for_received, 4)
                    _, sealed = await asyncio.to_thread(
                        weixin.user_says, "o_al", "sealed", safe=True
                    )
                    assert sealed.status == 200 and "<Encrypt>" in sealed.body
                    await asyncio.to_thread(adapter.send, "o_al", "handoff")
                    weixin.expire_tokens()  # a token no longer taken: a new one is asked, once
                    await asyncio.to_thread(adapter.send, "o_al", "after the token expired")
                    assert weixin.tokens_issued == 2
                    with pytest.raises(UserFacingError, match="sending to o_never refused: response out of time limit"):
                        await asyncio.to_thread(adapter.send, "o_never", "no")
                finally:
                    await adapter.stop()

        asyncio.run(scenario())
    got = [(r["text"], r["via"]) for r in weixin.received]
    assert got[:2] == [("Quick.", "passive"), ("Slow.", "custom")]
    assert all(via == "custom" for _, via in got[2:4])
    assert "".join(text for text, _ in got[2:4]) == long_text
    assert all(len(text.encode()) <= MESSAGE_BYTES for text, _ in got)
    assert got[4:] == [
        ("Sealed.", "passive"), ("handoff", "custom"), ("after the token expired", "custom"),
    ]  # fmt: skip
