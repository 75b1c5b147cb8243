"""End to end on a real Synapse: ``/handoff matrix`` typed in the installed ``hermes`` chat (a
pseudo-terminal) while ``hermes gateway run`` serves Matrix (SPEC G7): the bot opens a thread
in the home room, the agent's confirmation lands there, a message in that thread continues the
same session, and ``hermes -r TITLE`` goes on with it on the terminal."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pexpect
import pytest
from chat.chat_helpers import chat_env, say, spawn_chat, styled
from gateway.gateway_helpers import title_reply, user_texts
from gateway.gateway_process import GatewayProcess, write_config
from matrix_helpers import home_room, matrix_settings, wait_until
from standins.openai_server import OpenAIStandIn, Reply
from synapse_homeserver import Synapse

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


def _chat_env(tmp_path: Path, model: OpenAIStandIn) -> dict[str, str]:
    return chat_env(tmp_path, None, HERMES_MODEL_BASE_URL=model.base_url,
                    HERMES_MODEL="standin-model", OPENAI_API_KEY="sk-test")  # fmt: skip


def _chat_asking_for_a_handoff(env: dict[str, str]) -> pexpect.spawn:
    """The installed chat after one answered message and ``/handoff matrix`` typed."""
    child = spawn_chat(env, timeout=90)
    say(child, "plan the release")
    child.expect_exact("Sure, the plan")
    say(child, "/handoff matrix")
    return child


def test_handoff_to_matrix_opens_a_thread_and_continues_the_same_session(
    tmp_path: Path, synapse: Synapse
) -> None:
    bot, alice = synapse.new_user("bot"), synapse.new_user("alice")
    home = tmp_path / "home"
    with OpenAIStandIn() as model:
        model.add(title_reply(), Reply(text="Sure, the plan is ready."))
        write_config(home, model.base_url, {"matrix": matrix_settings(synapse, bot)})
        with GatewayProcess(home) as gateway:
            room = home_room(alice, bot)
            model.add(
                Reply(text="Handoff confirmed: we planned the release."),
                Reply(text="Continuing in the thread."),
                Reply(text="Back on the terminal."),
            )
            env = _chat_env(tmp_path, model)
            child = _chat_asking_for_a_handoff(env)
            child.expect(styled("↻ Handoff complete. The session is now active on matrix."))
            child.expect(r"Resume it on this CLI later with: /resume (.+?)\r?\n")
            title = child.match.group(1).strip()
            child.expect(pexpect.EOF)
            child.close()
            assert child.exitstatus == 0
            wait_until(
                lambda: any(
                    m.text == "Handoff confirmed: we planned the release."
                    for m in alice.messages_from(room, bot.user_id)
                ),
                "the confirmation reached the room",
            )
            confirmation = next(
                m for m in alice.messages_from(room, bot.user_id)
                if m.text == "Handoff confirmed: we planned the release."
            )  # fmt: skip
            root = confirmation.thread_root
            assert root is not None
            alice.send(room, "what next?", thread_root=root)
            wait_until(
                lambda: any(
                    m.text == "Continuing in the thread."
                    for m in alice.messages_from(room, bot.user_id)
                ),
                "the thread was answered",
            )
            assert gateway.terminate() == 0
        with SessionStore.open(home) as store:
            (session,) = [s for s in store.select_sessions() if s.source == "cli"]
            assert session.title == title and session.thread_id == root
            assert user_texts(store.messages(session.id))[-1] == "what next?"
        again = spawn_chat(env, "-r", title, timeout=90)
        say(again, "and now?")
        again.expect_exact("Back on the terminal.")
        say(again, "/exit")
        again.expect(pexpect.EOF)
        again.close()


def test_handoff_to_a_home_room_the_bot_was_kicked_from_fails_with_the_reason(
    tmp_path: Path, synapse: Synapse
) -> None:
    bot, alice = synapse.new_user("bot"), synapse.new_user("alice")
    home = tmp_path / "home"
    with OpenAIStandIn() as model:
        model.add(title_reply(), Reply(text="Sure, the plan is ready."))
        write_config(home, model.base_url, {"matrix": matrix_settings(synapse, bot)})
        with GatewayProcess(home) as gateway:
            room = home_room(alice, bot)
            alice.call("POST", f"/rooms/{urllib.parse.quote(room)}/kick",
                       {"user_id": bot.user_id, "reason": "test"})  # fmt: skip
            wait_until(lambda: bot.user_id not in alice.members(room), "the bot was kicked")
            model.add(Reply(text="Handoff confirmed.", times=None))
            env = _chat_env(tmp_path, model)
            child = _chat_asking_for_a_handoff(env)
            child.expect(r"the handoff to matrix failed: ")
            say(child, "/handoff matrix")  # the failed row does not block a retry
            child.expect(r"the handoff to matrix failed: ")
            say(child, "/exit")
            child.expect(pexpect.EOF)
            child.close()
            assert child.exitstatus == 0
            assert gateway.terminate() == 0
        assert "Traceback" not in gateway.log_text()
