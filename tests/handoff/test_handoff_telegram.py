"""End to end: ``/handoff telegram`` typed in the installed ``hermes`` chat (a pseudo-terminal)
while a real ``hermes gateway run`` subprocess runs the telegram plugin against the Bot API
stand-in, both on the stand-in model (SPEC G7): success into a forum topic (on a SQLite and on a
PostgreSQL store), the fallback to the home channel when no topic can be opened, and the failure
modes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
import yaml
from chat.chat_helpers import chat_env, say, spawn_chat, styled
from gateway.gateway_helpers import title_reply, user_texts
from gateway.gateway_process import GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply
from standins.telegram_api import TelegramStandIn

from hermes_core.plugins import PluginHost
from hermes_core.store import SessionStore
from hermes_core.store.backends import open_url

pytestmark = pytest.mark.slow

SUCCESS = "↻ Handoff complete. The session is now active on telegram."


@pytest.fixture
def model() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def telegram() -> Iterator[TelegramStandIn]:
    with TelegramStandIn() as server:
        yield server


def configure(home: Path, model: OpenAIStandIn, telegram: TelegramStandIn, **extra: Any) -> None:
    platforms = {
        "telegram": {
            "token": telegram.token,
            "base_url": telegram.base_url,
            "base_file_url": telegram.base_file_url,
            "poll_timeout_seconds": 1,
        }
    }
    write_config(home, model.base_url, platforms, **extra)


def chat(tmp_path: Path, model: OpenAIStandIn, *args: str) -> pexpect.spawn:
    env = chat_env(tmp_path, None, HERMES_MODEL_BASE_URL=model.base_url,
                   HERMES_MODEL="standin-model", OPENAI_API_KEY="sk-test")  # fmt: skip
    return spawn_chat(env, *args, timeout=60)


def sethome(telegram: TelegramStandIn, group: dict[str, Any], user: dict[str, Any]) -> None:
    count = len(telegram.sent)
    telegram.user_says(group, user, "/sethome")
    telegram.wait_for_sent(count + 1)


def talk_then_hand_off(child: pexpect.spawn) -> None:
    say(child, "plan the release")
    child.expect_exact("Sure, the plan")
    say(child, "/handoff telegram")


def the_session(home: Path) -> tuple[Any, list[str]]:
    """The one CLI session of ``home``'s ``state.db`` and its user messages."""
    return session_in(f"sqlite:///{home / 'state.db'}")


def session_in(store_url: str) -> tuple[Any, list[str]]:
    """The one CLI session of the store at ``store_url`` and its user messages."""
    with open_url(store_url, host=PluginHost()) as store:
        (session,) = [s for s in store.select_sessions() if s.source == "cli"]
        return session, user_texts(store.messages(session.id))


def test_handoff_into_a_new_topic_continues_there_and_back_on_the_cli(
    tmp_path: Path, model: OpenAIStandIn, telegram: TelegramStandIn, backend_url: str
) -> None:
    """On each store backend (``store.url``: a SQLite file, a PostgreSQL database)."""
    home = tmp_path / "home"
    configure(home, model, telegram, store={"url": backend_url})
    alice = telegram.user("Alice")
    group = telegram.supergroup(-100500, "Team", forum=True)
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
        (topic,) = telegram.topics(-100500)
        handed = telegram.wait_for_sent(2)[-1]
        assert handed["text"] == "Handoff confirmed. So far: we planned the release."
        assert handed["message_thread_id"] == topic
        # A message in the topic continues the same session.
        count = len(telegram.sent)
        telegram.user_says(group, alice, "what next?", thread_id=topic)
        assert telegram.wait_for_sent(count + 1)[count]["text"] == "Continuing in the topic."
        assert gateway.terminate() == 0
    assert "Traceback" not in gateway.log_text()
    assert not (home / "state.db").exists()  # everything went to the configured store
    session, texts = session_in(backend_url)
    assert session.title == title and session.ended_at is None
    assert texts[0] == "plan the release" and texts[-1] == "what next?"
    assert session.source == "cli" and session.thread_id == str(topic)
    with open_url(backend_url, host=PluginHost()) as store:
        handoff = store.handoffs.get(session.id)
        assert handoff is not None and handoff.state == "completed"
        route = store.routing.route(session.session_key or "")
        assert route is not None and route.session_id == session.id
    # hermes -r TITLE continues where the platform stopped.
    again = chat(tmp_path, model, "-r", title)
    say(again, "and now?")
    again.expect_exact("Back on the terminal.")
    say(again, "/exit")
    again.expect(pexpect.EOF)
    again.close()
    assert session_in(backend_url)[1][-1] == "and now?"


