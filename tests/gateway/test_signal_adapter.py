"""The signal adapter over real HTTP against the signal-cli daemon stand-in: settings checks,
an unreachable daemon, DMs and groups and their keys, replays of the stream taken once, a
broken stream reopened from where it was, a store that refuses, long answers, and the
position kept for the next start."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_hookspecs import GatewayReply, PlatformEvent, UserFacingError
from hermes_hookspecs.adapter_kit import STATE_FOLDER, CursorFile
from hermes_platform_signal.adapter import CURSOR, SignalAdapter
from hermes_platform_signal.daemon import MAX_MESSAGE_CHARS
from standins.signal_cli_rpc import SignalStandIn

from hermes_core.gateway.delivery import EventDelivery
from hermes_core.gateway.runner import unknown_platform


@pytest.fixture
def signal() -> Any:
    with SignalStandIn(keep_alive_seconds=0.2) as server:
        yield server


class ScriptedGateway:
    """The gateway's side of the contract (the core's own :class:`EventDelivery`): a text in
    ``refusals`` is refused that many times as a full disk would; the others are stored and
    answered ``answer: <text>`` (or ``answers[text]``)."""

    def __init__(self, refusals: dict[str, int] | None = None, **answers: str) -> None:
        self.refusals = refusals or {}
        self.answers = answers
        self.delivered: list[PlatformEvent] = []

    def deliver(self, event: PlatformEvent) -> EventDelivery:
        delivery = EventDelivery(asyncio.get_running_loop())
        self.delivered.append(event)
        if self.refusals.get(event.text, 0) > 0:
            self.refusals[event.text] -= 1
            delivery._refuse("the store refused the write: disk full")
        else:
            answer = self.answers.get(event.text, f"answer: {event.text}")
            delivery.finish(GatewayReply(text=answer, session_id="s1"))
        return delivery


def run_adapter(
    signal: SignalStandIn, gateway: ScriptedGateway, until: Callable[[], None], **settings: Any
) -> None:
    async def run() -> None:
        adapter = SignalAdapter()
        await adapter.start({"url": signal.url, "account": signal.account, **settings},
                            gateway.deliver)  # fmt: skip
        try:
            await asyncio.to_thread(until)
        finally:
            await adapter.stop()

    asyncio.run(run())


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_missing_url_is_one_line_and_an_unreachable_daemon_too() -> None:
    with pytest.raises(UserFacingError, match=r"^gateway\.platforms\.signal\.url is not set"):
        SignalAdapter().connect({"account": "+1555"})
    assert unknown_platform("signal", {}) == "unknown platform (pip install hermes-platform-signal)"

    async def start() -> None:
        await SignalAdapter().start({"url": "http://127.0.0.1:9"}, ScriptedGateway().deliver)

    with pytest.raises(UserFacingError, match=r"^cannot reach signal-cli at http://127\.0\.0\.1:9"):
        asyncio.run(start())


def test_dms_and_groups_are_answered_where_they_came_from(signal: SignalStandIn) -> None:
    alice, bob = signal.person("Alice", "+15551110001"), signal.person("Bob", "+15551110002")
    gateway = ScriptedGateway()

    def chats() -> None:
        wait_until(lambda: signal.streams_opened() == 1)
        signal.user_says(alice, "hello")
        signal.user_says(bob, "in the group", group_id="R3JvdXBPbmU=")
        signal.wait_for_sent(2)

    run_adapter(signal, gateway, chats)
    dm, group = gateway.delivered
    assert (dm.chat_type, dm.chat_id, dm.user_id, dm.user_name) == (
        "dm", alice["uuid"], alice["uuid"], "Alice",
    )  # fmt: skip
    assert (group.chat_type, group.chat_id, group.user_id) == ("group", "R3JvdXBPbmU=", bob["uuid"])
    first, second = signal.sent
    assert first["recipient"] == [alice["uuid"]] and first["message"] == "answer: hello"
    assert second["groupId"] == "R3JvdXBPbmU=" and "recipient" not in second
    adapter = SignalAdapter()
    assert adapter.session_key("dm", alice["uuid"], alice["uuid"], None) == (
        f"agent:main:signal:dm:{alice['uuid']}"
    )
    assert adapter.session_key("group", "R3JvdXBPbmU=", bob["uuid"], None) == (
        f"agent:main:signal:group:R3JvdXBPbmU=:{bob['uuid']}"
    )


def test_a_broken_stream_is_reopened_from_the_last_event_and_replays_are_taken_once(
    signal: SignalStandIn,
) -> None:
    alice = signal.person("Alice", "+15551110001")
    gateway = ScriptedGateway()

    def broken() -> None:
        wait_until(lambda: signal.streams_opened() == 1)
        signal.user_says(alice, "before the break")
        signal.wait_for_sent(1)
        signal.drop_streams()
        signal.user_says(alice, "during the break")  # kept by the daemon, replayed
        wait_until(lambda: signal.streams_opened() == 2)
        signal.wait_for_sent(2)
        envelope = signal.user_says(alice, "sent twice")
        signal.wait_for_sent(3)
        signal.emit({"envelope": envelope, "account": signal.account})  # the same message again
        signal.user_says(alice, "last")
        signal.wait_for_sent(4)

    run_adapter(signal, gateway, broken)
    assert signal.stream_requests == [None, "1"]
    assert [e.text for e in gateway.delivered] == [
        "before the break", "during the break", "sent twice", "last",
    ]  # fmt: skip
    assert [m["message"] for m in signal.sent] == [
        "answer: before the break", "answer: during the break", "answer: sent twice",
        "answer: last",
    ]  # fmt: skip


def test_the_position_is_kept_for_the_next_start(signal: SignalStandIn, tmp_path: Path) -> None:
    alice = signal.person("Alice", "+15551110001")
    state = {STATE_FOLDER: str(tmp_path / "state")}
    gateway = ScriptedGateway()

    def first_run() -> None:
        wait_until(lambda: signal.streams_opened() == 1)
        signal.user_says(alice, "one")
        signal.wait_for_sent(1)

    run_adapter(signal, gateway, first_run, **state)
    assert CursorFile(tmp_path / "state" / "cursors.json").get(CURSOR) == "1"
    signal.user_says(alice, "while down")

    def second_run() -> None:
        signal.wait_for_sent(2)

    run_adapter(signal, gateway, second_run, **state)
    assert signal.stream_requests == [None, "1"]
    assert [e.text for e in gateway.delivered] == ["one", "while down"]


def test_a_refused_message_is_tried_again_and_a_long_answer_goes_in_pieces(
    signal: SignalStandIn,
) -> None:
    alice = signal.person("Alice", "+15551110001")
    text = ("line of text\n" * 400).strip()  # 5,199 characters: three messages
    gateway = ScriptedGateway({"first": 1}, first=text)

    def retried() -> None:
        wait_until(lambda: signal.streams_opened() == 1)
        signal.user_says(alice, "first")
        signal.wait_for_sent(3)

    run_adapter(signal, gateway, retried)
    assert [e.text for e in gateway.delivered] == ["first", "first"]
    pieces = [m["message"] for m in signal.sent]
    assert len(pieces) == 3 and all(len(p) <= MAX_MESSAGE_CHARS for p in pieces)
    assert "".join(pieces) == text


def test_receipts_and_own_messages_are_skipped_and_the_position_moves_past_them(
    signal: SignalStandIn, tmp_path: Path
) -> None:
    alice = signal.person("Alice", "+15551110001")
    own = signal.person("Me", signal.account)
    gateway = ScriptedGateway()

    def skipped() -> None:
        wait_until(lambda: signal.streams_opened() == 1)
        receipt = {"source": alice["number"], "sourceNumber": alice["number"],
                   "sourceUuid": alice["uuid"], "timestamp": 1,
                   "receiptMessage": {"when": 1, "isDelivery": True, "timestamps": [1]}}  # fmt: skip
        signal.emit({"envelope": receipt, "account": signal.account})
        signal.user_says(own, "my own message")
        signal.user_says(alice, "a real one")
        signal.wait_for_sent(1)

    run_adapter(signal, gateway, skipped, **{STATE_FOLDER: str(tmp_path)})
    assert [e.text for e in gateway.delivered] == ["a real one"]
    assert CursorFile(tmp_path / "cursors.json").get(CURSOR) == "3"
