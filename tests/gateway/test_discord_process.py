"""End to end: the installed ``hermes gateway run`` with the discord plugin, discord.py pointed
(``api_base``, ``gateway_url``) at the Discord stand-in's HTTP API and Gateway websocket over
real connections, the stand-in model: a DM, a channel with two users, a thread, the chat
commands from Discord; and the plugin installed alone beside the core (SPEC O2, G1)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fresh_venv import fresh_venv_with, listed_distributions, run_hermes
from gateway_helpers import title_reply, user_texts
from gateway_process import GatewayProcess, write_config
from standins.discord_api import BOT_ID, DiscordStandIn
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore
from hermes_core.store.routed_sessions import RoutingStore

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def discord_api() -> Iterator[DiscordStandIn]:
    with DiscordStandIn() as server:
        yield server


def platform(server: DiscordStandIn, **extra: Any) -> dict[str, Any]:
    return {"discord": {"token": server.token, "api_base": server.api_base,
                        "gateway_url": server.gateway_url, **extra}}  # fmt: skip


def say(server: DiscordStandIn, channel: str, user: dict[str, Any], text: str) -> dict[str, Any]:
    """``user`` writes ``text``; the bot's answer (the next message it posts)."""
    count = len(server.posted)
    server.user_says(channel, user, text)
    return server.wait_for_posts(count + 1)[count]


def test_a_dm_is_one_continuous_session_with_the_chat_commands(
    tmp_path: Path, standin: OpenAIStandIn, discord_api: DiscordStandIn
) -> None:
    standin.add(Reply(text="Hello Alice!"), Reply(text="Still here."), Reply(text="Fresh."))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(discord_api))
    alice = discord_api.user("Alice")
    dm = discord_api.dm_channel(alice)
    with GatewayProcess(home) as gateway:
        assert gateway.addresses["discord"] == "discord bot hermes"
        first = say(discord_api, dm, alice, "hi there")
        assert first["content"] == "Hello Alice!" and first["channel_id"] == dm
        assert say(discord_api, dm, alice, "are you there?")["content"] == "Still here."
        titled = say(discord_api, dm, alice, "/title Trip planning")
        assert titled["content"] == "✓ Title set: Trip planning"
        assert say(discord_api, dm, alice, "/title")["content"] == "Title: Trip planning"
        assert say(discord_api, dm, alice, "/sethome")["content"] == (
            "✓ This chat is now the home channel of discord."
        )
        assert say(discord_api, dm, alice, f"<@{BOT_ID}> /new")["content"].startswith("✓")
        assert say(discord_api, dm, alice, "new topic")["content"] == "Fresh."
        assert gateway.terminate() == 0
    log = gateway.log_text()
    assert "Traceback" not in log and "voice" not in log
    key = f"agent:main:discord:dm:{dm}"
    with SessionStore.open(home) as store:
        old, new = sorted(
            (s for s in store.select_sessions() if s.session_key == key),
            key=lambda s: s.started_at,
        )
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        texts = user_texts(store.messages(old.id))
        assert texts[:2] == ["hi there", "are you there?"]
        # The bot's own messages came back over the Gateway and were never stored.
        assert not any("Hello Alice" in text for text in texts)
        assert user_texts(store.messages(new.id)) == ["new topic"]
        assert RoutingStore(store).home("discord") == (dm, None)


