"""The telegram adapter's own calls through python-telegram-bot over real HTTP to the Bot API
stand-in: settings checks, topics (threads), sending, splitting long answers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hermes_hookspecs import PlatformEvent, UserFacingError
from hermes_platform_telegram.adapter import MAX_MESSAGE_CHARS, TelegramAdapter, split_text
from standins.telegram_api import TelegramStandIn

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
    assert split_text("   ") == []


def test_an_uninstalled_platform_of_ours_names_its_distribution() -> None:
    assert unknown_platform("telegram", {"webhook": object()}) == (
        "unknown platform (pip install hermes-platform-telegram)"
    )
    assert unknown_platform("irc", {"webhook": object()}) == (
        "unknown platform (installed adapters: webhook)"
    )
