"""The dingtalk adapter's own pieces: the ``timestamp``/``sign`` check and what robot callbacks
become (pure functions over the documented shapes), settings checks, and ``send`` through a
conversation's sessionWebhook — the adapter on the gateway core in this process, over real HTTP
to the DingTalk stand-in and the model stand-in."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from gateway_helpers import model_config, running_gateway, title_reply
from hermes_hookspecs import UserFacingError
from hermes_platform_dingtalk.adapter import MESSAGE_CHARS, DingTalkAdapter
from hermes_platform_dingtalk.events import received, sign, sign_problem
from standins.dingtalk_api import APP_SECRET, DingTalkStandIn
from standins.openai_server import OpenAIStandIn, Reply


def body(**fields: Any) -> dict[str, Any]:
    return {"msgtype": "text", "text": {"content": " hi "}, "msgId": "msg1",
            "createAt": 1_700_000_000_000, "conversationType": "1", "conversationId": "cid1",
            "senderId": "$:LWCP_v1:$x", "senderStaffId": "staff1", "senderNick": "Alice",
            "sessionWebhook": "https://oapi.dingtalk.com/robot/sendBySession?session=s",
            "sessionWebhookExpiredTime": 1_700_005_400_000, **fields}  # fmt: skip


def test_the_sign_header_is_checked_with_the_timestamp_window() -> None:
    now = 1_700_000_000.0
    stamp = str(int(now * 1000))
    assert sign_problem({"timestamp": stamp, "sign": sign(stamp, "s")}, "s", now) is None
    assert sign_problem({"timestamp": stamp, "sign": sign(stamp, "t")}, "s", now) == (
        "missing or wrong sign header"
    )
    assert sign_problem({"timestamp": stamp}, "s", now) == "missing or wrong sign header"
    assert sign_problem({"sign": "x"}, "s", now) == "missing timestamp header"
    old = str(int((now - 3601) * 1000))
    assert sign_problem({"timestamp": old, "sign": sign(old, "s")}, "s", now) == (
        "timestamp more than an hour away"
    )


def test_robot_messages_map_to_the_g1_chat_types() -> None:
    single = received(body())
    assert single is not None and single.webhook.startswith("https://oapi.dingtalk.com/")
    event = single.event
    assert (event.chat_type, event.chat_id, event.user_id, event.text) == (
        "dm", "cid1", "staff1", "hi"
    )  # fmt: skip
    assert event.message_id == "msg1" and event.sent_at == 1_700_000_000.0
    assert single.webhook_until == 1_700_005_400.0
    group = received(body(conversationType="2"))
    assert group is not None and group.event.chat_type == "group"
    no_staff = received(body(senderStaffId=None))
    assert no_staff is not None and no_staff.event.user_id == "$:LWCP_v1:$x"
    picture = received(body(msgtype="picture", text=None, content={"downloadCode": "d"}))
    assert picture is not None and picture.event.text == ""
    assert [a.description for a in picture.event.attachments] == ["picture message"]
    for broken in ({"msgId": ""}, {"conversationId": None}, {"sessionWebhook": None},
                   {"text": {"content": "   "}}):  # fmt: skip
        assert received(body(**broken)) is None
    adapter = DingTalkAdapter()
    assert adapter.session_key("dm", "cid1", "staff1", None) == "agent:main:dingtalk:dm:cid1"
    assert adapter.session_key("group", "cid2", "staff1", None) == (
        "agent:main:dingtalk:group:cid2:staff1"
    )
    assert adapter.create_thread("cid1", "Handoff") is None


def test_settings_mistakes_are_one_line_naming_the_key() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.dingtalk\.app_secret is not"):
        DingTalkAdapter().connect({})
    with pytest.raises(UserFacingError, match=r"dingtalk\.port must be a port number$"):
        DingTalkAdapter().connect({"app_secret": "s", "port": -1})
    with pytest.raises(UserFacingError, match=r"dingtalk\.session_webhook_prefix must be a URL$"):
        DingTalkAdapter().connect({"app_secret": "s", "session_webhook_prefix": ""})


def test_send_goes_through_the_last_session_webhook_until_it_expires(tmp_path: Path) -> None:
    with OpenAIStandIn() as model, DingTalkStandIn() as dingtalk:
        model.add(title_reply(), Reply(text="hello", times=None))

        async def scenario() -> None:
            config = model_config(model)
            async with running_gateway(tmp_path / "home", config, clock=time.time) as gateway:
                adapter = DingTalkAdapter()
                settings = {"app_secret": APP_SECRET, "port": 0,
                            "session_webhook_prefix": dingtalk.webhook_prefix}  # fmt: skip
                await adapter.start(settings, gateway.deliver)
                try:
                    dingtalk.robot_url = adapter.address
                    with pytest.raises(UserFacingError, match="no valid sessionWebhook"):
                        await asyncio.to_thread(adapter.send, "cid_home", "too early")
                    said = await asyncio.to_thread(dingtalk.user_says, "cid_home", "al", "hi")
                    assert said[1].status == 200
                    await asyncio.to_thread(dingtalk.wait_for_posts, 1)
                    text = "word " * 1700  # 8,500 characters
                    await asyncio.to_thread(adapter.send, "cid_home", text)
                    pieces = (await asyncio.to_thread(dingtalk.wait_for_posts, 4))[1:]
                    assert all(len(p["text"]) <= MESSAGE_CHARS for p in pieces)
                    assert "".join(p["text"] for p in pieces) == text
                    short = await asyncio.to_thread(
                        dingtalk.user_says, "cid_short", "al", "hi", webhook_minutes=0.05
                    )
                    assert short[1].status == 200
                    await asyncio.to_thread(dingtalk.wait_for_posts, 5)
                    expiry = short[0]["sessionWebhookExpiredTime"] / 1000
                    await asyncio.sleep(max(0.0, expiry - time.time()) + 0.1)
                    with pytest.raises(UserFacingError, match="no valid sessionWebhook"):
                        await asyncio.to_thread(adapter.send, "cid_short", "too late")
                finally:
                    await adapter.stop()

        asyncio.run(scenario())
