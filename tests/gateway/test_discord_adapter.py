"""The discord adapter through discord.py over real HTTP and a real websocket to the Discord
stand-in: settings checks, a refused token, threads (1440-minute auto-archive), sending and
splitting long answers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hermes_hookspecs import PlatformEvent, UserFacingError
from hermes_platform_discord.adapter import MESSAGE_CHARS, DiscordAdapter, strip_mention
from standins.discord_api import DiscordStandIn


@pytest.fixture
def discord_api() -> Iterator[DiscordStandIn]:
    with DiscordStandIn() as server:
        yield server


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop on its own thread, as the gateway runs adapters."""
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    yield running
    running.call_soon_threadsafe(running.stop)
    thread.join(10)
    running.close()


def settings(server: DiscordStandIn, **extra: Any) -> dict[str, Any]:
    return {"token": server.token, "api_base": server.api_base,
            "gateway_url": server.gateway_url, "ready_timeout_seconds": 20, **extra}  # fmt: skip


def nothing_expected(event: PlatformEvent) -> Any:
    raise AssertionError(f"nothing may be delivered: {event}")


def test_a_missing_token_is_one_line_naming_the_key() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.discord\.token is not set"):
        DiscordAdapter().connect({})
    with pytest.raises(UserFacingError, match="ready_timeout_seconds"):
        DiscordAdapter().connect({"token": "t", "ready_timeout_seconds": 0})


def test_a_refused_token_fails_start_with_one_line(
    discord_api: DiscordStandIn, loop: asyncio.AbstractEventLoop
) -> None:
    adapter = DiscordAdapter()
    start = adapter.start(settings(discord_api, token="wrong"), nothing_expected)
    with pytest.raises(UserFacingError) as raised:
        asyncio.run_coroutine_threadsafe(start, loop).result(60)
    assert str(raised.value) == (
        "gateway.platforms.discord.token was refused by Discord (Unauthorized)"
    )


def test_threads_archive_after_a_day_and_answers_are_split(
    discord_api: DiscordStandIn, loop: asyncio.AbstractEventLoop
) -> None:
    channel = discord_api.text_channel("general")
    alice = discord_api.user("Alice")
    dm = discord_api.dm_channel(alice)
    adapter = DiscordAdapter()
    start = adapter.start(settings(discord_api), nothing_expected)
    asyncio.run_coroutine_threadsafe(start, loop).result(60)
    try:
        assert adapter.address == "discord bot hermes"
        thread_id = adapter.create_thread(channel, "Handoff from the CLI")
        assert thread_id is not None
        thread = discord_api.threads[thread_id]
        assert thread["parent_id"] == channel and thread["name"] == "Handoff from the CLI"
        assert thread["thread_metadata"]["auto_archive_duration"] == 1440
        assert adapter.create_thread(dm, "no threads in DMs") is None
        adapter.send(channel, "x" * 4500, thread_id)
        posted = discord_api.wait_for_posts(3)
        assert [len(p["content"]) for p in posted] == [MESSAGE_CHARS, MESSAGE_CHARS, 500]
        assert {p["channel_id"] for p in posted} == {thread_id}
    finally:
        asyncio.run_coroutine_threadsafe(adapter.stop(), loop).result(60)
    with pytest.raises(UserFacingError, match="not running"):
        adapter.send(channel, "after the stop")


def test_a_leading_mention_of_the_bot_is_removed() -> None:
    assert strip_mention("<@42> /title Plan", 42) == "/title Plan"
    assert strip_mention("<@!42>: hi", 42) == "hi"
    assert strip_mention("<@7> hi", 42) == "<@7> hi"
