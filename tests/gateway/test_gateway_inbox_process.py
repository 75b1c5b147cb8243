"""End to end, the gateway inbox: the installed ``hermes gateway run`` with the telegram plugin
against the Bot API stand-in and the model stand-in, over real HTTP.

A message is acknowledged to its platform once it is recorded in the gateway inbox, before
its chat's turn: one chat waiting on a slow model holds back no other chat's confirmation (the
Bot API confirms updates in order, by offset), and a message acknowledged when the gateway is
killed, before its turn, is answered once after the restart.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from gateway_helpers import TITLE_MATCH, title_reply, user_texts
from gateway_process import API_KEY, GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply
from standins.telegram_api import TelegramStandIn

from hermes_core.store import SessionStore

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


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        time.sleep(0.05)


def asked_in(body: dict[str, Any], text: str) -> bool:
    """Whether this model request asks to answer ``text`` (not a title request)."""
    turns = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return bool(turns) and text in str(turns[-1].get("content")) and TITLE_MATCH not in str(body)


def asked_about(standin: OpenAIStandIn, text: str) -> bool:
    return any(asked_in(body, text) for body in standin.requests)


def stored_user_texts(home: Path) -> dict[str, list[str]]:
    with SessionStore.open(home) as store:
        found: dict[str, list[str]] = {}
        for session in store.select_sessions():
            found.setdefault(str(session.session_key), []).extend(
                user_texts(store.messages(session.id))
            )
        return found


def test_a_chat_waiting_on_its_model_holds_back_no_other_chats_acknowledgement(
    tmp_path: Path, standin: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    release = threading.Event()
    standin.add(
        Reply(text="Slow answer.", match="alice one", hold=release, hold_after_chunks=0),
        Reply(text="Alice, again.", match="alice two"),
        Reply(text="Hello Bob!", match="bob here"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(telegram))
    alice, bob = telegram.user("Alice"), telegram.user("Bob")
    alice_dm, bob_dm = telegram.private_chat(alice), telegram.private_chat(bob)
    with GatewayProcess(home) as gateway:
        try:
            telegram.user_says(alice_dm, alice, "alice one")
            wait_until(lambda: asked_about(standin, "alice one"), "alice's turn reached the model")
            # Queued behind alice's first turn, whose model does not answer.
            telegram.user_says(alice_dm, alice, "alice two")
            telegram.user_says(bob_dm, bob, "bob here")
            (answer,) = telegram.wait_for_sent(1)
            assert answer["text"] == "Hello Bob!" and answer["chat"]["id"] == bob["id"]
            # Every update is confirmed to Telegram while alice's model still holds: none
            # would come again, and polling goes on.
            wait_until(lambda: telegram.pending_updates() == 0, "every update confirmed", 15)
            assert not release.is_set() and len(telegram.sent) == 1
        finally:
            release.set()
        telegram.wait_for_sent(3)
        assert gateway.terminate() == 0
    assert "Traceback" not in gateway.log_text()
    assert [m["text"] for m in telegram.sent] == ["Hello Bob!", "Slow answer.", "Alice, again."]
    assert stored_user_texts(home) == {
        f"agent:main:telegram:dm:{alice['id']}": ["alice one", "alice two"],
        f"agent:main:telegram:dm:{bob['id']}": ["bob here"],
    }
    with SessionStore.open(home) as store:
        assert store.routing.inbox_pending() == []


def test_a_message_acknowledged_before_a_kill_9_is_answered_once_after_the_restart(
    tmp_path: Path, standin: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    release = threading.Event()
    standin.add(
        Reply(text="never finished", match="first words", hold=release, hold_after_chunks=0),
        Reply(text="Answer to the second.", match="second words"),
        Reply(text="Answer to the third.", match="third words"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(telegram))
    alice = telegram.user("Alice")
    dm = telegram.private_chat(alice)
    try:
        with GatewayProcess(home) as gateway:
            telegram.user_says(dm, alice, "first words")
            wait_until(lambda: asked_about(standin, "first words"), "the first turn is held")
            telegram.user_says(dm, alice, "second words")  # waits for the first turn
            wait_until(lambda: telegram.pending_updates() == 0, "both updates confirmed", 15)
            gateway.kill()
    finally:
        release.set()
    assert telegram.sent == []
    with SessionStore.open(home) as store:
        (row,) = store.routing.inbox_pending()  # acknowledged, not turned
        assert row.platform == "telegram" and '"second words"' in row.event
    with GatewayProcess(home) as gateway:
        (answer,) = telegram.wait_for_sent(1)
        assert answer["text"] == "Answer to the second." and answer["chat"]["id"] == alice["id"]
        # The chat goes on after the answered backlog.
        telegram.user_says(dm, alice, "third words")
        assert telegram.wait_for_sent(2)[1]["text"] == "Answer to the third."
        assert gateway.terminate() == 0
    with GatewayProcess(home) as gateway:  # nothing is left to answer again
        time.sleep(3)
        assert gateway.terminate() == 0
    assert [m["text"] for m in telegram.sent] == ["Answer to the second.", "Answer to the third."]
    assert telegram.pending_updates() == 0
    assert stored_user_texts(home) == {
        f"agent:main:telegram:dm:{alice['id']}": ["first words", "second words", "third words"]
    }
    with SessionStore.open(home) as store:
        assert store.routing.inbox_pending() == []
    assert sum(1 for body in standin.requests if asked_in(body, "second words")) == 1


def inbox_rows(home: Path) -> int:
    with SessionStore.open(home) as store:
        return len(store.routing.inbox_pending())


def test_an_api_server_request_acknowledged_before_a_kill_9_is_answered_into_its_session(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    """The HTTP caller is gone after the restart: the message and its answer are stored in the
    conversation's session, and nothing is sent (one log line says so)."""
    release = threading.Event()
    standin.add(
        Reply(text="never finished", match="first question", hold=release, hold_after_chunks=0),
        Reply(text="Kept in the session.", match="second question"),
    )
    home = tmp_path / "home"
    settings = {"api_key": API_KEY, "port": 0, "model_name": "hermes-agent"}
    write_config(home, standin.base_url, {"api-server": settings})

    def ask(base_url: str, text: str) -> None:
        client = openai.OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0, timeout=60)
        with contextlib.suppress(openai.APIError):  # the gateway is killed meanwhile
            client.chat.completions.create(
                model="hermes-agent",
                messages=[{"role": "user", "content": text}],
                extra_headers={"X-Hermes-Conversation": "laptop"},
            )

    try:
        with GatewayProcess(home) as gateway:
            url = gateway.addresses["api-server"]
            first = threading.Thread(target=ask, args=(url, "first question"), daemon=True)
            first.start()
            wait_until(lambda: asked_about(standin, "first question"), "the first turn is held")
            second = threading.Thread(target=ask, args=(url, "second question"), daemon=True)
            second.start()
            wait_until(lambda: inbox_rows(home) == 1, "the second question is in the inbox")
            gateway.kill()
    finally:
        release.set()
    with GatewayProcess(home) as gateway:
        wait_until(lambda: inbox_rows(home) == 0, "the second question is turned")
        assert gateway.terminate() == 0
    log = gateway.log_text()
    assert "Traceback" not in log
    assert "platform api-server: the answer is stored in" in log and "not sent" in log
    with SessionStore.open(home) as store:
        (session,) = store.select_sessions()
        assert session.session_key == "agent:main:api-server:dm:laptop"
        assert [(m.role, m.content) for m in store.messages(session.id)] == [
            ("user", "first question"),
            ("user", "second question"),
            ("assistant", "Kept in the session."),
        ]
