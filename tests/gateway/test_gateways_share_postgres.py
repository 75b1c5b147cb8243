"""Several gateways on one PostgreSQL database (docs/gateway.md; issue 25 item 5): two real
``hermes gateway run`` processes, separate homes, one ``store.url``, each serving the
api-server. A hundred conversations, driven through the official ``openai`` SDK, send their
turns to the two gateways in turn; half-way one gateway is killed with SIGKILL and the other
takes every turn from then on.

What must hold: every conversation is one session; every turn a gateway acknowledged (HTTP
200 with the answer) is stored exactly once, in the order it was sent; a turn that was not
acknowledged (in flight to the gateway when it died) is stored at most once; nothing else is
stored."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import openai
import pytest
from gateway_helpers import title_reply, user_texts
from gateway_process import API_KEY, GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url

pytestmark = pytest.mark.slow

CONVERSATIONS = 100
TURNS = 6
CLIENTS = 8
"""Conversations talking at once (each one's turns go one after the other)."""


@dataclass
class Conversation:
    """What one client sent and which of its turns were acknowledged."""

    name: str
    sent: list[str] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)
    sessions: set[str] = field(default_factory=set)


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        server.add(Reply(text="noted", times=None))
        yield server


def api_server_home(path: Path, standin: OpenAIStandIn, store_url: str) -> Path:
    write_config(
        path,
        standin.base_url,
        {"api-server": {"api_key": API_KEY, "port": 0, "model_name": "hermes-agent"}},
        store={"url": store_url},
    )
    return path


def test_two_gateways_share_one_database_and_one_survives_the_others_kill_9(
    tmp_path: Path, standin: OpenAIStandIn, postgres_url: str
) -> None:
    homes = [api_server_home(tmp_path / f"home-{n}", standin, postgres_url) for n in (1, 2)]
    conversations = [Conversation(f"conversation-{n:03d}") for n in range(CONVERSATIONS)]
    total_turns = CONVERSATIONS * TURNS
    acknowledged = threading.Semaphore(0)
    killed = threading.Event()
    with GatewayProcess(homes[0]) as first, GatewayProcess(homes[1]) as second:
        gateways = [first, second]
        clients = [
            openai.OpenAI(base_url=g.addresses["api-server"], api_key=API_KEY, max_retries=0)
            for g in gateways
        ]

        def talk(index: int) -> None:
            conversation = conversations[index]
            for turn in range(TURNS):
                target = (index + turn) % 2
                if killed.is_set():
                    target = 1  # the first gateway is gone: the second takes every turn
                text = f"{conversation.name} turn {turn}"
                conversation.sent.append(text)
                try:
                    raw = clients[target].chat.completions.with_raw_response.create(
                        model="hermes-agent",
                        messages=[{"role": "user", "content": text}],
                        extra_headers={"X-Hermes-Conversation": conversation.name},
                        timeout=60,
                    )
                except (openai.APIConnectionError, openai.APIStatusError):
                    assert target == 0 and killed.is_set(), f"{text} failed on a live gateway"
                    continue
                answer = raw.parse()
                assert answer.choices[0].message.content == "noted", answer
                conversation.acknowledged.append(text)
                conversation.sessions.add(raw.headers["x-hermes-session"])
                acknowledged.release()

        def kill_half_way() -> None:
            for _ in range(total_turns // 2):
                acknowledged.acquire()
            killed.set()
            first.kill()  # SIGKILL while the clients keep talking

        with ThreadPoolExecutor(CLIENTS + 1) as pool:
            killer = pool.submit(kill_half_way)
            for done in pool.map(talk, range(CONVERSATIONS)):
                assert done is None
            killer.result(timeout=60)
        assert first.process is not None and first.process.returncode == -9
        assert second.terminate() == 0
        assert "Traceback" not in second.log_text()

    store = open_url(postgres_url, host=PluginHost())
    try:
        sessions = [s for s in store.select_sessions() if s.source == "api-server"]
        by_chat: dict[str, list[str]] = {}
        for session in sessions:
            by_chat.setdefault(str(session.chat_id), []).append(session.id)
        assert sorted(by_chat) == sorted(c.name for c in conversations)
        unacknowledged = 0
        for conversation in conversations:
            [session_id] = by_chat[conversation.name]  # one session per conversation
            assert conversation.sessions <= {session_id}
            stored = user_texts(store.messages(session_id))
            assert len(stored) == len(set(stored)), f"a turn stored twice: {stored}"
            assert set(stored) <= set(conversation.sent), stored
            in_order = [text for text in stored if text in conversation.acknowledged]
            assert in_order == conversation.acknowledged, (stored, conversation.acknowledged)
            assert stored == [text for text in conversation.sent if text in stored]
            unacknowledged += len(conversation.sent) - len(conversation.acknowledged)
        acknowledged_turns = sum(len(c.acknowledged) for c in conversations)
        # Only turns in flight to the killed gateway can lack their answer: one per client.
        assert unacknowledged <= CLIENTS and acknowledged_turns >= total_turns - CLIENTS
        assert {r.session_id for r in store.routing.routes()} == {
            ids[0] for ids in by_chat.values()
        }
    finally:
        store.close()