def test_a_channel_keeps_users_apart_and_a_thread_is_shared(
    tmp_path: Path, standin: OpenAIStandIn, discord_api: DiscordStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(discord_api))
    channel = discord_api.text_channel("general")
    alice, bob = discord_api.user("Alice"), discord_api.user("Bob")
    with GatewayProcess(home) as gateway:
        assert say(discord_api, channel, alice, "alice: my secret is 42")["channel_id"] == channel
        say(discord_api, channel, bob, "bob: my secret is 7")
        say(discord_api, channel, alice, "alice again")
        say(discord_api, channel, bob, "bob again")
        thread = discord_api.open_thread(channel, "Release", by=alice)
        assert say(discord_api, thread, alice, "thread: ship?")["channel_id"] == thread
        say(discord_api, thread, bob, "thread: yes")
        titled = say(discord_api, thread, bob, "/title Release plan")
        assert titled["content"] == "✓ Title set: Release plan"
        assert gateway.terminate() == 0
    with SessionStore.open(home) as store:
        found = {
            str(s.session_key): user_texts(store.messages(s.id))
            for s in store.select_sessions()
            if s.source == "discord"
        }
        (shared,) = [s for s in store.select_sessions() if s.thread_id == thread]
        assert shared.title == "Release plan"
    assert found == {
        f"agent:main:discord:group:{channel}:{alice['id']}": [
            "alice: my secret is 42",
            "alice again",
        ],
        f"agent:main:discord:group:{channel}:{bob['id']}": ["bob: my secret is 7", "bob again"],
        f"agent:main:discord:group:{channel}:{thread}": ["thread: ship?", "thread: yes"],
    }
    bob_turn = next(
        body for body in standin.requests
        if "bob again" in str(body["messages"][-1].get("content"))
    )  # fmt: skip
    assert "secret is 42" not in str(bob_turn["messages"])


def test_a_refused_token_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn, discord_api: DiscordStandIn
) -> None:
    home = tmp_path / "home"
    settings = platform(discord_api)
    settings["discord"]["token"] = "wrong"
    write_config(home, standin.base_url, settings)
    gateway = GatewayProcess(home)
    with pytest.raises(AssertionError, match="exited early"):
        gateway.start()
    assert gateway.process is not None and gateway.process.wait(30) == 1
    lines = [line for line in gateway.log_text().splitlines() if "discord" in line]
    assert len(lines) == 1
    assert "gateway.platforms.discord.token was refused by Discord (Unauthorized)" in lines[0]


def test_the_discord_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    bin_folder = fresh_venv_with(tmp_path, "hermes-platform-discord")
    home = tmp_path / "home"
    home.mkdir()
    assert listed_distributions(bin_folder, home) == {"hermes-platform-discord"}
    listed = run_hermes(bin_folder, home, "plugins")
    assert listed.returncode == 0 and "platform:discord" in listed.stdout


def test_messages_written_while_the_gateway_was_down_are_answered_once_after_it_starts(
    tmp_path: Path, standin: OpenAIStandIn, discord_api: DiscordStandIn
) -> None:
    standin.add(
        Reply(text="Before.", match="before the stop", times=2),
        Reply(text="Caught up in the DM.", match="dm while down"),
        Reply(text="Caught up in the channel.", match="channel while down"),
        Reply(text="Live again.", match="after the start"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(discord_api))
    alice = discord_api.user("Alice")
    dm = discord_api.dm_channel(alice)
    general = discord_api.text_channel("general")
    with GatewayProcess(home) as gateway:
        assert say(discord_api, dm, alice, "before the stop")["content"] == "Before."
        assert say(discord_api, general, alice, "before the stop, in general")["content"] == (
            "Before."
        )
        assert gateway.terminate() == 0
    discord_api.user_says(dm, alice, "dm while down")
    discord_api.user_says(general, alice, "channel while down")
    with GatewayProcess(home) as gateway:
        caught = discord_api.wait_for_posts(4)[2:]
        assert sorted(p["content"] for p in caught) == [
            "Caught up in the DM.",
            "Caught up in the channel.",
        ]
        assert say(discord_api, dm, alice, "after the start")["content"] == "Live again."
        assert gateway.terminate() == 0
    with GatewayProcess(home) as gateway:  # nothing left to catch up: nothing answered twice
        time.sleep(3)
        assert gateway.terminate() == 0
    assert len(discord_api.posted) == 5
    with SessionStore.open(home) as store:
        texts = {
            str(s.session_key): user_texts(store.messages(s.id))
            for s in store.select_sessions()
            if s.source == "discord"
        }
    assert texts[f"agent:main:discord:dm:{dm}"] == [
        "before the stop",
        "dm while down",
        "after the start",
    ]
    assert texts[f"agent:main:discord:group:{general}:{alice['id']}"] == [
        "before the stop, in general",
        "channel while down",
    ]
