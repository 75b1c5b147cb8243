"""End to end: the installed ``hermes gateway run`` with the bluebubbles plugin against the
BlueBubbles stand-in (its webhooks into the gateway, its REST API out, real HTTP) and the
stand-in model: a one-to-one chat keyed by the canonical handle with the chat commands, a group
keeping people apart, the account's own messages ignored, a repeated webhook, a ``kill -9``
after an acknowledged message, the catch-up after a restart, the missing password line; and the
plugin installed alone beside the core (SPEC O2, G1, G4)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from gateway_helpers import user_texts
from gateway_process import GatewayProcess, write_config
from platform_process import (
    assert_installed_alone,
    model_standin,
    refused_to_start,
    wait_until_asked,
)
from standins.bluebubbles_api import BlueBubblesStandIn
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Any:
    with model_standin() as server:
        yield server


@pytest.fixture
def bluebubbles() -> Any:
    with BlueBubblesStandIn() as server:
        yield server


def platform(server: BlueBubblesStandIn) -> dict[str, Any]:
    return {"bluebubbles": {"url": server.url, "password": server.password, "port": 0}}


def started(home: Path, server: BlueBubblesStandIn) -> GatewayProcess:
    """The gateway, with the stand-in's webhook pointed at its endpoint."""
    gateway = GatewayProcess(home).start()
    server.webhook_url = f"{gateway.addresses['bluebubbles']}?password={server.password}"
    return gateway


def say(server: BlueBubblesStandIn, chat: str, address: str, text: str) -> dict[str, Any]:
    """``address`` writes ``text`` (acknowledged 200); the app's answer (its next message)."""
    count = len(server.sent)
    assert server.user_says(chat, address, text)[1] == 200
    return server.wait_for_sent(count + 1)[count]


def sessions_by_key(home: Path) -> dict[str, list[list[str]]]:
    found: dict[str, list[list[str]]] = {}
    with SessionStore.open(home) as store:
        for s in sorted(store.select_sessions(), key=lambda s: s.started_at):
            if s.source == "bluebubbles":
                found.setdefault(str(s.session_key), []).append(user_texts(store.messages(s.id)))
    return found


def test_a_dm_and_a_group_with_the_chat_commands_and_a_repeated_webhook(
    tmp_path: Path, standin: OpenAIStandIn, bluebubbles: BlueBubblesStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(bluebubbles))
    alice, bob, carol = "Alice@Example.com", "+15550102000", "+15550103000"
    dm, trip = bluebubbles.dm(alice), bluebubbles.group("Trip")
    hostile = "'); DROP TABLE messages;-- $(reboot) \u202e"
    gateway = started(home, bluebubbles)
    try:
        first = say(bluebubbles, dm, alice, "hi there")
        assert (first["text"], first["chatGuid"]) == ("noted", dm)
        titled = say(bluebubbles, dm, alice, "/title Trip planning")
        assert titled["text"] == "✓ Title set: Trip planning"
        guid, _ = bluebubbles.user_says(dm, alice, "are you there?")
        bluebubbles.wait_for_sent(3)
        assert bluebubbles.deliver_again(guid) == 200  # BlueBubbles repeating: taken once
        assert say(bluebubbles, trip, bob, "bob: my secret is 7")["chatGuid"] == trip
        say(bluebubbles, trip, carol, hostile)
        assert say(bluebubbles, dm, alice, "/new")["text"].startswith("✓")
        say(bluebubbles, dm, alice, "new topic")
        assert len(bluebubbles.sent) == 7
        assert gateway.terminate() == 0
    finally:
        if gateway.process is not None and gateway.process.poll() is None:
            gateway.process.kill()
    assert "Traceback" not in gateway.log_text()
    assert bluebubbles.echoes and set(bluebubbles.echoes) == {200}  # its own: acknowledged
    assert sessions_by_key(home) == {
        "agent:main:bluebubbles:dm:alice@example.com": [
            ["hi there", "are you there?"],
            ["new topic"],
        ],
        f"agent:main:bluebubbles:group:{trip}:{bob}": [["bob: my secret is 7"]],
        f"agent:main:bluebubbles:group:{trip}:{carol}": [[hostile]],
    }
    with SessionStore.open(home) as store:
        titles = {s.title for s in store.select_sessions() if s.source == "bluebubbles"}
        assert "Trip planning" in titles


