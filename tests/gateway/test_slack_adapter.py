"""The slack adapter's own pieces: what Slack events become (pure functions over the documented
event shapes), settings checks, and its Web API calls through slack_sdk over real HTTP to the
Slack stand-in (seed-message threads, sending, splitting)."""

from __future__ import annotations

from typing import Any

import pytest
from hermes_hookspecs import UserFacingError
from hermes_platform_slack.adapter import (
    MESSAGE_CHARS,
    SlackAdapter,
    event_from_command,
    event_from_message,
)
from standins.slack_api import BOT_USER, SlackStandIn


@pytest.fixture
def slack() -> Any:
    with SlackStandIn() as server:
        yield server


def settings(server: SlackStandIn, **extra: Any) -> dict[str, Any]:
    return {
        "bot_token": server.token,
        "signing_secret": server.signing_secret,
        "base_url": server.base_url,
        "port": 0,
        **extra,
    }


def message(**fields: Any) -> dict[str, Any]:
    return {"type": "message", "channel": "C1", "channel_type": "channel", "user": "U1",
            "text": "hi", "ts": "100.000001", **fields}  # fmt: skip


def test_slack_conversations_map_to_the_g1_chat_types() -> None:
    dm = event_from_message(message(channel="D1", channel_type="im"), BOT_USER)
    assert dm is not None and (dm.chat_type, dm.chat_id, dm.user_id) == ("dm", "D1", "U1")
    room = event_from_message(message(), BOT_USER)
    assert room is not None and (room.chat_type, room.thread_id) == ("group", None)
    parent = event_from_message(message(thread_ts="100.000001"), BOT_USER)
    assert parent is not None and parent.chat_type == "group"  # a thread's parent is the room
    reply = event_from_message(message(ts="101.000002", thread_ts="100.000001"), BOT_USER)
    assert reply is not None and (reply.chat_type, reply.thread_id) == ("thread", "100.000001")
    assert reply.message_id == "101.000002"
    mention = event_from_message(message(text=f"<@{BOT_USER}> /title Plan"), BOT_USER)
    assert mention is not None and mention.text == "/title Plan"
    other = event_from_message(message(text="<@U999> look"), BOT_USER)
    assert other is not None and other.text == "<@U999> look"


def test_what_is_not_for_the_agent_is_dropped() -> None:
    assert event_from_message(message(bot_id="B1"), BOT_USER) is None
    assert event_from_message(message(user=BOT_USER), BOT_USER) is None
    assert event_from_message(message(subtype="message_changed"), BOT_USER) is None
    assert event_from_message(message(subtype="channel_join"), BOT_USER) is None
    assert event_from_message(message(text="  "), BOT_USER) is None
    assert event_from_message({"type": "reaction_added", "user": "U1"}, BOT_USER) is None
    shared = event_from_message(
        message(subtype="file_share", text="", files=[{"name": "a.png", "mimetype": "image/png"}]),
        BOT_USER,
    )
    assert shared is not None and shared.attachments[0].description == "file a.png"


def test_slash_commands_become_the_typed_command() -> None:
    event = event_from_command(
        {"command": "/title", "text": "Trip", "channel_id": "D7", "user_id": "U1",
         "channel_name": "directmessage"}
    )  # fmt: skip
    assert event is not None and (event.text, event.chat_type) == ("/title Trip", "dm")
    bare = event_from_command({"command": "/sethome", "channel_id": "C7", "user_id": "U1"})
    assert bare is not None and (bare.text, bare.chat_type) == ("/sethome", "group")
    assert event_from_command({"text": "no command", "channel_id": "C7"}) is None


def test_missing_settings_are_one_line_naming_the_key() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.slack\.bot_token is not set"):
        SlackAdapter().connect({"signing_secret": "s"})
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.slack\.signing_secret is"):
        SlackAdapter().connect({"bot_token": "xoxb-1"})
    with pytest.raises(UserFacingError, match="port"):
        SlackAdapter().connect({"bot_token": "xoxb-1", "signing_secret": "s", "port": "x"})


def test_a_thread_is_anchored_at_a_seed_message(slack: SlackStandIn) -> None:
    channel = slack.channel("channel")
    adapter = SlackAdapter()
    adapter.connect(settings(slack))
    anchor = adapter.create_thread(channel, "Handoff from the CLI")
    assert anchor is not None
    (seed,) = slack.wait_for_posts(1)
    assert seed["ts"] == anchor and seed["text"] == "Handoff from the CLI"
    adapter.send(channel, "inside the thread", anchor)
    posted = slack.wait_for_posts(2)[1]
    assert posted["thread_ts"] == anchor
    assert adapter.create_thread("C404", "nowhere") is None


def test_long_answers_are_split(slack: SlackStandIn) -> None:
    channel = slack.channel("im")
    adapter = SlackAdapter()
    adapter.connect(settings(slack))
    text = "word " * 1700  # 8,500 characters
    adapter.send(channel, text)
    posted = slack.wait_for_posts(3)
    assert all(len(p["text"]) <= MESSAGE_CHARS for p in posted)
    assert "".join(p["text"] for p in posted) == text
