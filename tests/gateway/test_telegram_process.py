"""End to end: the installed ``hermes gateway run`` with the telegram plugin, python-telegram-bot
pointed (``base_url``) at the Bot API stand-in over real HTTP, the stand-in model: a DM, a
group with two users, a forum topic, the chat commands from Telegram; and the plugin installed
alone beside the core (SPEC O2, G1)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fresh_venv import fresh_venv_with, listed_distributions, run_hermes
from gateway_helpers import title_reply, user_texts
from gateway_process import GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply
from standins.telegram_api import TelegramStandIn

from hermes_core.store import SessionStore
from hermes_core.store.routed_sessions import RoutingStore

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Any:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def telegram() -> Any:
    with TelegramStandIn() as server:
        yield server


def platform(server: TelegramStandIn) -> dict[str, Any]:
    return {
        "telegram": {
            "token": server.token,
            "base_url": server.base_url,
            "base_file_url": server.base_file_url,
            "poll_timeout_seconds": 2,
        }
    }


def say(server: TelegramStandIn, chat: dict[str, Any], user: dict[str, Any], text: str,
        thread_id: int | None = None) -> dict[str, Any]:  # fmt: skip
    """``user`` writes ``text``; the bot's answer (the next message it sends)."""
    count = len(server.sent)
    server.user_says(chat, user, text, thread_id=thread_id)
    return server.wait_for_sent(count + 1)[count]


def sessions_by_key(home: Path) -> dict[str, list[str]]:
    with SessionStore.open(home) as store:
        return {
            str(s.session_key): user_texts(store.messages(s.id))
            for s in store.select_sessions()
            if s.source == "telegram"
        }


def test_a_dm_is_one_continuous_session_with_the_chat_commands(
    tmp_path: Path, standin: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    standin.add(Reply(text="Hello Alice!"), Reply(text="Still here."), Reply(text="Fresh."))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(telegram))
    alice = telegram.user("Alice")
    dm = telegram.private_chat(alice)
    with GatewayProcess(home) as gateway:
        assert gateway.addresses["telegram"] == "https://t.me/hermes_standin_bot"
        first = say(telegram, dm, alice, "hi there")
        assert first["text"] == "Hello Alice!" and first["chat"]["id"] == alice["id"]
        assert say(telegram, dm, alice, "are you there?")["text"] == "Still here."
        assert say(telegram, dm, alice, "/title Trip planning")["text"] == (
            "✓ Title set: Trip planning"
        )
        assert say(telegram, dm, alice, "/title@hermes_standin_bot")["text"] == (
            "Title: Trip planning"
        )
        assert say(telegram, dm, alice, "/sethome")["text"] == (
            "✓ This chat is now the home channel of telegram."
        )
        assert say(telegram, dm, alice, "/new")["text"].startswith("✓")
        assert say(telegram, dm, alice, "new topic")["text"] == "Fresh."
        assert gateway.terminate() == 0
    assert "Traceback" not in gateway.log_text()
    # Every update was confirmed to Telegram once stored: none would come again.
    assert telegram.pending_updates() == 0
    key = f"agent:main:telegram:dm:{alice['id']}"
    with SessionStore.open(home) as store:
        sessions = sorted(
            (s for s in store.select_sessions() if s.session_key == key),
            key=lambda s: s.started_at,
        )
        assert [s.source for s in sessions] == ["telegram", "telegram"]
        old, new = sessions
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        assert user_texts(store.messages(old.id))[:2] == ["hi there", "are you there?"]
        assert user_texts(store.messages(new.id)) == ["new topic"]
        assert old.chat_id == str(alice["id"]) and old.chat_type == "dm"
        assert RoutingStore(store).home("telegram") == (str(alice["id"]), None)


def test_a_group_keeps_users_apart_and_a_forum_topic_is_shared(
    tmp_path: Path, standin: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(telegram))
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    group = telegram.supergroup(-100777, "Team", forum=True)
    topic = telegram.topic(group, "Release")
    with GatewayProcess(home) as gateway:
        assert say(telegram, group, alice, "alice: my secret is 42")["chat"]["id"] == -100777
        say(telegram, group, bob, "bob: my secret is 7")
        say(telegram, group, alice, "alice again")
        answer = say(telegram, group, bob, "bob again")
        assert "message_thread_id" not in answer
        in_topic = say(telegram, group, alice, "topic: ship friday?", thread_id=topic)
        assert in_topic["message_thread_id"] == topic
        say(telegram, group, bob, "topic: yes", thread_id=topic)
        assert say(telegram, group, bob, "/title", thread_id=topic)["text"].startswith(
            ("Title:", "This session has no title.")
        )
        assert say(telegram, group, bob, "/title Release plan", thread_id=topic)["text"] == (
            "✓ Title set: Release plan"
        )
        assert gateway.terminate() == 0
    assert sessions_by_key(home) == {
        f"agent:main:telegram:group:-100777:{alice['id']}": [
            "alice: my secret is 42",
            "alice again",
        ],
        f"agent:main:telegram:group:-100777:{bob['id']}": ["bob: my secret is 7", "bob again"],
        f"agent:main:telegram:group:-100777:{topic}": ["topic: ship friday?", "topic: yes"],
    }
    # Isolated histories: what the model saw for Bob never held Alice's words.
    bob_turn = next(
        body for body in standin.requests
        if "bob again" in str(body["messages"][-1].get("content"))
    )  # fmt: skip
    assert "secret is 42" not in str(bob_turn["messages"])
    with SessionStore.open(home) as store:
        (shared,) = [s for s in store.select_sessions() if s.thread_id == str(topic)]
        assert shared.title == "Release plan"


