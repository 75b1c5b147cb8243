"""End to end: the installed ``hermes gateway run`` with the mattermost plugin against the
Mattermost stand-in (REST API v4 and WebSocket over real HTTP) and the stand-in model: a DM with
the chat commands, a channel keeping users apart, a shared thread answered in its thread, a
repeated event, a ``kill -9`` after a post was stored, the catch-up after a restart, the missing
token line; and the plugin installed alone beside the core (SPEC O2, G1, G4)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fresh_venv import fresh_venv_with, listed_distributions, run_hermes
from gateway_helpers import title_reply, user_texts
from gateway_process import GatewayProcess, write_config
from standins.mattermost_api import MattermostStandIn
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


@pytest.fixture
def standin() -> Any:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def mattermost() -> Any:
    with MattermostStandIn() as server:
        yield server


def platform(server: MattermostStandIn) -> dict[str, Any]:
    return {"mattermost": {"url": server.url, "token": server.token}}


def say(server: MattermostStandIn, channel: str, user: str, text: str,
        root_id: str = "") -> dict[str, Any]:  # fmt: skip
    """``user`` posts ``text``; the bot's answer (its next post)."""
    count = len(server.posted)
    server.user_says(channel, user, text, root_id=root_id)
    return server.wait_for_posts(count + 1)[count]


def sessions_by_key(home: Path) -> dict[str, list[list[str]]]:
    found: dict[str, list[list[str]]] = {}
    with SessionStore.open(home) as store:
        for s in sorted(store.select_sessions(), key=lambda s: s.started_at):
            if s.source == "mattermost":
                found.setdefault(str(s.session_key), []).append(user_texts(store.messages(s.id)))
    return found


def test_a_dm_a_channel_and_a_thread_with_the_chat_commands(
    tmp_path: Path, standin: OpenAIStandIn, mattermost: MattermostStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(mattermost))
    alice, bob = mattermost.user("alice"), mattermost.user("bob")
    dm, town = mattermost.channel("D"), mattermost.channel("O")
    hostile = "Robert'); DROP TABLE sessions;-- $(rm -rf ~) {{7*7}}"
    with GatewayProcess(home) as gateway:
        first = say(mattermost, dm, alice, "hi there")
        assert (first["message"], first["channel_id"], first["root_id"]) == ("noted", dm, "")
        titled = say(mattermost, dm, alice, "@hermes /title Trip planning")
        assert titled["message"] == "✓ Title set: Trip planning"
        say(mattermost, town, alice, "alice: my secret is 42")
        say(mattermost, town, bob, hostile)
        anchor = mattermost.user_says(town, bob, "shall we ship?")
        mattermost.wait_for_posts(5)
        in_thread = say(mattermost, town, alice, "thread: ship it", root_id=anchor)
        assert (in_thread["message"], in_thread["root_id"]) == ("noted", anchor)
        mattermost.broadcast_again(anchor)  # the server repeating an event: not answered again
        assert say(mattermost, town, bob, "thread: yes", root_id=anchor)["root_id"] == anchor
        assert say(mattermost, dm, alice, "@hermes /new")["message"].startswith("✓")
        say(mattermost, dm, alice, "new topic")
        assert len(mattermost.posted) == 9
        assert gateway.terminate() == 0
    assert "Traceback" not in gateway.log_text()
    assert sessions_by_key(home) == {
        f"agent:main:mattermost:dm:{dm}": [["hi there"], ["new topic"]],
        f"agent:main:mattermost:channel:{town}:{alice}": [["alice: my secret is 42"]],
        f"agent:main:mattermost:channel:{town}:{bob}": [[hostile, "shall we ship?"]],
        f"agent:main:mattermost:group:{town}:{anchor}": [["thread: ship it", "thread: yes"]],
    }
    with SessionStore.open(home) as store:
        titles = {s.title for s in store.select_sessions() if s.source == "mattermost"}
        assert "Trip planning" in titles
    assert all("secret is 42" not in str(body["messages"]) for body in standin.requests
               if "thread: ship it" in str(body["messages"][-1].get("content")))  # fmt: skip


def test_a_kill_after_a_post_was_stored_loses_nothing_and_the_restart_catches_up(
    tmp_path: Path, standin: OpenAIStandIn, mattermost: MattermostStandIn
) -> None:
    release = threading.Event()
    standin.add(
        Reply(text="First.", match="first"),
        Reply(text="Never sent.", match="stored then killed", hold=release, hold_after_chunks=1),
        Reply(text="Caught up.", match="while it was down"),
        Reply(text="Live.", match="after the start"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(mattermost))
    alice = mattermost.user("alice")
    dm = mattermost.channel("D")
    gateway = GatewayProcess(home).start()
    try:
        assert say(mattermost, dm, alice, "first")["message"] == "First."
        mattermost.user_says(dm, alice, "stored then killed")
        deadline = time.monotonic() + 30  # asked the model: the user turn is committed
        while not any("stored then killed" in str(b["messages"]) for b in standin.requests):
            assert time.monotonic() < deadline, "the model was never asked"
            time.sleep(0.05)
        gateway.kill()
    finally:
        release.set()
    mattermost.user_says(dm, alice, "while it was down", live=False)
    with GatewayProcess(home) as restarted:
        assert mattermost.wait_for_posts(2)[1]["message"] == "Caught up."
        assert say(mattermost, dm, alice, "after the start")["message"] == "Live."
        assert restarted.terminate() == 0
    with GatewayProcess(home) as again:  # caught up: nothing comes again
        time.sleep(2)
        assert again.terminate() == 0
    assert [p["message"] for p in mattermost.posted] == ["First.", "Caught up.", "Live."]
    assert sessions_by_key(home) == {
        f"agent:main:mattermost:dm:{dm}": [
            ["first", "stored then killed", "while it was down", "after the start"]
        ]
    }


def test_a_missing_token_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn, mattermost: MattermostStandIn
) -> None:
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"mattermost": {"url": mattermost.url}})
    gateway = GatewayProcess(home)
    with pytest.raises(AssertionError, match="exited early"):
        gateway.start()
    assert gateway.process is not None and gateway.process.wait(30) == 1
    lines = [line for line in gateway.log_text().splitlines() if "mattermost" in line]
    assert len(lines) == 1 and "gateway.platforms.mattermost.token is not set" in lines[0]


def test_the_mattermost_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    bin_folder = fresh_venv_with(tmp_path, "hermes-platform-mattermost")
    home = tmp_path / "home"
    home.mkdir()
    assert listed_distributions(bin_folder, home) == {"hermes-platform-mattermost"}
    listed = run_hermes(bin_folder, home, "plugins")
    assert listed.returncode == 0 and "platform:mattermost" in listed.stdout
