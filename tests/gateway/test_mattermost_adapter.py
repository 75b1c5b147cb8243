"""The mattermost adapter's own pieces: what posts become (a pure function over the documented
post shape), settings checks, and the adapter running against the Mattermost stand-in over real
HTTP and a real WebSocket, with the core's own delivery objects answering from a script:
threads, splitting, a repeated event, a lost WebSocket and the catch-up at reconnection."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_hookspecs import GatewayReply, PlatformEvent, UserFacingError
from hermes_hookspecs.adapter_kit import STATE_FOLDER
from hermes_platform_mattermost.adapter import MESSAGE_CHARS, MattermostAdapter, event_from_post
from standins.mattermost_api import BOT_ID, BOT_NAME, MattermostStandIn

from hermes_core.gateway.delivery import EventDelivery


@pytest.fixture
def mattermost() -> Any:
    with MattermostStandIn() as server:
        yield server


def post(**fields: Any) -> dict[str, Any]:
    return {"id": "p1", "create_at": 1_700_000_000_000, "user_id": "u1", "channel_id": "c1",
            "root_id": "", "message": "hi", "type": "", "delete_at": 0, **fields}  # fmt: skip


def test_posts_map_to_the_g1_chat_types() -> None:
    dm = event_from_post(post(), "D", BOT_ID)
    assert dm is not None and (dm.chat_type, dm.chat_id, dm.user_id) == ("dm", "c1", "u1")
    assert dm.message_id == "p1" and dm.sent_at == 1_700_000_000
    group = event_from_post(post(), "G", BOT_ID)
    assert group is not None and group.chat_type == "group"
    for kind in ("O", "P"):
        channel = event_from_post(post(), kind, BOT_ID)
        assert channel is not None and channel.chat_type == "channel"
    reply = event_from_post(post(root_id="p0"), "O", BOT_ID)
    assert reply is not None and (reply.chat_type, reply.thread_id) == ("thread", "p0")
    mention = event_from_post(post(message=f"@{BOT_NAME} /title Plan"), "O", BOT_ID, BOT_NAME)
    assert mention is not None and mention.text == "/title Plan"
    other = event_from_post(post(message="@hermesfan look"), "O", BOT_ID, BOT_NAME)
    assert other is not None and other.text == "@hermesfan look"
    hostile = event_from_post(post(message="'); DROP TABLE messages; --"), "D", BOT_ID)
    assert hostile is not None and hostile.text == "'); DROP TABLE messages; --"


def test_what_is_not_for_the_agent_is_dropped() -> None:
    assert event_from_post(post(user_id=BOT_ID), "D", BOT_ID) is None
    assert event_from_post(post(type="system_join_channel"), "O", BOT_ID) is None
    assert event_from_post(post(delete_at=1), "O", BOT_ID) is None
    assert event_from_post(post(message="   "), "O", BOT_ID) is None
    assert event_from_post(post(message=f"@{BOT_NAME}"), "O", BOT_ID, BOT_NAME) is None


def test_a_missing_or_wrong_setting_is_one_line_naming_the_key() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.mattermost\.url is not set"):
        MattermostAdapter().connect({"token": "t"})
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.mattermost\.token is not"):
        MattermostAdapter().connect({"url": "https://chat.example.com"})
    with pytest.raises(UserFacingError, match=r"url must start with http:// or https://"):
        MattermostAdapter().connect({"url": "chat.example.com", "token": "t"})


def test_a_refused_token_fails_start_with_one_line(mattermost: MattermostStandIn) -> None:
    def refuse(event: PlatformEvent) -> Any:
        raise AssertionError("nothing may be delivered")

    async def start() -> None:
        await MattermostAdapter().start({"url": mattermost.url, "token": "wrong"}, refuse)

    with pytest.raises(UserFacingError) as raised:
        asyncio.run(start())
    assert str(raised.value).startswith("gateway.platforms.mattermost.token was refused")
    assert "HTTP 401" in str(raised.value) and "\n" not in str(raised.value)


class ScriptedGateway:
    """The gateway's side of the contract with the core's :class:`EventDelivery`:
    ``refusals[text]`` times refused as a store that cannot write would, then stored and
    answered ``answer: <text>``."""

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


def run_adapter(server: MattermostStandIn, folder: Path, gateway: ScriptedGateway,
                until: Callable[[MattermostAdapter], None]) -> None:  # fmt: skip
    async def run() -> None:
        adapter = MattermostAdapter()
        settings = {"url": server.url, "token": server.token, STATE_FOLDER: str(folder)}
        await adapter.start(settings, gateway.deliver)
        try:
            await asyncio.to_thread(until, adapter)
        finally:
            await adapter.stop()

    asyncio.run(run())


def test_threads_long_answers_repeats_and_a_lost_websocket(
    mattermost: MattermostStandIn, tmp_path: Path
) -> None:
    alice = mattermost.user("alice")
    town = mattermost.channel("O")
    gateway = ScriptedGateway()

    def scenario(adapter: MattermostAdapter) -> None:
        root = mattermost.user_says(town, alice, "hello town")
        first = mattermost.wait_for_posts(1)[0]
        assert (first["message"], first["channel_id"], first["root_id"]) == (
            "answer: hello town", town, "")  # fmt: skip
        mattermost.user_says(town, alice, "in the thread", root_id=root)
        assert mattermost.wait_for_posts(2)[1]["root_id"] == root
        mattermost.broadcast_again(root)  # the same event twice: delivered once
        long = ("line of text\n" * 2000).strip()
        assert adapter.send(town, long) is not None
        pieces = mattermost.wait_for_posts(4)[2:]
        assert all(len(p["message"]) <= MESSAGE_CHARS for p in pieces)
        assert "".join(p["message"] for p in pieces) == long
        mattermost.drop_sockets()
        mattermost.user_says(town, alice, "while disconnected", live=False)
        mattermost.wait_for_sockets(2)
        assert mattermost.wait_for_posts(5)[4]["message"] == "answer: while disconnected"
        mattermost.user_says(town, alice, "live again")
        assert mattermost.wait_for_posts(6)[5]["message"] == "answer: live again"

    run_adapter(mattermost, tmp_path, gateway, scenario)
    texts = [e.text for e in gateway.delivered]
    assert texts == ["hello town", "in the thread", "while disconnected", "live again"]
    assert gateway.delivered[1].thread_id is not None
    assert (tmp_path / "cursors.json").is_file()


def test_a_post_the_store_refused_is_read_again_even_in_a_new_channel(
    mattermost: MattermostStandIn, tmp_path: Path
) -> None:
    alice = mattermost.user("alice")
    dm = mattermost.channel("D")
    gateway = ScriptedGateway({"refused twice": 2})

    def scenario(adapter: MattermostAdapter) -> None:
        mattermost.user_says(dm, alice, "refused twice")  # the channel's very first post
        assert mattermost.wait_for_posts(1)[0]["message"] == "answer: refused twice"
        mattermost.user_says(dm, alice, "then live")
        assert mattermost.wait_for_posts(2)[1]["message"] == "answer: then live"

    run_adapter(mattermost, tmp_path, gateway, scenario)
    assert [e.text for e in gateway.delivered] == ["refused twice"] * 3 + ["then live"]
    assert f"channel:{dm}" in (tmp_path / "cursors.json").read_text()
