"""The qqbot adapter in front of the gateway core (real store, stand-in model), QQ's webhook
calls and API played by the QQ Bot stand-in over real HTTP on 127.0.0.1: signatures, the
callback-address check, DMs and groups, the chat commands, an event delivered twice, sending,
and the settings."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from gateway_helpers import model_config, running_gateway, title_reply, user_texts
from hermes_hookspecs import GatewayReply, PlatformEvent, UserFacingError
from hermes_platform_qqbot.adapter import QQBotAdapter
from hostile_text import USER_TEXT
from standins.openai_server import OpenAIStandIn, Reply
from standins.qqbot_api import APP_ID, SECRET, QQBotStandIn, verify

from hermes_core.gateway.delivery import EventDelivery
from hermes_core.store import SessionStore

T = TypeVar("T")


@pytest.fixture
def standin() -> Any:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def qq() -> Any:
    with QQBotStandIn() as server:
        yield server


def settings(qq: QQBotStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "app_id": APP_ID,
        "secret": SECRET,
        "port": 0,
        "api_base": qq.url,
        "token_url": qq.token_url,
        **extra,
    }


def with_adapter(
    home: Path, standin: OpenAIStandIn, qq: QQBotStandIn, act: Callable[[QQBotAdapter], T]
) -> T:
    """Run the adapter on the gateway core; ``act(adapter)`` from another thread."""

    async def run() -> T:
        async with running_gateway(home, model_config(standin), clock=time.time) as gateway:
            adapter = QQBotAdapter()
            await adapter.start(settings(qq), gateway.deliver)
            assert adapter.address is not None
            qq.callback_url = adapter.address
            try:
                return await asyncio.to_thread(act, adapter)
            finally:
                await adapter.stop()

    return asyncio.run(run())


def test_a_missing_app_id_or_secret_is_one_line_naming_the_key(qq: QQBotStandIn) -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.qqbot\.app_id is not set"):
        QQBotAdapter().connect({"secret": SECRET})
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.qqbot\.secret is not set"):
        QQBotAdapter().connect({"app_id": APP_ID})

    async def start() -> None:
        def refuse(event: PlatformEvent) -> Any:
            raise AssertionError("nothing may be delivered")

        await QQBotAdapter().start(settings(qq, secret="wrong"), refuse)

    with pytest.raises(UserFacingError, match=r"^QQ refused the app credentials: invalid appid"):
        asyncio.run(start())


def test_dms_and_groups_are_sessions_and_the_commands_work(
    tmp_path: Path, standin: OpenAIStandIn, qq: QQBotStandIn
) -> None:
    standin.add(Reply(text="Hi from Hermes.", times=None))

    def act(adapter: QQBotAdapter) -> None:
        assert qq.user_says("USER_A", "hello")[1] == 200
        qq.wait_for_sent(1)
        assert qq.user_says("USER_A", USER_TEXT)[1] == 200
        qq.wait_for_sent(2)
        assert qq.group_says("GROUP_1", "MEMBER_B", "hi all")[1] == 200
        qq.wait_for_sent(3)
        assert qq.user_says("USER_A", "/title Greenhouse")[1] == 200
        qq.wait_for_sent(4)
        assert qq.user_says("USER_A", "/new")[1] == 200
        qq.wait_for_sent(5)
        assert qq.user_says("USER_A", "fresh start")[1] == 200
        qq.wait_for_sent(6)

    home = tmp_path / "home"
    with_adapter(home, standin, qq, act)
    first = qq.sent[0]
    assert first["to"] == ("user", "USER_A") and first["content"] == "Hi from Hermes."
    assert first["msg_id"] == "ROBOT1.0_msg1" and first["msg_seq"] == 1
    assert qq.sent[2]["to"] == ("group", "GROUP_1")
    with SessionStore.open(home) as store:
        sessions = [
            (s.session_key, s.title, user_texts(store.messages(s.id)))
            for s in store.select_sessions()
        ]
    assert ("agent:main:qqbot:dm:USER_A", "Greenhouse", ["hello", USER_TEXT]) in sessions
    keys_texts = [(key, texts) for key, _, texts in sessions]
    assert ("agent:main:qqbot:group:GROUP_1:MEMBER_B", ["hi all"]) in keys_texts
    # /new: the DM goes on in a new session.
    assert ("agent:main:qqbot:dm:USER_A", ["fresh start"]) in keys_texts


def test_an_event_delivered_twice_is_taken_once_and_bad_callbacks_are_refused(
    tmp_path: Path, standin: OpenAIStandIn, qq: QQBotStandIn
) -> None:
    standin.add(Reply(text="Once.", times=None))

    def act(adapter: QQBotAdapter) -> dict[str, Any]:
        event_id, status = qq.user_says("USER_C", "only once")
        qq.wait_for_sent(1)
        answer = qq.validate("plain-123", "1733384468")
        return {
            "first": status,
            "again": qq.deliver_again(event_id),
            "forged": qq.post(qq.events[event_id], signed_with="another-secret-entirely")[0],
            "check": answer,
        }

    home = tmp_path / "home"
    results = with_adapter(home, standin, qq, act)
    assert results["first"] == results["again"] == 200 and results["forged"] == 401
    assert results["check"]["plain_token"] == "plain-123"
    assert verify(results["check"], "1733384468")
    assert [m["content"] for m in qq.sent] == ["Once."]
    with SessionStore.open(home) as store:
        (session,) = store.select_sessions()
        assert user_texts(store.messages(session.id)) == ["only once"]


def test_send_posts_an_active_message_and_long_answers_go_in_pieces(
    tmp_path: Path, standin: OpenAIStandIn, qq: QQBotStandIn
) -> None:
    long = ("a line of the answer\n" * 150).strip()  # 3,149 characters: two messages
    standin.add(Reply(text=long, times=None))

    def act(adapter: QQBotAdapter) -> None:
        qq.group_says("GROUP_9", "MEMBER_D", "tell me everything")
        qq.wait_for_sent(2)
        adapter.send("GROUP_9", "unasked")
        adapter.send("USER_E", "hello there")

    with_adapter(tmp_path / "home", standin, qq, act)
    first, second, active, direct = qq.sent
    assert (first["msg_seq"], second["msg_seq"]) == (1, 2) and first["msg_id"] == second["msg_id"]
    assert first["content"] + second["content"] == long
    assert active["to"] == ("group", "GROUP_9") and "msg_id" not in active
    assert direct["to"] == ("user", "USER_E") and direct["content"] == "hello there"


class HeldGateway:
    """Delivers into the core's own :class:`EventDelivery` objects and holds them, so the test
    decides when (and whether) each event is stored, as a slow or failing store would."""

    def __init__(self) -> None:
        self.held: list[tuple[PlatformEvent, EventDelivery]] = []

    def deliver(self, event: PlatformEvent) -> EventDelivery:
        delivery = EventDelivery(asyncio.get_running_loop())
        self.held.append((event, delivery))
        return delivery

    async def wait_for(self, count: int) -> EventDelivery:
        while len(self.held) < count:
            await asyncio.sleep(0.01)
        return self.held[count - 1][1]


def test_an_event_is_acknowledged_only_once_stored_and_a_copy_in_flight_is_not(
    qq: QQBotStandIn,
) -> None:
    gateway = HeldGateway()

    async def run() -> list[int]:
        adapter = QQBotAdapter()
        await adapter.start(settings(qq), gateway.deliver)
        assert adapter.address is not None
        qq.callback_url = adapter.address
        try:
            first = asyncio.ensure_future(asyncio.to_thread(qq.user_says, "USER_F", "hello"))
            delivery = await gateway.wait_for(1)
            (event_id,) = qq.events
            in_flight = await asyncio.to_thread(qq.deliver_again, event_id)
            delivery._refuse("the store refused the write: disk full")
            refused = (await first)[1]
            again = asyncio.ensure_future(asyncio.to_thread(qq.deliver_again, event_id))
            (await gateway.wait_for(2)).finish(GatewayReply(text="Now stored.", session_id="s1"))
            stored = await again
            once_more = await asyncio.to_thread(qq.deliver_again, event_id)
            await asyncio.to_thread(qq.wait_for_sent, 1)
            return [in_flight, refused, stored, once_more]
        finally:
            await adapter.stop()

    assert asyncio.run(run()) == [503, 503, 200, 200]
    assert len(gateway.held) == 2
    assert [m["content"] for m in qq.sent] == ["Now stored."]
