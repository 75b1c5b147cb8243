"""The feishu adapter's own pieces: what Feishu callbacks become (pure functions over the
documented event shapes: chat types, mentions, encryption, signatures, the verification token),
settings checks, and sending through the Open API over real HTTP to the Feishu stand-in."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hermes_hookspecs import PlatformEvent, UserFacingError
from hermes_hookspecs.adapter_kit import WebhookRefused as Refused
from hermes_platform_feishu.adapter import MESSAGE_CHARS, FeishuAdapter
from hermes_platform_feishu.events import decrypt, event_from_message, read_callback
from standins.feishu_api import (
    APP_ID,
    APP_SECRET,
    ENCRYPT_KEY,
    VERIFICATION_TOKEN,
    FeishuStandIn,
    encrypt,
)


def event(text: str = "hi", **message: Any) -> dict[str, Any]:
    return {
        "sender": {"sender_id": {"open_id": "ou_1"}, "sender_type": "user"},
        "message": {"message_id": "om_1", "chat_id": "oc_1", "chat_type": "p2p",
                    "message_type": "text", "content": json.dumps({"text": text}),
                    "create_time": "1700000000000", **message},
    }  # fmt: skip


def test_feishu_chats_map_to_the_g1_chat_types() -> None:
    dm = event_from_message(event())
    assert dm is not None and (dm.chat_type, dm.chat_id, dm.user_id) == ("dm", "oc_1", "ou_1")
    assert dm.message_id == "om_1" and dm.sent_at == 1_700_000_000.0
    group = event_from_message(event(chat_type="group"))
    assert group is not None and (group.chat_type, group.thread_id) == ("group", None)
    thread = event_from_message(event(chat_type="group", thread_id="omt_9"))
    assert thread is not None and (thread.chat_type, thread.thread_id) == ("thread", "omt_9")
    adapter = FeishuAdapter()
    assert adapter.session_key("dm", "oc_1", "ou_1", None) == "agent:main:feishu:dm:oc_1"
    assert adapter.session_key("thread", "oc_1", "ou_1", "omt_9") == (
        "agent:main:feishu:group:oc_1:omt_9"
    )


def test_mentions_and_other_message_types() -> None:
    mentions = [{"key": "@_user_1", "name": "Hermes"}, {"key": "@_user_2", "name": "Bob"}]
    addressed = event_from_message(event("@_user_1 /title Plan with @_user_2", mentions=mentions))
    assert addressed is not None and addressed.text == "/title Plan with @Bob"
    image = event_from_message(event(message_type="image", content='{"image_key": "img_1"}'))
    assert image is not None and image.text == ""
    assert [a.description for a in image.attachments] == ["image message"]
    app = event()
    app["sender"]["sender_type"] = "app"
    assert event_from_message(app) is None
    assert event_from_message(event("   ")) is None
    assert event_from_message(event(content="not json")) is None
    assert event_from_message({"message": "x"}) is None


def test_callbacks_are_checked_and_decrypted() -> None:
    envelope = {"schema": "2.0", "header": {"token": VERIFICATION_TOKEN, "event_id": "e1"}}
    plain = json.dumps(envelope).encode()
    assert read_callback(plain, {}, VERIFICATION_TOKEN, None)["header"]["event_id"] == "e1"
    with pytest.raises(Refused, match="verification token") as refused:
        read_callback(plain, {}, "another-token", None)
    assert refused.value.status == 401
    with pytest.raises(Refused) as malformed:
        read_callback(b"{nope", {}, VERIFICATION_TOKEN, None)
    assert malformed.value.status == 400
    body = json.dumps({"encrypt": encrypt(plain, ENCRYPT_KEY)}).encode()
    assert decrypt(json.loads(body)["encrypt"], ENCRYPT_KEY) == plain
    signature = hashlib.sha256(b"1" + b"n" + ENCRYPT_KEY.encode() + body).hexdigest()
    headers = {"X-Lark-Request-Timestamp": "1", "X-Lark-Request-Nonce": "n"}
    opened = read_callback(body, {**headers, "X-Lark-Signature": signature}, VERIFICATION_TOKEN,
                           ENCRYPT_KEY)  # fmt: skip
    assert opened["header"]["event_id"] == "e1"
    with pytest.raises(Refused, match="X-Lark-Signature"):
        read_callback(body, {**headers, "X-Lark-Signature": "0" * 64}, VERIFICATION_TOKEN,
                      ENCRYPT_KEY)  # fmt: skip
    with pytest.raises(Refused, match="does not decrypt"):
        read_callback(b'{"encrypt": "AAAA"}', headers, VERIFICATION_TOKEN, ENCRYPT_KEY)


def test_settings_mistakes_are_one_line_naming_the_key() -> None:
    full = {"app_id": APP_ID, "app_secret": APP_SECRET, "verification_token": "v"}
    for name in full:
        partial = {k: v for k, v in full.items() if k != name}
        with pytest.raises(UserFacingError, match=rf"^gateway\.platforms\.feishu\.{name} is not"):
            FeishuAdapter().connect(partial)
    adapter = FeishuAdapter()
    adapter.connect(full)
    assert adapter.api_base == "https://open.feishu.cn"
    adapter.connect({**full, "domain": "lark"})
    assert adapter.api_base == "https://open.larksuite.com"
    adapter.connect({**full, "domain": "lark", "base_url": "http://127.0.0.1:9/"})
    assert adapter.api_base == "http://127.0.0.1:9"
    with pytest.raises(UserFacingError, match=r"feishu\.domain must be feishu or lark$"):
        FeishuAdapter().connect({**full, "domain": "dingtalk"})
    with pytest.raises(UserFacingError, match=r"feishu\.port must be a port number$"):
        FeishuAdapter().connect({**full, "port": "x"})


@pytest.fixture
def running(request: pytest.FixtureRequest) -> Iterator[tuple[FeishuAdapter, FeishuStandIn]]:
    """The adapter started on a loop of its own thread, as the gateway runs it."""
    with FeishuStandIn() as feishu:
        adapter = FeishuAdapter()
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()

        def deliver(event: PlatformEvent) -> Any:
            raise AssertionError(f"nothing is delivered here: {event}")

        settings = {"app_id": APP_ID, "app_secret": APP_SECRET,
                    "verification_token": VERIFICATION_TOKEN, "base_url": feishu.base_url,
                    "port": 0}  # fmt: skip
        asyncio.run_coroutine_threadsafe(adapter.start(settings, deliver), loop).result(30)
        try:
            yield adapter, feishu
        finally:
            asyncio.run_coroutine_threadsafe(adapter.stop(), loop).result(30)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()


def test_send_posts_long_text_in_pieces_to_the_chat(
    running: tuple[FeishuAdapter, FeishuStandIn],
) -> None:
    adapter, feishu = running
    text = "word " * 1700  # 8,500 characters
    last = adapter.send("oc_home", text)
    posted = feishu.wait_for_posts(3)
    assert all(len(p["text"]) <= MESSAGE_CHARS and p["chat_id"] == "oc_home" for p in posted)
    assert "".join(p["text"] for p in posted) == text and last == posted[-1]["message_id"]
    assert adapter.create_thread("oc_home", "Handoff") is None
    feishu.revoke_tokens()  # a token Feishu no longer takes: a new one is asked, once
    adapter.send("oc_home", "after the token expired")
    assert feishu.wait_for_posts(4)[3]["text"] == "after the token expired"
    assert feishu.token_requests == 2


def test_send_without_a_running_adapter_is_one_line() -> None:
    adapter = FeishuAdapter()
    with pytest.raises(UserFacingError, match="feishu platform is not running"):
        adapter.send("oc_1", "hello")