def test_a_missing_token_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"telegram": {"poll_timeout_seconds": 2}})
    gateway = GatewayProcess(home)
    with pytest.raises(AssertionError, match="exited early"):
        gateway.start()
    assert gateway.process is not None and gateway.process.wait(30) == 1
    lines = [line for line in gateway.log_text().splitlines() if "telegram" in line]
    assert len(lines) == 1 and "gateway.platforms.telegram.token is not set" in lines[0]


def test_the_telegram_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    bin_folder = fresh_venv_with(tmp_path, "hermes-platform-telegram")
    home = tmp_path / "home"
    home.mkdir()
    assert listed_distributions(bin_folder, home) == {"hermes-platform-telegram"}
    listed = run_hermes(bin_folder, home, "plugins")
    assert listed.returncode == 0 and "platform:telegram" in listed.stdout


def test_a_message_telegram_sends_again_is_not_answered_again(
    tmp_path: Path, standin: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    standin.add(
        Reply(text="First answer.", match="hello"), Reply(text="Next answer.", match="next")
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(telegram))
    alice = telegram.user("Alice")
    dm = telegram.private_chat(alice)
    with GatewayProcess(home) as gateway:
        assert say(telegram, dm, alice, "hello")["text"] == "First answer."
        assert gateway.terminate() == 0
    # As after a crash before Telegram heard the confirmation: the same update again.
    (hello,) = [u["update_id"] for u in telegram.seen_updates if u["message"]["text"] == "hello"]
    telegram.send_again(hello)
    with GatewayProcess(home) as gateway:
        assert say(telegram, dm, alice, "next")["text"] == "Next answer."
        assert gateway.terminate() == 0
    assert [m["text"] for m in telegram.sent] == ["First answer.", "Next answer."]
    assert telegram.pending_updates() == 0
    assert sessions_by_key(home) == {f"agent:main:telegram:dm:{alice['id']}": ["hello", "next"]}


def test_a_message_sent_while_the_gateway_was_down_is_answered_once_after_it_starts(
    tmp_path: Path, standin: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    standin.add(
        Reply(text="Before.", match="before the stop"),
        Reply(text="Caught up.", match="while it was down"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(telegram))
    alice = telegram.user("Alice")
    dm = telegram.private_chat(alice)
    with GatewayProcess(home) as gateway:
        assert say(telegram, dm, alice, "before the stop")["text"] == "Before."
        assert gateway.terminate() == 0
    telegram.user_says(dm, alice, "while it was down")  # Telegram holds it for the bot
    with GatewayProcess(home) as gateway:
        assert telegram.wait_for_sent(2)[1]["text"] == "Caught up."
        assert gateway.terminate() == 0
    with GatewayProcess(home) as gateway:  # confirmed: nothing comes again
        time.sleep(3)
        assert gateway.terminate() == 0
    assert [m["text"] for m in telegram.sent] == ["Before.", "Caught up."]
    assert telegram.pending_updates() == 0


def test_catch_up_max_age_stores_a_very_old_message_without_answering_it(
    tmp_path: Path, standin: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    standin.add(Reply(text="Live.", match="a fresh one"))
    home = tmp_path / "home"
    settings = platform(telegram)
    settings["telegram"]["catch_up_max_age"] = 2
    write_config(home, standin.base_url, settings)
    alice = telegram.user("Alice")
    dm = telegram.private_chat(alice)
    telegram.user_says(dm, alice, "written long before")
    time.sleep(3.5)  # older than catch_up_max_age when the gateway reads it
    with GatewayProcess(home) as gateway:
        assert say(telegram, dm, alice, "a fresh one")["text"] == "Live."
        assert gateway.terminate() == 0
    assert [m["text"] for m in telegram.sent] == ["Live."]
    assert telegram.pending_updates() == 0
    assert sessions_by_key(home) == {
        f"agent:main:telegram:dm:{alice['id']}": ["written long before", "a fresh one"]
    }
    # Never a turn of its own: the model saw it only as history of the fresh message's turn.
    assert all(b["messages"][-1].get("content") != "written long before" for b in standin.requests)
