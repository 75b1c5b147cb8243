"""What the process tests of the platform plugins do the same way around a real ``hermes
gateway run`` (:mod:`gateway_process`): the model stand-in they start from, the sessions a
platform stored, a gateway that must refuse to start with one line, a busy chat (a first turn
held, the model already in it), and the plugin installed alone in a fresh virtualenv."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fresh_venv import fresh_venv_with, listed_distributions, run_hermes
from gateway_helpers import title_reply, user_texts
from gateway_process import GatewayProcess
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore


@contextlib.contextmanager
def model_standin() -> Iterator[OpenAIStandIn]:
    """The model stand-in, answering every automatic-title request (so the replies a test
    adds go to its turns)."""
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


def sessions_by_key(home: Path, source: str) -> dict[str, list[str]]:
    """The user messages of each session of ``source`` in the home's store, by session key."""
    with SessionStore.open(home) as store:
        return {
            str(s.session_key): user_texts(store.messages(s.id))
            for s in store.select_sessions()
            if s.source == source
        }


def refused_to_start(home: Path, platform: str) -> str:
    """Start the gateway of ``home``, which must exit 1 without a traceback, its log saying
    one line about ``platform``; that line."""
    gateway = GatewayProcess(home)
    with pytest.raises(AssertionError, match="exited early"):
        gateway.start()
    assert gateway.process is not None and gateway.process.wait(30) == 1
    log = gateway.log_text()
    assert "Traceback" not in log
    lines = [line for line in log.splitlines() if platform in line]
    assert len(lines) == 1, lines
    return lines[0]


def hold_first_turn(standin: OpenAIStandIn) -> threading.Event:
    """A busy chat scripted: the turn of a message saying ``first`` answers ``Slow answer.``,
    held after its first chunk until the returned event is set; one saying ``second``
    answers ``Second answer.``."""
    release = threading.Event()
    standin.add(
        Reply(text="Slow answer.", match="first", hold=release, hold_after_chunks=1),
        Reply(text="Second answer.", match="second"),
    )
    return release


def wait_until_asked(standin: OpenAIStandIn, text: str, timeout: float = 30.0) -> None:
    """Wait until the model has been asked a turn whose messages hold ``text``."""
    deadline = time.monotonic() + timeout
    while not any(text in str(body["messages"]) for body in standin.requests):
        assert time.monotonic() < deadline, "the model was never asked"
        time.sleep(0.05)


def assert_installed_alone(tmp_path: Path, distribution: str, component: str) -> None:
    """``distribution`` installed alone in a fresh virtualenv: the only plugin ``hermes
    plugins`` finds, and it lists ``component`` (``platform:<name>``)."""
    bin_folder = fresh_venv_with(tmp_path, distribution)
    home = tmp_path / "home"
    home.mkdir()
    assert listed_distributions(bin_folder, home) == {distribution}
    listed = run_hermes(bin_folder, home, "plugins")
    assert listed.returncode == 0 and component in listed.stdout