def test_a_kill_after_an_acknowledged_message_loses_nothing_and_the_restart_catches_up(
    tmp_path: Path, standin: OpenAIStandIn, bluebubbles: BlueBubblesStandIn
) -> None:
    release = threading.Event()
    standin.add(
        Reply(text="First.", match="first"),
        Reply(text="Never sent.", match="then killed", hold=release, hold_after_chunks=1),
        Reply(text="Caught up.", match="while it was down"),
        Reply(text="Live.", match="after the start"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(bluebubbles))
    alice = "+15550102000"
    dm = bluebubbles.dm(alice)
    gateway = started(home, bluebubbles)
    try:
        assert say(bluebubbles, dm, alice, "first")["text"] == "First."
        assert bluebubbles.user_says(dm, alice, "acknowledged then killed")[1] == 200
        # Killed mid-answer: its "Never sent." is taken by that turn, not by a later one
        # (whose history holds the text too) after the restart.
        wait_until_asked(standin, "then killed")
        gateway.kill()
    finally:
        release.set()
        if gateway.process is not None and gateway.process.poll() is None:
            gateway.process.kill()
    assert bluebubbles.user_says(dm, alice, "while it was down")[1] is None  # unreachable
    restarted = started(home, bluebubbles)
    try:
        assert bluebubbles.wait_for_sent(2)[1]["text"] == "Caught up."
        assert say(bluebubbles, dm, alice, "after the start")["text"] == "Live."
        assert restarted.terminate() == 0
    finally:
        if restarted.process is not None and restarted.process.poll() is None:
            restarted.process.kill()
    with GatewayProcess(home) as again:  # caught up: nothing comes again
        time.sleep(2)
        assert again.terminate() == 0
    assert [m["text"] for m in bluebubbles.sent] == ["First.", "Caught up.", "Live."]
    assert sessions_by_key(home) == {
        f"agent:main:bluebubbles:dm:{alice}": [
            ["first", "acknowledged then killed", "while it was down", "after the start"]
        ]
    }


def test_a_message_replayed_from_the_inbox_and_read_again_by_the_catch_up_is_answered_once(
    tmp_path: Path, standin: OpenAIStandIn, bluebubbles: BlueBubblesStandIn
) -> None:
    release = threading.Event()
    standin.add(
        Reply(text="Slow.", match="first", hold=release, hold_after_chunks=1),
        Reply(text="Queued answer.", match="queued"),
        Reply(text="Live.", match="after the start"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(bluebubbles))
    alice = "+15550102000"
    dm = bluebubbles.dm(alice)
    gateway = started(home, bluebubbles)
    try:
        assert bluebubbles.user_says(dm, alice, "first")[1] == 200
        wait_until_asked(standin, "first")
        # Behind a turn in progress: acknowledged once in the inbox, its turn not begun.
        assert bluebubbles.user_says(dm, alice, "queued behind it")[1] == 200
        gateway.kill()
    finally:
        release.set()
        if gateway.process is not None and gateway.process.poll() is None:
            gateway.process.kill()
    # The catch-up position a kill right after an acknowledgement can leave (it is saved
    # after it): before both messages, so the restart reads both again from the server while
    # the inbox replays the queued one.
    cursors = home / "gateway" / "platforms" / "bluebubbles" / "cursors.json"
    assert cursors.exists()
    cursors.write_text(json.dumps({"messages": "0:"}), encoding="utf-8")
    restarted = started(home, bluebubbles)
    try:
        assert bluebubbles.wait_for_sent(1)[0]["text"] == "Queued answer."
        assert say(bluebubbles, dm, alice, "after the start")["text"] == "Live."
        assert restarted.terminate() == 0
    finally:
        if restarted.process is not None and restarted.process.poll() is None:
            restarted.process.kill()
    log = restarted.log_text()
    assert "Traceback" not in log
    assert log.count("; not again") == 2  # both read again by the catch-up, taken once
    assert [m["text"] for m in bluebubbles.sent] == ["Queued answer.", "Live."]
    assert sessions_by_key(home) == {
        f"agent:main:bluebubbles:dm:{alice}": [["first", "queued behind it", "after the start"]]
    }


def test_a_missing_password_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn, bluebubbles: BlueBubblesStandIn
) -> None:
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"bluebubbles": {"url": bluebubbles.url, "port": 0}})
    assert "gateway.platforms.bluebubbles.password is not set" in refused_to_start(
        home, "bluebubbles"
    )


def test_the_bluebubbles_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    assert_installed_alone(tmp_path, "hermes-platform-bluebubbles", "platform:bluebubbles")
