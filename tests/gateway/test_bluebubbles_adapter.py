"""The bluebubbles adapter's own pieces: what BlueBubbles messages become (pure functions over
the documented message shape), canonical handles, settings checks, and the adapter running
against the BlueBubbles stand-in over real HTTP (webhooks in, REST out) with the core's own
delivery objects answering from a script: refusals, repeats, splitting, sending to a handle."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_hookspecs import GatewayReply, PlatformEvent, UserFacingError
from hermes_hookspecs.adapter_kit import STATE_FOLDER
from hermes_platform_bluebubbles.adapter import BlueBubblesAdapter
from hermes_platform_bluebubbles.messages import canonical_handle, event_from_message
from hermes_platform_bluebubbles.rest import MESSAGE_CHARS
from standins.bluebubbles_api import BlueBubblesStandIn

from hermes_core.gateway.delivery import EventDelivery


@pytest.fixture
def bluebubbles() -> Any:
    with BlueBubblesStandIn() as server:
        yield server


def message(**fields: Any) -> dict[str, Any]:
    chat = {"guid": "iMessage;-;+15550102000", "style": 45, "displayName": ""}
    return {"guid": "M1", "text": "hi", "isFromMe": False, "dateCreated": 1_700_000_000_000,
            "handle": {"address": "+1 (555) 010-2000", "service": "iMessage"}, "itemType": 0,
            "associatedMessageGuid": None, "chats": [chat], **fields}  # fmt: skip


def test_handles_are_canonical() -> None:
    assert canonical_handle("+1 (555) 010-2000") == "+15550102000"
    assert canonical_handle(" Alice@Example.COM ") == "alice@example.com"
    assert canonical_handle("555.010.2000") == "5550102000"


def test_messages_map_to_the_g1_chat_types() -> None:
    found = event_from_message(message())
    assert found is not None
    dm, chat_guid = found
    assert (dm.chat_type, dm.chat_id, dm.user_id) == ("dm", "+15550102000", "+15550102000")
    assert chat_guid == "iMessage;-;+15550102000" and dm.message_id == "M1"
    assert dm.sent_at == 1_700_000_000
    group_chat = {"guid": "iMessage;+;chat42", "style": 43, "displayName": "Trip"}
    found = event_from_message(message(chats=[group_chat]))
    assert found is not None
    group, chat_guid = found
    assert (group.chat_type, group.chat_id, group.user_id) == (
        "group", "iMessage;+;chat42", "+15550102000")  # fmt: skip
    assert group.chat_name == "Trip" and chat_guid == "iMessage;+;chat42"
    hostile = event_from_message(message(text="<script>alert(1)</script>; DROP TABLE x"))
    assert hostile is not None and hostile[0].text == "<script>alert(1)</script>; DROP TABLE x"


def test_what_is_not_for_the_agent_is_dropped() -> None:
    assert event_from_message(message(isFromMe=True)) is None
    assert event_from_message(message(associatedMessageGuid="p:0/M0")) is None  # a tapback
    assert event_from_message(message(itemType=2)) is None  # a group rename
    assert event_from_message(message(text="\ufffc")) is None  # an attachment alone
    assert event_from_message(message(chats=[])) is None
    assert event_from_message(message(handle=None)) is None


def test_a_missing_or_wrong_setting_is_one_line_naming_the_key() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.bluebubbles\.url is not set"):
        BlueBubblesAdapter().connect({"password": "p"})
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.bluebubbles\.password is"):
        BlueBubblesAdapter().connect({"url": "http://127.0.0.1:1234"})
    with pytest.raises(UserFacingError, match=r"bluebubbles\.port must be a port number"):
        BlueBubblesAdapter().connect({"url": "http://x", "password": "p", "port": "web"})


def test_a_refused_password_fails_start_with_one_line(bluebubbles: BlueBubblesStandIn) -> None:
    def refuse(event: PlatformEvent) -> Any:
        raise AssertionError("nothing may be delivered")

    async def start() -> None:
        settings = {"url": bluebubbles.url, "password": "wrong", "port": 0}
        await BlueBubblesAdapter().start(settings, refuse)

    with pytest.raises(UserFacingError) as raised:
        asyncio.run(start())
    assert str(raised.value).startswith("gateway.platforms.bluebubbles.password was refused")
    assert "HTTP 401" in str(raised.value) and "\n" not in str(raised.value)


class ScriptedGateway:
    """The gateway's side with the core's :class:`EventDelivery`: ``refusals[text]`` times
    refused as a store that cannot write would, then stored and answered ``answer: <text>``."""

    def __init__(self, refusals: dict[str, int] | None = None) -> None:
        self.refusals = refusals or {}
        self.delivered: list[PlatformEvent] = []

    def deliver(self, event: PlatformEvent) -> EventDelivery:
        delivery = EventDelivery(asyncio.get_running_loop())
        self.delivered.append(event)
        if self.refusals.get(event.text, 0) > 0:
            self.refusals[event.text] -= 1
            delivery._refuse("the store refused the write: disk full")
        else:
            delivery.finish(GatewayReply(text=f"answer: {event.text}", session_id="s1"))
        return delivery


def run_adapter(server: BlueBubblesStandIn, folder: Path, gateway: ScriptedGateway,
                until: Callable[[BlueBubblesAdapter], None]) -> None:  # fmt: skip
    async def run() -> None:
        adapter = BlueBubblesAdapter()
        settings = {"url": server.url, "password": server.password, "port": 0,
                    STATE_FOLDER: str(folder)}  # fmt: skip
        await adapter.start(settings, gateway.deliver)
        server.webhook_url = f"{adapter.address}?password={server.password}"
        try:
            await asyncio.to_thread(until, adapter)
        finally:
            await adapter.stop()

    asyncio.run(run())


def test_webhooks_refusals_repeats_and_sending(
    bluebubbles: BlueBubblesStandIn, tmp_path: Path
) -> None:
    alice = "alice@example.com"
    chat = bluebubbles.dm(alice)
    gateway = ScriptedGateway({"refused once": 1})

    def scenario(adapter: BlueBubblesAdapter) -> None:
        guid, status = bluebubbles.user_says(chat, alice, "hello")
        assert status == 200
        first = bluebubbles.wait_for_sent(1)[0]
        assert (first["text"], first["chatGuid"]) == ("answer: hello", chat)
        assert bluebubbles.deliver_again(guid) == 200  # a repeat: acknowledged, taken once
        refused, status = bluebubbles.user_says(chat, alice, "refused once")
        assert status == 503
        assert bluebubbles.deliver_again(refused) == 200  # sent again: now stored
        assert bluebubbles.wait_for_sent(2)[1]["text"] == "answer: refused once"
        assert bluebubbles.post_raw(b"{}", password="wrong") == 401
        assert bluebubbles.post_raw(b"not json", password=bluebubbles.password) == 400
        typing = b'{"type": "typing-indicator", "data": {"display": true}}'
        assert bluebubbles.post_raw(typing, password=bluebubbles.password) == 200
        long = ("line of text\n" * 1500).strip()
        assert adapter.send(alice, long) is not None  # to a handle: its one-to-one chat
        pieces = bluebubbles.wait_for_sent(4)[2:]
        assert all(len(p["text"]) <= MESSAGE_CHARS for p in pieces)
        assert "".join(p["text"] for p in pieces) == long and pieces[0]["chatGuid"] == chat

    run_adapter(bluebubbles, tmp_path, gateway, scenario)
    assert [e.text for e in gateway.delivered] == ["hello", "refused once", "refused once"]
    assert set(bluebubbles.echoes) <= {200}
    assert (tmp_path / "cursors.json").is_file()


def test_a_message_the_store_refused_is_read_again_without_a_repeat(
    bluebubbles: BlueBubblesStandIn, tmp_path: Path
) -> None:
    bob = "+15550103000"
    chat = bluebubbles.dm(bob)
    gateway = ScriptedGateway({"refused twice": 2})

    def scenario(adapter: BlueBubblesAdapter) -> None:
        assert bluebubbles.user_says(chat, bob, "refused twice")[1] == 503  # the very first
        assert bluebubbles.wait_for_sent(1)[0]["text"] == "answer: refused twice"
        assert bluebubbles.user_says(chat, bob, "then live")[1] == 200
        assert bluebubbles.wait_for_sent(2)[1]["text"] == "answer: then live"

    run_adapter(bluebubbles, tmp_path, gateway, scenario)
    assert [e.text for e in gateway.delivered] == ["refused twice"] * 3 + ["then live"]
