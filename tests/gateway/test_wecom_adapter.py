"""The wecom adapter's own pieces: the callback encryption and ``msg_signature`` (checked
against the WeCom stand-in's own sealing, written from the docs), what decrypted messages become
(pure functions over the documented XML), settings checks, the URL check, and sending through
the message API over real HTTP to the WeCom stand-in (long answers split at 2,048 bytes, a
refused token asked again)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hermes_hookspecs import PlatformEvent, UserFacingError
from hermes_hookspecs.adapter_kit import WebhookRefused as Refused
from hermes_platform_wecom.adapter import MESSAGE_BYTES, WeComAdapter
from hermes_platform_wecom.crypto import aes_key, decrypt, encrypt, signature
from hermes_platform_wecom.messages import event_from_message, opened, xml_fields
from standins.wecom_api import (
    AGENT_ID,
    CORP_ID,
    CORP_SECRET,
    ENCODING_AES_KEY,
    TOKEN,
    CallbackAnswer,
    WeComStandIn,
)
from standins.wxbiz_crypto import seal, sha1_signature, unseal

KEY = aes_key(ENCODING_AES_KEY)
SETTINGS = {"corp_id": CORP_ID, "corp_secret": CORP_SECRET, "agent_id": AGENT_ID,
            "token": TOKEN, "encoding_aes_key": ENCODING_AES_KEY}  # fmt: skip


def test_the_encryption_agrees_with_the_documented_scheme_both_ways() -> None:
    message = "<xml><Content>你好 &amp; hello</Content></xml>".encode()
    assert decrypt(seal(message, ENCODING_AES_KEY, CORP_ID), KEY) == (message, CORP_ID)
    assert unseal(encrypt(message, KEY, CORP_ID), ENCODING_AES_KEY) == (message, CORP_ID)
    assert signature(TOKEN, "1700000000", "n1", "enc") == sha1_signature(
        "enc", "n1", TOKEN, "1700000000"
    )
    with pytest.raises(ValueError, match="43 characters"):
        aes_key("short")


def test_a_callback_is_opened_only_with_the_right_signature_and_corp_id() -> None:
    encrypted = seal(b"<xml/>", ENCODING_AES_KEY, CORP_ID)
    query = {
        "timestamp": "1",
        "nonce": "n",
        "msg_signature": sha1_signature(TOKEN, "1", "n", encrypted),
    }
    assert opened(query, encrypted, TOKEN, KEY, CORP_ID) == b"<xml/>"
    with pytest.raises(Refused, match="msg_signature"):
        opened({**query, "nonce": "other"}, encrypted, TOKEN, KEY, CORP_ID)
    with pytest.raises(Refused, match="msg_signature"):
        opened({**query, "msg_signature": ""}, encrypted, TOKEN, KEY, CORP_ID)
    elsewhere = seal(b"<xml/>", ENCODING_AES_KEY, "wwsomeoneelse")
    signed = {**query, "msg_signature": sha1_signature(TOKEN, "1", "n", elsewhere)}
    with pytest.raises(Refused, match="another CorpID"):
        opened(signed, elsewhere, TOKEN, KEY, CORP_ID)
    garbage = "QUJD"  # base64, not AES
    signed = {**query, "msg_signature": sha1_signature(TOKEN, "1", "n", garbage)}
    with pytest.raises(Refused, match="does not decrypt"):
        opened(signed, garbage, TOKEN, KEY, CORP_ID)


def test_xml_is_read_without_document_types() -> None:
    assert xml_fields(b"<xml><A><![CDATA[<!DOCTYPE x> ]]></A><B>2</B></xml>") == {
        "A": "<!DOCTYPE x> ",
        "B": "2",
    }
    bomb = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><xml><A>&a;</A></xml>'
    with pytest.raises(Refused, match="document type"):
        xml_fields(bomb)
    with pytest.raises(Refused, match="not XML"):
        xml_fields(b"<xml><A></xml>")
    with pytest.raises(Refused, match="not an <xml> message"):
        xml_fields(b"<other/>")


def test_messages_map_to_a_dm_per_member() -> None:
    fields = {"ToUserName": CORP_ID, "FromUserName": "zhangsan", "CreateTime": "1700000000",
              "MsgType": "text", "Content": " hi ", "MsgId": "123", "AgentID": "1000002"}  # fmt: skip
    event = event_from_message(fields, "1000002")
    assert event is not None
    assert (event.chat_type, event.chat_id, event.user_id, event.text, event.message_id) == (
        "dm", "zhangsan", "zhangsan", "hi", "123"
    )  # fmt: skip
    assert event.sent_at == 1_700_000_000.0
    image = event_from_message({**fields, "MsgType": "image", "Content": ""}, "1000002")
    assert image is not None and [a.description for a in image.attachments] == ["image message"]
    for other in ({"MsgType": "event"}, {"MsgId": ""}, {"AgentID": "1000003"}, {"Content": " "}):
        assert event_from_message({**fields, **other}, "1000002") is None
    adapter = WeComAdapter()
    assert adapter.session_key("dm", "zhangsan", "zhangsan", None) == "agent:main:wecom:dm:zhangsan"
    assert adapter.create_thread("zhangsan", "Handoff") is None


def test_settings_mistakes_are_one_line_naming_the_key() -> None:
    for name in ("corp_id", "corp_secret", "token", "encoding_aes_key"):
        partial = {k: v for k, v in SETTINGS.items() if k != name}
        with pytest.raises(UserFacingError, match=rf"^gateway\.platforms\.wecom\.{name} is not"):
            WeComAdapter().connect(partial)
    with pytest.raises(UserFacingError, match=r"wecom\.agent_id must be the application's"):
        WeComAdapter().connect({**SETTINGS, "agent_id": None})
    with pytest.raises(UserFacingError, match=r"wecom\.encoding_aes_key must be the 43"):
        WeComAdapter().connect({**SETTINGS, "encoding_aes_key": "x" * 42})
    with pytest.raises(UserFacingError, match=r"wecom\.port must be a port number$"):
        WeComAdapter().connect({**SETTINGS, "port": "x"})
    WeComAdapter().connect({**SETTINGS, "agent_id": "1000002"})


@pytest.fixture
def running() -> Iterator[tuple[WeComAdapter, WeComStandIn]]:
    """The adapter started on a loop of its own thread, as the gateway runs it."""
    with WeComStandIn() as wecom:
        adapter = WeComAdapter()
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()

        def deliver(event: PlatformEvent) -> Any:
            raise AssertionError(f"nothing is delivered here: {event}")

        settings = {**SETTINGS, "api_base": wecom.base_url, "port": 0}
        asyncio.run_coroutine_threadsafe(adapter.start(settings, deliver), loop).result(30)
        wecom.callback_url = adapter.address
        try:
            yield adapter, wecom
        finally:
            asyncio.run_coroutine_threadsafe(adapter.stop(), loop).result(30)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()


def test_the_url_check_answers_the_decrypted_echostr(
    running: tuple[WeComAdapter, WeComStandIn],
) -> None:
    _, wecom = running
    assert wecom.verify_url("echo-5678") == CallbackAnswer(200, "echo-5678")
    assert wecom.verify_url(token="not-the-token").status == 401


def test_send_splits_at_2048_bytes_and_asks_a_new_token_once_refused(
    running: tuple[WeComAdapter, WeComStandIn],
) -> None:
    adapter, wecom = running
    text = "汉字" * 1500  # 9,000 bytes
    last = adapter.send("zhangsan", text)
    sent = wecom.wait_for_sent(5)
    assert all(len(s["text"].encode()) <= MESSAGE_BYTES and s["touser"] == "zhangsan" for s in sent)
    assert "".join(s["text"] for s in sent) == text and last == f"standin{len(sent)}"
    wecom.expire_tokens()
    adapter.send("zhangsan", "after the token expired")
    assert wecom.wait_for_sent(len(sent) + 1)[-1]["text"] == "after the token expired"
    assert wecom.tokens_issued == 2


def test_a_refused_secret_at_start_is_one_line() -> None:
    with WeComStandIn() as wecom:
        settings = {**SETTINGS, "corp_secret": "wrong", "api_base": wecom.base_url, "port": 0}

        async def scenario() -> None:
            with pytest.raises(UserFacingError, match=r"wecom\.corp_secret was refused by WeCom"):
                await WeComAdapter().start(settings, lambda event: None)  # type: ignore[arg-type,return-value]

        asyncio.run(scenario())
