"""The telegram adapter's own calls through python-telegram-bot over real HTTP to the Bot API
stand-in: settings checks, topics (threads), sending, splitting long answers, flood control,
and how polling goes on when the gateway refuses an event (not stored) and stops when it is
stopping."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from hermes_hookspecs import GatewayReply, PlatformEvent, UserFacingError
from hermes_hookspecs.adapter_kit import split_text
from hermes_platform_telegram.adapter import MAX_MESSAGE_CHARS, TelegramAdapter
from standins.telegram_api import TelegramStandIn

from hermes_core.gateway.delivery import EventDelivery
from hermes_core.gateway.runner import unknown_platform


@pytest.fixture
def telegram() -> Any:
    with TelegramStandIn() as server:
        yield server


def settings(server: TelegramStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "token": server.token,
        "base_url": server.base_url,
        "base_file_url": server.base_file_url,
        **extra,
    }


def test_a_missing_token_is_one_line_naming_the_key() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.telegram\.token is not set"):
        TelegramAdapter().connect({})
    with pytest.raises(UserFacingError, match="poll_timeout_seconds"):
        TelegramAdapter().connect({"token": "x", "poll_timeout_seconds": "soon"})


def test_a_refused_token_fails_start_with_one_line(telegram: TelegramStandIn) -> None:
    async def start() -> None:
        def refuse(event: PlatformEvent) -> Any:
            raise AssertionError("nothing may be delivered")

        await TelegramAdapter().start(settings(telegram, token="1:wrong"), refuse)

    with pytest.raises(UserFacingError) as raised:
        asyncio.run(start())
    assert "Unauthorized" in str(raised.value) and "\n" not in str(raised.value)


def test_topics_are_created_in_forums_and_refused_elsewhere(telegram: TelegramStandIn) -> None:
    forum = telegram.supergroup(-1001, "Team", forum=True)
    plain = telegram.supergroup(-1002, "No topics")
    adapter = TelegramAdapter()
    adapter.connect(settings(telegram))
    thread_id = adapter.create_thread(str(forum["id"]), "Handoff from the CLI")
    assert thread_id is not None
    assert telegram.topics(-1001) == {int(thread_id): "Handoff from the CLI"}
    assert adapter.create_thread(str(plain["id"]), "Nope") is None
    sent_id = adapter.send(str(forum["id"]), "in the topic", thread_id)
    (message,) = telegram.wait_for_sent(1)
    assert str(message["message_id"]) == sent_id
    assert message["message_thread_id"] == int(thread_id) and message["text"] == "in the topic"


def test_long_answers_go_in_pieces_telegram_accepts(telegram: TelegramStandIn) -> None:
    alice = telegram.user("Alice")
    chat = telegram.private_chat(alice)
    adapter = TelegramAdapter()
    adapter.connect(settings(telegram))
    text = ("line of text\n" * 700).strip()  # 9,099 characters: three messages
    adapter.send(str(chat["id"]), text)
    sent = telegram.wait_for_sent(3)
    assert len(sent) == 3 and all(len(m["text"]) <= MAX_MESSAGE_CHARS for m in sent)
    assert "".join(m["text"] for m in sent) == text
    assert split_text("   ", MAX_MESSAGE_CHARS) == []


def test_an_uninstalled_platform_of_ours_names_its_distribution() -> None:
    assert unknown_platform("telegram", {"webhook": object()}) == (
        "unknown platform (pip install hermes-platform-telegram)"
    )
    assert unknown_platform("irc", {"webhook": object()}) == (
        "unknown platform (installed adapters: webhook)"
    )


def test_a_flooded_reply_piece_is_sent_again_after_retry_after(telegram: TelegramStandIn) -> None:
    alice = telegram.user("Alice")
    chat = telegram.private_chat(alice)
    adapter = TelegramAdapter()
    adapter.connect(settings(telegram))
    telegram.flood("sendMessage", 1, retry_after=1)
    text = ("line of text\n" * 400).strip()  # two pieces; the first one is flooded once
    adapter.send(str(chat["id"]), text)
    sent = telegram.wait_for_sent(2)
    assert "".join(m["text"] for m in sent) == text
    (refused, _), (accepted, _), _second = telegram.calls_of("sendMessage")
    assert accepted - refused >= 1.0  # waited as Telegram asked


class ScriptedGateway:
    """The gateway's side of the adapter contract, answering from a script: each delivered
    event's :class:`EventDelivery` (the core's own) is refused ``refusals[text]`` times as a
    store that cannot write would, then stored and answered with ``answer: <text>``."""

    def __init__(self, refusals: dict[str, int], *, stopping_after: str | None = None) -> None:
        self.refusals = refusals
        self.stopping_after = stopping_after
        self.delivered: list[str] = []
        self.stopping = False

    def deliver(self, event: PlatformEvent) -> EventDelivery:
        delivery = EventDelivery(asyncio.get_running_loop())
        self.delivered.append(event.text)
        if self.stopping:
            delivery.refuse("the gateway is stopping")
        elif self.refusals.get(event.text, 0) > 0:
            self.refusals[event.text] -= 1
            delivery._refuse("the store refused the write: disk full")
        else:
            delivery.finish(GatewayReply(text=f"answer: {event.text}", session_id="s1"))
            if event.text == self.stopping_after:
                self.stopping = True
        return delivery


def run_adapter(
    telegram: TelegramStandIn,
    gateway: ScriptedGateway,
    until: Any,
    adapter: TelegramAdapter | None = None,
) -> None:
    async def run() -> None:
        nonlocal adapter
        adapter = adapter or TelegramAdapter()
        await adapter.start(settings(telegram, poll_timeout_seconds=1), gateway.deliver)
        try:
            await asyncio.to_thread(until)
        finally:
            await adapter.stop()

    asyncio.run(run())


def test_a_message_not_stored_is_tried_again_and_polling_goes_on(
    telegram: TelegramStandIn,
) -> None:
    alice = telegram.user("Alice")
    chat = telegram.private_chat(alice)
    gateway = ScriptedGateway({"first": 1})
    telegram.user_says(chat, alice, "first")
    telegram.user_says(chat, alice, "second")

    def both_answered() -> None:
        sent = telegram.wait_for_sent(2, timeout=30)
        assert sorted(m["text"] for m in sent) == ["answer: first", "answer: second"]
        telegram.user_says(chat, alice, "third")
        assert telegram.wait_for_sent(3, timeout=30)[-1]["text"] == "answer: third"

    run_adapter(telegram, gateway, both_answered)
    assert gateway.delivered.count("first") == 2 and gateway.delivered.count("second") == 1
    assert telegram.pending_updates() == 0


def test_a_message_that_keeps_failing_is_skipped_with_one_line(
    telegram: TelegramStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    alice = telegram.user("Alice")
    chat = telegram.private_chat(alice)
    gateway = ScriptedGateway({"poison": 99})
    poison = telegram.user_says(chat, alice, "poison")
    telegram.user_says(chat, alice, "after it")

    def answered() -> None:
        assert telegram.wait_for_sent(1, timeout=60)[0]["text"] == "answer: after it"
        deadline = time.monotonic() + 60
        while telegram.pending_updates() and time.monotonic() < deadline:
            time.sleep(0.1)

    with caplog.at_level(logging.WARNING, logger="hermes.gateway.telegram"):
        run_adapter(telegram, gateway, answered)
    assert gateway.delivered.count("poison") == 3
    skipped = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert skipped == [
        f"telegram: update {poison} skipped: it could not be stored three times "
        "(the store refused the write: disk full)"
    ]
    assert telegram.pending_updates() == 0 and len(telegram.sent) == 1


def test_the_gateway_stopping_stops_polling(telegram: TelegramStandIn) -> None:
    alice = telegram.user("Alice")
    chat = telegram.private_chat(alice)
    gateway = ScriptedGateway({}, stopping_after="last one")
    adapter = TelegramAdapter()
    telegram.user_says(chat, alice, "last one")

    def polling_ended() -> bool:
        poller = adapter._poller  # the adapter's poll loop (a task on the adapter's loop)
        return poller is not None and poller.done()

    def refused_later() -> None:
        telegram.wait_for_sent(1, timeout=30)
        telegram.user_says(chat, alice, "too late")
        # The poll loop ends by itself once the refusal reaches the adapter; a poll it had
        # started before that (in the same turn of the loop as the delivery) may still come
        # back first. Counted only then: from there on nothing may poll again.
        deadline = time.monotonic() + 30
        while not polling_ended():
            assert time.monotonic() < deadline, "the adapter kept polling"
            time.sleep(0.05)
        assert "too late" in gateway.delivered
        polls = len(telegram.calls_of("getUpdates"))
        time.sleep(2.5)  # two poll time-outs: a poller still running would have asked again
        assert len(telegram.calls_of("getUpdates")) == polls

    run_adapter(telegram, gateway, refused_later, adapter)
    assert gateway.delivered == ["last one", "too late"]
    assert telegram.pending_updates() == 1  # "too late" was not confirmed: it comes again
