"""A full disk while the gateway records an incoming message in its inbox, end to end: the
installed ``hermes gateway run`` with the telegram plugin (Bot API stand-in, model stand-in,
real HTTP), its home on a small tmpfs that the test fills.

The message is not acknowledged (Telegram keeps the update: its offset does not move past
it), however long the disk stays full — it is never skipped as a message that cannot be
stored; the gateway says so in one log line and goes on; once there is room again the update
comes back and is answered, once."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from disks import SmallDisk
from gateway_helpers import TITLE_MATCH, user_texts
from gateway_process import GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply
from standins.telegram_api import TelegramStandIn

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow

FULL_FOR = 10.0
"""Seconds the disk stays full: past three refusals of the same update (1 s, 2 s, 4 s)."""


@pytest.fixture
def telegram() -> Iterator[TelegramStandIn]:
    with TelegramStandIn() as server:
        yield server


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        time.sleep(0.05)


def asked(standin: OpenAIStandIn, text: str) -> int:
    return sum(
        1
        for body in standin.requests
        if text in str(body.get("messages", [])[-1:]) and TITLE_MATCH not in str(body)
    )


def test_a_message_arriving_on_a_full_disk_waits_unacknowledged_and_is_answered_once_after(
    small_disk: SmallDisk, tmp_path: Path, telegram: TelegramStandIn
) -> None:
    home = small_disk.mount / "home"
    with OpenAIStandIn() as standin:
        standin.add(Reply(text="A chat", match=TITLE_MATCH, times=None))
        standin.add(
            Reply(text="answer one", match="before the disk filled"),
            Reply(text="answer two", match="while the disk was full", times=None),
        )
        settings = {
            "token": telegram.token,
            "base_url": telegram.base_url,
            "base_file_url": telegram.base_file_url,
            "poll_timeout_seconds": 1,
        }
        write_config(home, standin.base_url, {"telegram": settings})
        alice = telegram.user("Alice")
        dm = telegram.private_chat(alice)
        gateway = GatewayProcess(home, log_folder=tmp_path).start()
        try:
            telegram.user_says(dm, alice, "before the disk filled")
            assert telegram.wait_for_sent(1)[0]["text"] == "answer one"
            # The automatic title is written before the disk fills (its own log line else).
            wait_until(lambda: any(TITLE_MATCH in str(b) for b in standin.requests), "titled")
            time.sleep(1)
            small_disk.fill()
            telegram.user_says(dm, alice, "while the disk was full")
            full_since = time.monotonic()
            while time.monotonic() - full_since < FULL_FOR:
                assert telegram.pending_updates() == 1, "acknowledged on a full disk"
                assert gateway.process is not None and gateway.process.poll() is None
                time.sleep(0.2)
            assert len(telegram.sent) == 1 and asked(standin, "while the disk was full") == 0
            small_disk.free()
            assert telegram.wait_for_sent(2)[1]["text"] == "answer two"
            wait_until(lambda: telegram.pending_updates() == 0, "the update confirmed")
            time.sleep(2)  # a second answer would come now
            assert gateway.terminate() == 0
        finally:
            if gateway.process is not None and gateway.process.poll() is None:
                gateway.process.kill()
                gateway.process.wait(30)
    log = gateway.log_text()
    assert "Traceback" not in log, log
    about_the_disk = [line for line in log.splitlines() if "is full" in line]
    assert len(about_the_disk) == 1 and "takes no writes" in about_the_disk[0], log
    assert "skipped" not in log, log
    assert [m["text"] for m in telegram.sent] == ["answer one", "answer two"]
    assert asked(standin, "while the disk was full") == 1
    with SessionStore.open(home) as store:
        (session,) = store.select_sessions()
        assert user_texts(store.messages(session.id)) == [
            "before the disk filled",
            "while the disk was full",
        ]
        assert store.routing.inbox_pending() == []
