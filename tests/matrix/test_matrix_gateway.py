"""End to end over Matrix: the installed ``hermes gateway run`` in a subprocess, logged in to a
REAL Synapse on 127.0.0.1 with matrix-nio, people writing to it over the client-server API,
and the stand-in model (SPEC O2, G1)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gateway.gateway_helpers import TITLE_MATCH, title_reply, user_texts
from gateway.gateway_process import GatewayProcess, environment, write_config
from installed_hermes import hermes_command
from matrix_helpers import matrix_settings, wait_until
from standins.openai_server import OpenAIStandIn, Reply
from synapse_homeserver import MatrixUser, Synapse, free_port

from hermes_core.store import SessionStore
from hermes_core.store.routed_sessions import RoutingStore

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


def turn_requests(standin: OpenAIStandIn) -> list[dict[str, Any]]:
    """The model requests for answers (not automatic titles)."""
    return [body for body in standin.requests if TITLE_MATCH not in str(body)]


def last_user_text(body: dict[str, Any]) -> str:
    users = [m for m in body["messages"] if m.get("role") == "user"]
    return str(users[-1]["content"])


def keyed(home: Path, key: str) -> list[Any]:
    with SessionStore.open(home) as store:
        return [s for s in store.select_sessions() if s.session_key == key]


def test_a_dm_is_answered_streamed_then_sent_and_stored_under_its_dm_key(
    tmp_path: Path, synapse: Synapse, standin: OpenAIStandIn
) -> None:
    bot, alice = synapse.new_user("bot"), synapse.new_user("alice")
    room = alice.create_room([bot.user_id], direct=True)
    # Written before the gateway ever ran: history, never answered.
    alice.send(room, "an old message from before")
    release = threading.Event()
    standin.add(Reply(text="Hello Alice, nice to meet you here", hold=release,
                      hold_after_chunks=2))  # fmt: skip
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"matrix": matrix_settings(synapse, bot)})
    with GatewayProcess(home) as gateway:
        assert gateway.addresses["matrix"] == f"{bot.user_id} on {synapse.base_url}"
        wait_until(lambda: bot.user_id in alice.members(room), "the bot joined the DM")
        asked = alice.send(room, "hello bot")
        # The answer shows while the model is still writing...
        partial = alice.wait_for_messages(room, bot.user_id, 1)
        assert partial[0].text and "Hello Alice, nice to meet you here".startswith(partial[0].text)
        assert partial[0].text != "Hello Alice, nice to meet you here"
        assert partial[0].in_reply_to == asked
        release.set()
        # ...and is then edited into the whole answer.
        wait_until(
            lambda: (
                alice.messages_from(room, bot.user_id)[0].text
                == "Hello Alice, nice to meet you here"
            ),
            "the answer was complete",
        )
        (answer,) = alice.messages_from(room, bot.user_id)
        assert answer.edits >= 1 and answer.thread_root is None
        assert gateway.terminate() == 0
    assert [last_user_text(b) for b in turn_requests(standin)] == ["hello bot"]
    (session,) = keyed(home, f"agent:main:matrix:dm:{room}")
    assert session.source == "matrix" and session.user_id == alice.user_id
    with SessionStore.open(home) as store:
        messages = store.messages(session.id)
        assert user_texts(messages) == ["hello bot"]
        assert [m.content for m in messages if m.role == "assistant"] == [
            "Hello Alice, nice to meet you here"
        ]


def test_a_group_keeps_two_users_apart_and_a_thread_is_one_shared_session(
    tmp_path: Path, synapse: Synapse, standin: OpenAIStandIn
) -> None:
    bot, alice, bob = (synapse.new_user(n) for n in ("bot", "alice", "bob"))
    standin.add(Reply(text="Noted, Alice.", match="my number is 42"))
    standin.add(Reply(text="Hi Bob, I have nothing from you yet.", match="what is my number"))
    standin.add(Reply(text="Thread answer one.", match="thread question one"))
    standin.add(Reply(text="Thread answer two.", match="thread question two"))
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"matrix": matrix_settings(synapse, bot)})
    with GatewayProcess(home) as gateway:
        # Invited while the gateway runs: the invite arrives through its sync.
        room = alice.create_room([bot.user_id, bob.user_id], name="Team room")
        bob.join(room)
        wait_until(lambda: bot.user_id in alice.members(room), "the bot joined the group")
        alice.send(room, "my number is 42")
        alice.wait_for_messages(room, bot.user_id, 1)
        bob.send(room, "what is my number?")
        replies = bob.wait_for_messages(room, bot.user_id, 2)
        assert [m.text for m in replies] == [
            "Noted, Alice.",
            "Hi Bob, I have nothing from you yet.",
        ]
        root = alice.send(room, "Starting a thread about plans")  # answered in the room, too
        alice.wait_for_messages(room, bot.user_id, 3)
        alice.send(room, "thread question one", thread_root=root)
        alice.wait_for_messages(room, bot.user_id, 4)
        bob.send(room, "thread question two", thread_root=root)
        shown = bob.wait_for_messages(room, bot.user_id, 5)
        assert [(m.text, m.thread_root) for m in shown[-2:]] == [
            ("Thread answer one.", root),
            ("Thread answer two.", root),
        ]
        assert gateway.terminate() == 0
    bob_turn = next(b for b in turn_requests(standin) if last_user_text(b).startswith("what is"))
    assert "42" not in str(bob_turn["messages"])  # Bob's history holds nothing of Alice's
    second = next(b for b in turn_requests(standin) if "thread question two" in str(b))
    assert "thread question one" in str(second["messages"])  # the thread is shared
    (alice_session,) = keyed(home, f"agent:main:matrix:group:{room}:{alice.user_id}")
    (bob_session,) = keyed(home, f"agent:main:matrix:group:{room}:{bob.user_id}")
    (thread_session,) = keyed(home, f"agent:main:matrix:group:{room}:{root}")
    with SessionStore.open(home) as store:
        assert user_texts(store.messages(alice_session.id)) == [
            "my number is 42",
            "Starting a thread about plans",
        ]
        assert user_texts(store.messages(bob_session.id)) == ["what is my number?"]
        assert user_texts(store.messages(thread_session.id)) == [
            "thread question one",
            "thread question two",
        ]


def test_title_new_sethome_reset_and_a_restart_continuing_the_same_session(
    tmp_path: Path, synapse: Synapse, standin: OpenAIStandIn
) -> None:
    bot, alice = synapse.new_user("bot"), synapse.new_user("alice")
    room = alice.create_room([bot.user_id], direct=True)
    standin.add(Reply(text="First answer.", match="first question"))
    standin.add(Reply(text="After the restart.", match="after restart"))
    home = tmp_path / "home"
    key = f"agent:main:matrix:dm:{room}"
    write_config(home, standin.base_url, {"matrix": matrix_settings(synapse, bot)})
    with GatewayProcess(home) as gateway:
        wait_until(lambda: bot.user_id in alice.members(room), "the bot joined the DM")
        alice.send(room, "/new Matrix planning")
        alice.wait_for_messages(room, bot.user_id, 1)
        alice.send(room, "first question")
        alice.wait_for_messages(room, bot.user_id, 2)
        alice.send(room, "/title")
        shown = alice.wait_for_messages(room, bot.user_id, 3)
        assert "Matrix planning" in shown[-1].text
        alice.send(room, "/title Quarterly plans")
        assert (
            alice.wait_for_messages(room, bot.user_id, 4)[-1].text == "✓ Title set: Quarterly plans"
        )
        alice.send(room, "/sethome")
        shown = alice.wait_for_messages(room, bot.user_id, 5)
        assert shown[-1].text == "✓ This chat is now the home channel of matrix."
        assert gateway.terminate() == 0
    (session,) = [s for s in keyed(home, key) if s.ended_at is None]
    assert session.title == "Quarterly plans"
    with SessionStore.open(home) as store:
        assert RoutingStore(store).home("matrix") == (room, None)
    # The restarted gateway logs in with an access token this time.
    token = MatrixUser.login(synapse.base_url, bot.user_id, bot.password).token
    settings = matrix_settings(synapse, bot, access_token=token, password=None)
    write_config(home, standin.base_url, {"matrix": settings})
    with GatewayProcess(home) as gateway:
        alice.send(room, "after restart")
        replies = alice.wait_for_messages(room, bot.user_id, 6)
        assert replies[-1].text == "After the restart."
        alice.send(room, "/reset")
        alice.wait_for_messages(room, bot.user_id, 7)
        assert gateway.terminate() == 0
    (continued,) = [s for s in keyed(home, key) if s.id == session.id]
    assert continued.end_reason == "reset"
    (fresh,) = [s for s in keyed(home, key) if s.ended_at is None]
    assert fresh.id != session.id
    with SessionStore.open(home) as store:
        assert user_texts(store.messages(session.id)) == ["first question", "after restart"]
    restarted = next(b for b in turn_requests(standin) if "after restart" in last_user_text(b))
    assert "First answer." in str(restarted["messages"])


def test_a_missing_setting_is_one_line_naming_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(
        home,
        "http://127.0.0.1:9/v1",
        {"matrix": {"homeserver": "http://127.0.0.1:9", "password": "x"}},
    )
    done = subprocess.run(
        [hermes_command(), "gateway", "run"],
        env=environment(home), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1
    assert "gateway.platforms.matrix.user_id is not set" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_refused_password_or_an_unreachable_homeserver_is_one_line(
    tmp_path: Path, synapse: Synapse
) -> None:
    bot = synapse.new_user("bot")
    closed = f"http://127.0.0.1:{free_port()}"
    cases = {
        "wrong password": (
            {"homeserver": synapse.base_url, "user_id": bot.user_id, "password": "not-it"},
            f"matrix: cannot log in to {synapse.base_url} as {bot.user_id}",
        ),
        "unreachable": (
            {"homeserver": closed, "user_id": bot.user_id, "password": bot.password},
            f"matrix: cannot reach {closed}",
        ),
    }
    for name, (settings, line) in cases.items():
        home = tmp_path / name.replace(" ", "-")
        write_config(home, "http://127.0.0.1:9/v1", {"matrix": settings})
        done = subprocess.run(
            [hermes_command(), "gateway", "run"],
            env=environment(home), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, name
        problem = [entry for entry in done.stderr.splitlines() if "matrix" in entry]
        assert len(problem) == 1 and line in problem[0], (name, done.stderr)
        assert "Traceback" not in done.stderr


def test_a_message_sent_while_the_gateway_was_down_is_answered_once_after_it_starts(
    tmp_path: Path, synapse: Synapse, standin: OpenAIStandIn
) -> None:
    bot, alice = synapse.new_user("bot"), synapse.new_user("alice")
    room = alice.create_room([bot.user_id], direct=True)
    standin.add(Reply(text="Before.", match="before the stop"))
    standin.add(Reply(text="Caught up.", match="while it was down"))
    standin.add(Reply(text="Live again.", match="after the start"))
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"matrix": matrix_settings(synapse, bot)})
    with GatewayProcess(home) as gateway:
        wait_until(lambda: bot.user_id in alice.members(room), "the bot joined the DM")
        alice.send(room, "before the stop")
        alice.wait_for_messages(room, bot.user_id, 1)
        assert gateway.terminate() == 0
    alice.send(room, "while it was down")
    with GatewayProcess(home) as gateway:
        replies = alice.wait_for_messages(room, bot.user_id, 2)
        assert replies[-1].text == "Caught up."
        alice.send(room, "after the start")
        assert alice.wait_for_messages(room, bot.user_id, 3)[-1].text == "Live again."
        assert gateway.terminate() == 0
    # A third start has nothing to catch up: nothing is answered twice.
    with GatewayProcess(home) as gateway:
        time.sleep(3)
        assert gateway.terminate() == 0
    assert [m.text for m in alice.messages_from(room, bot.user_id)] == [
        "Before.",
        "Caught up.",
        "Live again.",
    ]
    key = f"agent:main:matrix:dm:{room}"
    (session,) = [s for s in keyed(home, key) if s.ended_at is None]
    with SessionStore.open(home) as store:
        assert user_texts(store.messages(session.id)) == [
            "before the stop",
            "while it was down",
            "after the start",
        ]
    assert "Traceback" not in gateway.log_text()


def test_more_messages_than_one_sync_holds_while_down_are_all_answered_once_in_order(
    tmp_path: Path, synapse: Synapse, standin: OpenAIStandIn
) -> None:
    """Over 100 messages sent while the gateway is down: the first sync after the start comes
    back ``limited`` (its timeline holds only the last 100 events), so the room is paged back
    from ``prev_batch`` to the saved position — every message stored and answered once, oldest
    first, and a third start answers nothing again."""
    backlog = 106
    bot, alice = synapse.new_user("bot"), synapse.new_user("alice")
    room = alice.create_room([bot.user_id], direct=True)
    standin.add(Reply(text="Noted.", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"matrix": matrix_settings(synapse, bot)})
    with GatewayProcess(home) as gateway:
        wait_until(lambda: bot.user_id in alice.members(room), "the bot joined the DM")
        alice.send(room, "before the stop")
        wait_until(lambda: len(turn_requests(standin)) == 1, "the first turn was answered")
        time.sleep(1)
        assert gateway.terminate() == 0
    sent = [f"backlog message {n:03d}" for n in range(backlog)]
    for text in sent:
        alice.send(room, text)
    key = f"agent:main:matrix:dm:{room}"

    def stored_user_texts() -> list[str]:
        sessions = [s for s in keyed(home, key) if s.ended_at is None]
        if not sessions:
            return []
        with SessionStore.open(home) as store:
            return user_texts(store.messages(sessions[0].id))

    with GatewayProcess(home) as gateway:
        wait_until(
            lambda: len(turn_requests(standin)) == 1 + backlog,
            "every message of the backlog was answered",
            timeout=240,
        )
        time.sleep(2)
        assert gateway.terminate() == 0
    with GatewayProcess(home) as gateway:  # nothing left to catch up
        time.sleep(3)
        assert gateway.terminate() == 0
    assert stored_user_texts() == ["before the stop", *sent]
    assert [last_user_text(body) for body in turn_requests(standin)] == ["before the stop", *sent]
    assert "Traceback" not in gateway.log_text()
