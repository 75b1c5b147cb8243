"""End to end: the installed ``hermes gateway run`` with the signal plugin reading the event
stream of the signal-cli daemon stand-in and answering through its JSON-RPC, the stand-in
model: a DM with the chat commands and hostile text, a group, a message the daemon sends again,
catch-up after a stop, a ``kill -9`` after the message is stored, a missing URL."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fresh_venv import fresh_venv_with, listed_distributions, run_hermes
from gateway_helpers import title_reply, user_texts
from gateway_process import GatewayProcess, write_config
from hostile_text import PAYLOAD
from standins.openai_server import OpenAIStandIn, Reply
from standins.signal_cli_rpc import SignalStandIn

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

HOSTILE = ["$(rm -rf ~)", "'; DROP TABLE sessions; --", "<script>alert(1)</script>", PAYLOAD]


@pytest.fixture
def standin() -> Any:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def signal() -> Any:
    with SignalStandIn() as server:
        yield server


def platform(signal: SignalStandIn) -> dict[str, Any]:
    return {"signal": {"url": signal.url, "account": signal.account}}


class SignalGateway(GatewayProcess):
    """The gateway, started once its event stream is open."""

    def __init__(self, home: Path, signal: SignalStandIn) -> None:
        super().__init__(home)
        self.signal = signal

    def start(self, timeout: float = 60.0) -> SignalGateway:
        opened = self.signal.streams_opened()
        super().start(timeout)
        deadline = time.monotonic() + 30
        while self.signal.streams_opened() == opened:
            assert time.monotonic() < deadline, "the gateway never opened the event stream"
            time.sleep(0.05)
        return self


def say(signal: SignalStandIn, person: dict[str, str], text: str, **fields: Any) -> str:
    """``person`` writes ``text``; the answer the account sends back."""
    count = len(signal.sent)
    signal.user_says(person, text, **fields)
    return str(signal.wait_for_sent(count + 1)[count]["message"])


def sessions_by_key(home: Path) -> dict[str, list[str]]:
    with SessionStore.open(home) as store:
        return {
            str(s.session_key): user_texts(store.messages(s.id))
            for s in store.select_sessions()
            if s.source == "signal"
        }


def test_a_dm_is_one_session_with_the_chat_commands_and_hostile_text_is_text(
    tmp_path: Path, standin: OpenAIStandIn, signal: SignalStandIn
) -> None:
    standin.add(Reply(text="Hello Alice!"), Reply(text="Fresh."), Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(signal))
    alice = signal.person("Alice", "+15551110001")
    with SignalGateway(home, signal) as gateway:
        assert gateway.addresses["signal"] == signal.url
        assert say(signal, alice, "hi there") == "Hello Alice!"
        assert say(signal, alice, "/title Trip planning") == "✓ Title set: Trip planning"
        assert say(signal, alice, "/new").startswith("✓")
        assert say(signal, alice, "new topic") == "Fresh."
        for text in HOSTILE:
            say(signal, alice, text)
        assert gateway.terminate() == 0
    assert "Traceback" not in gateway.log_text()
    key = f"agent:main:signal:dm:{alice['uuid']}"
    with SessionStore.open(home) as store:
        old, new = sorted(
            (s for s in store.select_sessions() if s.session_key == key),
            key=lambda s: s.started_at,
        )
        assert old.title == "Trip planning" and old.end_reason == "new_session"
        assert user_texts(store.messages(old.id))[0] == "hi there"
        assert user_texts(store.messages(new.id)) == ["new topic", *HOSTILE]
    assert all(m["recipient"] == [alice["uuid"]] for m in signal.sent)


def test_a_group_keeps_its_users_apart(
    tmp_path: Path, standin: OpenAIStandIn, signal: SignalStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(signal))
    alice, bob = signal.person("Alice", "+15551110001"), signal.person("Bob", "+15551110002")
    group = "R3JvdXBPbmU="
    with SignalGateway(home, signal) as gateway:
        say(signal, alice, "alice: my secret is 42", group_id=group)
        say(signal, bob, "bob: hello", group_id=group)
        say(signal, alice, "alice again", group_id=group)
        assert gateway.terminate() == 0
    assert sessions_by_key(home) == {
        f"agent:main:signal:group:{group}:{alice['uuid']}": [
            "alice: my secret is 42",
            "alice again",
        ],
        f"agent:main:signal:group:{group}:{bob['uuid']}": ["bob: hello"],
    }
    assert {m["groupId"] for m in signal.sent} == {group}


def test_what_came_while_down_is_caught_up_and_a_replay_is_answered_once(
    tmp_path: Path, standin: OpenAIStandIn, signal: SignalStandIn
) -> None:
    standin.add(
        Reply(text="Caught up.", match="while it was down"),
        Reply(text="First.", match="hello"),
        Reply(text="Next.", match="next"),
    )
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(signal))
    alice = signal.person("Alice", "+15551110001")
    with SignalGateway(home, signal) as gateway:
        hello = signal.user_says(alice, "hello")
        assert signal.wait_for_sent(1)[0]["message"] == "First."
        assert gateway.terminate() == 0
    signal.user_says(alice, "while it was down")
    signal.emit({"envelope": hello, "account": signal.account})  # the daemon sends it again
    with SignalGateway(home, signal) as gateway:
        assert signal.wait_for_sent(2)[1]["message"] == "Caught up."
        assert say(signal, alice, "next") == "Next."
        assert gateway.terminate() == 0
    assert [m["message"] for m in signal.sent] == ["First.", "Caught up.", "Next."]
    assert signal.stream_requests[1] == "1"  # the position saved by the first run
    assert sessions_by_key(home) == {
        f"agent:main:signal:dm:{alice['uuid']}": ["hello", "while it was down", "next"]
    }


def test_kill_9_after_the_message_is_stored_loses_nothing(
    tmp_path: Path, standin: OpenAIStandIn, signal: SignalStandIn
) -> None:
    # The second turn's request holds the first message as history: its reply comes first.
    standin.add(Reply(text="Back.", match="after the crash"), Reply.hang(30, match="slow"))
    home = tmp_path / "home"
    write_config(home, standin.base_url, platform(signal))
    alice = signal.person("Alice", "+15551110001")
    key = f"agent:main:signal:dm:{alice['uuid']}"
    gateway = SignalGateway(home, signal).start()
    try:
        signal.user_says(alice, "slow question")
        deadline = time.monotonic() + 30
        while key not in sessions_by_key(home):
            assert time.monotonic() < deadline, "never stored"
            time.sleep(0.1)
        gateway.kill()  # mid-answer
    finally:
        gateway.__exit__(None, None, None)
    with SignalGateway(home, signal) as gateway:
        assert say(signal, alice, "after the crash") == "Back."
        assert gateway.terminate() == 0
    assert sessions_by_key(home)[key][:2] == ["slow question", "after the crash"]


def test_a_missing_url_is_one_line_and_the_gateway_does_not_run(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"signal": {"account": "+15550100000"}})
    gateway = GatewayProcess(home)
    with pytest.raises(AssertionError, match="exited early"):
        gateway.start()
    assert gateway.process is not None and gateway.process.wait(30) == 1
    lines = [line for line in gateway.log_text().splitlines() if "signal" in line]
    assert len(lines) == 1 and "gateway.platforms.signal.url is not set" in lines[0]


def test_the_signal_plugin_installed_alone_is_listed(tmp_path: Path) -> None:
    bin_folder = fresh_venv_with(tmp_path, "hermes-platform-signal")
    home = tmp_path / "home"
    home.mkdir()
    assert listed_distributions(bin_folder, home) == {"hermes-platform-signal"}
    listed = run_hermes(bin_folder, home, "plugins")
    assert listed.returncode == 0 and "platform:signal" in listed.stdout
