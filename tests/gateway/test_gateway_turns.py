"""The gateway core answering events: through the turn engine, per-chat ordering, cross-chat
concurrency, chat commands, reset policies with an injectable clock (SPEC G2–G4, G7).

The model is the stand-in OpenAI server over real HTTP, reached by the real provider plugin.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from gateway_helpers import (
    ResetRecorder,
    model_config,
    run,
    running_gateway,
    say,
    title_reply,
    user_texts,
)
from hermes_hookspecs import PlatformEvent
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

HOUR = 3600.0


@pytest.fixture
def standin() -> OpenAIStandIn:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server  # type: ignore[misc]


def test_a_chat_is_one_session_answered_through_the_engine(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="first answer"), Reply(text="second answer"))

    async def scenario() -> None:
        async with running_gateway(tmp_path, model_config(standin), clock=time.time) as gateway:
            one = await say(gateway, "hello")
            two = await say(gateway, "and again")
            assert (one.text, two.text) == ("first answer", "second answer")
            assert one.session_id == two.session_id and one.error is None

    run(scenario())
    with SessionStore.open(tmp_path) as store:
        (session,) = store.select_sessions()
        assert session.source == "webhook" and session.session_key == "agent:main:webhook:dm:chat-1"
        roles = [(m.role, m.content) for m in store.messages(session.id)]
        assert roles == [
            ("user", "hello"),
            ("assistant", "first answer"),
            ("user", "and again"),
            ("assistant", "second answer"),
        ]
    # The model saw the stored history: the second request carries the first exchange.
    turns = [r for r in standin.requests if "short descriptive title" not in str(r)]
    assert [m["content"] for m in turns[1]["messages"] if m["role"] == "user"] == [
        "hello",
        "and again",
    ]


def test_messages_of_one_chat_are_answered_in_order_and_chats_concurrently(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    release = threading.Event()
    # The first request is held mid-answer: chat-1's next message must wait for it, while
    # chat-2 is answered meanwhile.
    standin.add(Reply(text="held answer", hold=release, hold_after_chunks=1))
    standin.add(Reply(text="quick", times=None))

    async def scenario() -> None:
        async with running_gateway(tmp_path, model_config(standin), clock=time.time) as gateway:
            first = gateway.deliver(PlatformEvent("webhook", "chat-1", "one"))
            await first.stored()
            await asyncio.to_thread(standin.wait_for_requests, 1)  # it holds the held reply
            second = gateway.deliver(PlatformEvent("webhook", "chat-1", "two"))
            other = gateway.deliver(PlatformEvent("webhook", "chat-2", "elsewhere"))
            assert (await asyncio.wait_for(other.reply(), 10)).text == "quick"
            # Queued behind chat-1's first turn, but recorded (in the gateway inbox): its
            # platform may be told so now, the answer comes after the first one.
            assert await asyncio.wait_for(second.stored(), 10) == (await first.stored())
            assert not second._reply.done()
            release.set()
            assert (await first.reply()).text == "held answer"
            assert (await second.reply()).text == "quick"

    run(scenario())
    with SessionStore.open(tmp_path) as store:
        by_chat = {s.chat_id: s for s in store.select_sessions()}
        assert user_texts(store.messages(by_chat["chat-1"].id)) == ["one", "two"]
        assert user_texts(store.messages(by_chat["chat-2"].id)) == ["elsewhere"]


def test_a_burst_of_one_chats_messages_behind_a_held_turn_keeps_its_order(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    """Forty messages of one chat arrive while its first turn is held: each is written to the
    inbox on a pool of threads (in any order), yet their turns run, and are stored, in the
    order they arrived."""
    release = threading.Event()
    standin.add(Reply(text="held answer", hold=release, hold_after_chunks=1))
    standin.add(Reply(text="quick", times=None))
    burst = [f"message {n:02d}" for n in range(40)]

    async def scenario() -> None:
        async with running_gateway(tmp_path, model_config(standin), clock=time.time) as gateway:
            first = gateway.deliver(PlatformEvent("webhook", "chat-1", "first"))
            await first.stored()
            await asyncio.to_thread(standin.wait_for_requests, 1)
            deliveries = [
                gateway.deliver(PlatformEvent("webhook", "chat-1", text, message_id=text))
                for text in burst
            ]
            for delivery in deliveries:
                await asyncio.wait_for(delivery.stored(), 30)
            release.set()
            for delivery in deliveries:
                assert (await asyncio.wait_for(delivery.reply(), 60)).text == "quick"

    run(scenario())
    with SessionStore.open(tmp_path) as store:
        (session,) = store.select_sessions()
        assert user_texts(store.messages(session.id)) == ["first", *burst]


def test_group_users_are_isolated_by_default_and_share_a_room_when_asked(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="ok", times=None))

    async def talk(home: Path, **config: object) -> set[str | None]:
        async with running_gateway(home, model_config(standin, **config), clock=time.time) as gw:
            alice = await say(gw, "hi from alice", chat_type="group", user_id="alice")
            bob = await say(gw, "hi from bob", chat_type="group", user_id="bob")
            return {alice.session_id, bob.session_id}

    assert len(run(talk(tmp_path / "isolated"))) == 2
    assert len(run(talk(tmp_path / "shared", group_sessions_per_user=False))) == 1


def test_new_reset_title_sethome_and_branch_are_answered_by_the_gateway(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="ok", times=None))

    async def scenario() -> None:
        async with running_gateway(tmp_path, model_config(standin), clock=time.time) as gateway:
            first = await say(gateway, "hello")
            shown = await say(gateway, "/title")
            assert shown.command and shown.session_id == first.session_id
            named = await say(gateway, "/title release planning")
            assert named.text == "✓ Title set: release planning"
            fresh = await say(gateway, "/new sprint 12")
            assert fresh.command and fresh.session_id != first.session_id
            after = await say(gateway, "in the new one")
            assert after.session_id == fresh.session_id
            home = await say(gateway, "/sethome")
            assert "home channel of webhook" in home.text
            branched = await say(gateway, "/branch")
            assert branched.session_id not in {fresh.session_id, None}
            in_branch = await say(gateway, "in the branch")
            assert in_branch.session_id == branched.session_id
            reset = await say(gateway, "/reset")
            assert reset.session_id not in {branched.session_id, fresh.session_id}
            taken = await say(gateway, "/new release planning")
            assert taken.error and "already used" in taken.error

    run(scenario())
    with SessionStore.open(tmp_path) as store:
        sessions = {s.id: s for s in store.select_sessions()}
        by_title = {s.title: s for s in sessions.values() if s.title}
        first = by_title["release planning"]
        assert first.end_reason == "new_session"
        sprint = by_title["sprint 12"]
        assert sprint.parent_session_id == first.id and sprint.parent_kind == "reset"
        branch = next(s for s in sessions.values() if s.parent_kind == "branch")
        assert branch.parent_session_id == sprint.id
        assert branch.session_key == sprint.session_key  # the branch carries the chat
        assert user_texts(store.messages(branch.id)) == ["in the new one", "in the branch"]
        assert user_texts(store.messages(sprint.id)) == ["in the new one"]
        assert store.get_session(branch.id).end_reason == "reset"
        from hermes_core.store.routed_sessions import RoutingStore

        assert RoutingStore(store).home("webhook") == ("chat-1", None)


def test_stop_interrupts_the_turn_in_progress(tmp_path: Path, standin: OpenAIStandIn) -> None:
    hold = threading.Event()
    standin.add(Reply(text="a long answer that never ends", hold=hold, hold_after_chunks=1))

    async def scenario() -> None:
        async with running_gateway(tmp_path, model_config(standin), clock=time.time) as gateway:
            turn = gateway.deliver(
                PlatformEvent("webhook", "chat-1", "tell me everything", stream_answer=True)
            )
            await turn.stored()
            pieces = turn.text_deltas()
            await asyncio.wait_for(pieces.__anext__(), 10)  # it is streaming
            stop = await say(gateway, "/stop")
            assert stop.command
            reply = await asyncio.wait_for(turn.reply(), 10)
            hold.set()
            assert reply.error is None

    run(scenario())
    with SessionStore.open(tmp_path) as store:
        (session,) = store.select_sessions()
        answer = store.messages(session.id)[-1]
        assert answer.role == "assistant" and answer.content.endswith("[interrupted]")


def test_stop_interrupts_an_answer_asked_in_one_piece(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    """An adapter that sends the answer whole has the model asked for it in one piece; /stop
    still ends the turn at once (nothing of the answer had arrived, so none is stored)."""
    hold = threading.Event()
    standin.add(Reply(text="a long answer never sent", hold=hold))
    standin.add(Reply(text="next answer", times=None))

    async def scenario() -> None:
        async with running_gateway(tmp_path, model_config(standin), clock=time.time) as gateway:
            turn = gateway.deliver(PlatformEvent("webhook", "chat-1", "tell me everything"))
            await turn.stored()
            (asked,) = await asyncio.to_thread(standin.wait_for_requests, 1)
            assert "stream" not in asked
            stop = await say(gateway, "/stop")
            assert stop.command
            reply = await asyncio.wait_for(turn.reply(), 10)
            hold.set()
            assert (reply.text, reply.error) == ("", None)
            assert (await say(gateway, "go on")).text == "next answer"

    run(scenario())
    with SessionStore.open(tmp_path) as store:
        (session,) = store.select_sessions()
        assert [(m.role, m.content) for m in store.messages(session.id)] == [
            ("user", "tell me everything"), ("user", "go on"), ("assistant", "next answer"),
        ]  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "gap_hours", "expect_reset"),
    [
        ("none", 100.0, False),
        ("idle", 0.5, False),
        ("idle", 2.0, True),
        ("daily", 2.0, True),  # crosses the 4 o'clock boundary below
        ("daily", 0.5, False),
        ("both", 2.0, True),
    ],
)
def test_reset_policies_follow_the_clock(
    tmp_path: Path, standin: OpenAIStandIn, mode: str, gap_hours: float, expect_reset: bool
) -> None:
    standin.add(Reply(text="ok", times=None))
    # 03:00 local today; the daily boundary is at 04:00.
    start = time.mktime((*time.localtime()[:3], 3, 0, 0, 0, 0, -1))
    now = [start]
    recorder = ResetRecorder()
    config = model_config(
        standin,
        **{
            "session_reset.mode": mode,
            "session_reset.idle_minutes": 60,
            "session_reset.daily_hour": 4,
        },
    )
    if mode == "daily" and not expect_reset:
        now[0] = start + 1.5 * HOUR  # 04:30, then 05:00: no boundary crossed

    async def scenario() -> tuple[str | None, str | None]:
        async with running_gateway(
            tmp_path, config, clock=lambda: now[0], plugins=[("recorder", recorder)]
        ) as gateway:
            before = await say(gateway, "remember: the deploy key is in vault")
            now[0] += gap_hours * HOUR
            after = await say(gateway, "next morning")
            return before.session_id, after.session_id

    before, after = run(scenario())
    assert (before != after) is expect_reset
    assert bool(recorder.calls) is expect_reset
    if expect_reset:
        session, messages = recorder.calls[0]
        assert session.id == before
        assert "remember: the deploy key is in vault" in user_texts(messages)
        with SessionStore.open(tmp_path) as store:
            old = store.get_session(str(before))
            assert old.end_reason == "reset"
            new = store.get_session(str(after))
            assert new.parent_session_id == before and new.parent_kind == "reset"
            assert user_texts(store.messages(new.id)) == ["next morning"]


def test_a_busy_session_is_never_reset(tmp_path: Path, standin: OpenAIStandIn) -> None:
    from hermes_core.gateway.policy import ResetPolicy

    policy = ResetPolicy(mode="both", idle_minutes=1)
    assert policy.due(0.0, 10 * HOUR) == "idle"
    assert policy.due(0.0, 10 * HOUR, busy=True) is None
    standin.add(Reply(text="ok", times=None))
    now = [1_000_000.0]

    async def scenario() -> None:
        config = model_config(
            standin, **{"session_reset.mode": "idle", "session_reset.idle_minutes": 1}
        )
        async with running_gateway(tmp_path, config, clock=lambda: now[0]) as gateway:
            first = await say(gateway, "hello")
            assert first.session_id is not None
            # A turn of this session in flight (another key reaches it, a background job).
            gateway.worker.in_flight.begin(first.session_id)
            now[0] += 3 * HOUR
            second = await say(gateway, "still there?")
            assert second.session_id == first.session_id
            gateway.worker.in_flight.end(first.session_id)

    run(scenario())


def test_a_model_that_is_down_keeps_the_user_turn_and_answers_one_line(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply.failure(503, times=None, message="upstream overloaded"))

    async def scenario() -> None:
        async with running_gateway(tmp_path, model_config(standin), clock=time.time) as gateway:
            reply = await say(gateway, "are you there?")
            assert reply.error and "\n" not in reply.error
            assert reply.session_id is not None

    run(scenario())
    with SessionStore.open(tmp_path) as store:
        (session,) = store.select_sessions()
        assert user_texts(store.messages(session.id)) == ["are you there?"]


def test_a_stopping_gateway_refuses_new_events_and_finishes_those_in_flight(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    from hermes_hookspecs import DeliveryRefused

    release = threading.Event()
    standin.add(Reply(text="finished", hold=release, hold_after_chunks=1))

    async def scenario() -> None:
        async with running_gateway(tmp_path, model_config(standin), clock=time.time) as gateway:
            turn = gateway.deliver(PlatformEvent("webhook", "chat-1", "long one"))
            await turn.stored()
            stopping = asyncio.create_task(gateway.stop())
            await asyncio.sleep(0.2)
            late = gateway.deliver(PlatformEvent("webhook", "chat-2", "too late"))
            with pytest.raises(DeliveryRefused):
                await late.stored()
            assert not stopping.done()
            release.set()
            await stopping
            assert (await turn.reply()).text == "finished"

    run(scenario())
