"""End to end on the PostgreSQL store (issue 14): ``/handoff telegram`` typed in the installed
``hermes`` chat while a real ``hermes gateway run`` serves the telegram plugin against the Bot
API stand-in, both with ``store.url`` pointing at a fresh database of the throwaway cluster —
the session moves into a new forum topic, a message there continues it, and ``hermes -r``
brings it back to the terminal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from chat.chat_helpers import say, styled
from gateway.gateway_helpers import title_reply, user_texts
from gateway.gateway_process import GatewayProcess
from standins.openai_server import OpenAIStandIn, Reply
from standins.telegram_api import TelegramStandIn
from test_handoff_telegram import SUCCESS, chat, configure, sethome, talk_then_hand_off

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url

pytestmark = pytest.mark.slow


@pytest.fixture
def model() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def telegram() -> Iterator[TelegramStandIn]:
    with TelegramStandIn() as server:
        yield server


def the_session(store_url: str) -> tuple[Any, list[str]]:
    with open_url(store_url, host=PluginHost()) as store:
        (session,) = [s for s in store.select_sessions() if s.source == "cli"]
        return session, user_texts(store.messages(session.id))


def test_handoff_on_postgresql_moves_the_session_to_a_topic_and_back(
    tmp_path: Path, model: OpenAIStandIn, telegram: TelegramStandIn, postgres_url: str
) -> None:
    home = tmp_path / "home"
    configure(home, model, telegram, store={"url": postgres_url})
    alice = telegram.user("Alice")
    group = telegram.supergroup(-100900, "Team", forum=True)
    model.add(Reply(text="Sure, the plan is ready."))
    with GatewayProcess(home) as gateway:
        sethome(telegram, group, alice)
        model.add(
            Reply(text="Handoff confirmed. So far: we planned the release."),
            Reply(text="Continuing in the topic."),
            Reply(text="Back on the terminal."),
        )
        child = chat(tmp_path, model)
        talk_then_hand_off(child)
        child.expect(styled(SUCCESS))
        child.expect(r"Resume it on this CLI later with: /resume (.+?)\r?\n")
        title = child.match.group(1).strip()
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        (topic,) = telegram.topics(-100900)
        handed = telegram.wait_for_sent(2)[-1]
        assert handed["text"] == "Handoff confirmed. So far: we planned the release."
        assert handed["message_thread_id"] == topic
        count = len(telegram.sent)
        telegram.user_says(group, alice, "what next?", thread_id=topic)
        assert telegram.wait_for_sent(count + 1)[count]["text"] == "Continuing in the topic."
        assert gateway.terminate() == 0
    log = gateway.log_text()
    assert "Traceback" not in log and "need the SQLite" not in log
    assert not (home / "state.db").exists()  # everything went to the PostgreSQL database
    session, texts = the_session(postgres_url)
    assert session.title == title and session.ended_at is None
    assert texts[0] == "plan the release" and texts[-1] == "what next?"
    assert session.source == "cli" and session.thread_id == str(topic)
    with open_url(postgres_url, host=PluginHost()) as store:
        handoff = store.handoffs.get(session.id)
        assert handoff is not None and handoff.state == "completed"
        route = store.routing.route(session.session_key or "")
        assert route is not None and route.session_id == session.id
    again = chat(tmp_path, model, "-r", title)
    say(again, "and now?")
    again.expect_exact("Back on the terminal.")
    say(again, "/exit")
    again.expect(pexpect.EOF)
    again.close()
    assert the_session(postgres_url)[1][-1] == "and now?"