def test_no_topic_possible_falls_back_to_the_home_chat(
    tmp_path: Path, model: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    home = tmp_path / "home"
    configure(home, model, telegram)
    alice = telegram.user("Alice")
    group = telegram.supergroup(-100600, "Plain group")  # no topics: createForumTopic fails
    model.add(Reply(text="Sure, the plan is ready."))
    with GatewayProcess(home) as gateway:
        sethome(telegram, group, alice)
        model.add(Reply(text="Handoff confirmed."), Reply(text="Same session here."))
        child = chat(tmp_path, model)
        talk_then_hand_off(child)
        child.expect(styled(SUCCESS))
        child.expect(pexpect.EOF)
        handed = telegram.wait_for_sent(2)[-1]
        assert handed["text"] == "Handoff confirmed." and "message_thread_id" not in handed
        count = len(telegram.sent)
        telegram.user_says(group, alice, "still there?")
        assert telegram.wait_for_sent(count + 1)[count]["text"] == "Same session here."
        assert gateway.terminate() == 0
    assert telegram.calls_of("createForumTopic")
    session, texts = the_session(home)
    assert texts[-1] == "still there?"
    assert session.session_key == f"agent:main:telegram:group:-100600:{alice['id']}"


def test_gateway_down_times_out_and_the_chat_goes_on(
    tmp_path: Path, model: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    home = tmp_path / "home"
    configure(home, model, telegram)
    config = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    config["gateway"]["handoff_timeout_seconds"] = 2
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    with SessionStore.open(home) as store:
        store.routing.set_home("telegram", "-100700", None)
    model.add(Reply(text="Sure, the plan is ready."), Reply(text="Still here."))
    child = chat(tmp_path, model)
    talk_then_hand_off(child)
    child.expect(r"no gateway took the handoff within 2 s")
    say(child, "are you there?")
    child.expect_exact("Still here.")
    say(child, "/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    session, texts = the_session(home)
    assert texts == ["plan the release", "are you there?"]
    with SessionStore.open(home) as store:
        assert store.handoffs.get(session.id) is None


def test_disabled_platform_or_no_home_channel_is_refused_with_a_hint(
    tmp_path: Path, model: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    home = tmp_path / "home"
    configure(home, model, telegram)
    model.add(Reply(text="Sure, the plan is ready."))
    child = chat(tmp_path, model)
    talk_then_hand_off(child)
    child.expect(r"telegram has no home channel: send /sethome in the telegram chat")
    say(child, "/handoff matrix")
    child.expect(r"matrix is not enabled: add it under gateway.platforms")
    say(child, "/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_failed_send_is_reported_and_can_be_retried(
    tmp_path: Path, model: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    home = tmp_path / "home"
    configure(home, model, telegram)
    alice = telegram.user("Alice")
    ghost = {"id": -100800, "type": "supergroup", "title": "Bot was removed"}  # unknown to the API
    model.add(Reply(text="Sure, the plan is ready."))
    with GatewayProcess(home) as gateway:
        telegram.user_says(ghost, alice, "/sethome")  # stored; the reply cannot be sent
        _wait_for_log(gateway, "sending to chat -100800 failed")
        model.add(Reply(text="Handoff confirmed.", times=2))
        child = chat(tmp_path, model)
        talk_then_hand_off(child)
        child.expect(r"the handoff to telegram failed: .*[Cc]hat not found", timeout=20)
        say(child, "/handoff telegram")
        child.expect(r"the handoff to telegram failed: .*[Cc]hat not found", timeout=20)
        say(child, "/exit")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert gateway.terminate() == 0
    session, _ = the_session(home)
    with SessionStore.open(home) as store:
        failed = store.handoffs.get(session.id)
        assert failed is not None and failed.state == "failed"
        assert failed.error is not None and "chat not found" in failed.error.lower()
        # A handoff that never reached the platform takes no chat over.
        assert all(route.session_id != session.id for route in store.routing.routes())
        assert store.get_session(session.id).session_key is None


def _wait_for_log(gateway: GatewayProcess, text: str) -> None:
    for _ in range(1200):
        if text in gateway.log_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"the gateway never logged {text!r}: {gateway.log_text()}")
