"""End to end on every store backend (SQLite file, PostgreSQL database): the installed
``hermes gateway run`` over real HTTP on 127.0.0.1 with the stand-in model — a conversation
and its continuity across a restart, two gateways racing for one new chat, a re-sent message
id, and ``hermes sessions repair-routing`` (SPEC G4–G6; issue 14 item 5)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from gateway_helpers import title_reply, user_texts
from gateway_process import GatewayProcess, run_hermes, send_signed, webhook_settings, write_config
from hermes_hookspecs import Message
from hermes_store_postgres.testing import cluster_or_skip, fresh_database
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import open_url
from hermes_core.store.protocol import Store
from hermes_core.store.routed_sessions import RouteOrigin

pytestmark = pytest.mark.slow


@pytest.fixture(params=("sqlite", "postgresql"))
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """One store shared by every Hermes home of the test: a SQLite file outside the homes,
    or a fresh PostgreSQL database of the throwaway cluster."""
    if request.param == "sqlite":
        (tmp_path / "shared").mkdir()
        yield f"sqlite:///{tmp_path / 'shared' / 'state.db'}"
        return
    cluster = cluster_or_skip()
    with fresh_database(cluster) as name:
        yield cluster.url(name)


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        server.add(Reply(text="noted", times=None))
        yield server


def gateway_home(path: Path, standin: OpenAIStandIn, store_url: str) -> Path:
    """A Hermes home whose gateway serves the webhook on a free port, on ``store_url``."""
    write_config(path, standin.base_url, {"webhook": webhook_settings()}, store={"url": store_url})
    return path


def open_shared(store_url: str) -> Store:
    return open_url(store_url, host=PluginHost())


def webhook_sessions(store: Store) -> list[Any]:
    return [s for s in store.select_sessions() if s.source == "webhook"]


def test_a_conversation_continues_its_session_after_kill_9_and_restart(
    tmp_path: Path, standin: OpenAIStandIn, store_url: str
) -> None:
    home = gateway_home(tmp_path / "home", standin, store_url)
    chat = {"chat_id": "c1", "user_id": "u1"}
    with GatewayProcess(home) as gateway:
        status, first = send_signed(gateway.addresses["webhook"], {**chat, "text": "first"})
        assert status == 200 and first["reply"] == "noted", first
        status_out = run_hermes(home, "gateway", "status")
        assert status_out.returncode == 0, status_out.stderr
        assert "Routed chats: 1 (webhook: 1)" in status_out.stdout
        gateway.kill()  # kill -9: no clean stop
    with GatewayProcess(home) as gateway:
        status, second = send_signed(gateway.addresses["webhook"], {**chat, "text": "second"})
        assert status == 200 and second["session_id"] == first["session_id"], second
        assert gateway.terminate() == 0
    store = open_shared(store_url)
    try:
        [session] = webhook_sessions(store)
        assert session.id == first["session_id"]
        assert user_texts(store.messages(session.id)) == ["first", "second"]
    finally:
        store.close()


def test_two_gateways_on_one_store_route_a_new_chat_to_one_session(
    tmp_path: Path, standin: OpenAIStandIn, store_url: str
) -> None:
    homes = [gateway_home(tmp_path / f"home-{n}", standin, store_url) for n in (1, 2)]
    with GatewayProcess(homes[0]) as one, GatewayProcess(homes[1]) as two:
        urls = [one.addresses["webhook"], two.addresses["webhook"]]
        assert urls[0] != urls[1]
        texts = [f"hello {n}" for n in range(6)]
        barrier = threading.Barrier(len(texts))

        def send(index: int) -> dict[str, Any]:
            payload = {"chat_id": "race", "user_id": "u1", "text": texts[index]}
            barrier.wait()
            status, answer = send_signed(urls[index % 2], payload)
            assert status == 200, answer
            return answer

        with ThreadPoolExecutor(len(texts)) as pool:
            answers = list(pool.map(send, range(len(texts))))
        assert one.terminate() == 0 and two.terminate() == 0
    assert len({a["session_id"] for a in answers}) == 1, answers
    store = open_shared(store_url)
    try:
        [session] = webhook_sessions(store)
        assert sorted(user_texts(store.messages(session.id))) == sorted(texts)
        assert [r.session_id for r in store.routing.routes()] == [session.id]
    finally:
        store.close()


def test_a_re_sent_message_id_is_stored_once(
    tmp_path: Path, standin: OpenAIStandIn, store_url: str
) -> None:
    home = gateway_home(tmp_path / "home", standin, store_url)
    event = {"chat_id": "dup", "user_id": "u1", "text": "only once", "message_id": "m-1"}
    with GatewayProcess(home) as gateway:
        url = gateway.addresses["webhook"]
        status, first = send_signed(url, event)
        assert status == 200 and first["reply"] == "noted", first
        resent = int(time.time()) - 5  # signed anew, as a platform re-sending it would
        status, again = send_signed(url, event, timestamp=resent)
        assert status == 200 and again["session_id"] == first["session_id"], again
        assert again["reply"] == "This message was already received." and again["command"]
        status, other = send_signed(url, {**event, "message_id": "m-2", "text": "next"})
        assert status == 200 and other["reply"] == "noted", other
        fresh = {**event, "message_id": "m-3", "text": "/new"}
        status, started = send_signed(url, fresh)
        assert status == 200 and started["session_id"] != first["session_id"], started
        status, repeated = send_signed(url, fresh, timestamp=resent - 5)
        assert status == 200 and repeated["session_id"] == started["session_id"], repeated
        assert gateway.terminate() == 0
    store = open_shared(store_url)
    try:
        sessions = {s.id: s for s in webhook_sessions(store)}
        assert set(sessions) == {first["session_id"], started["session_id"]}
        assert user_texts(store.messages(first["session_id"])) == ["only once", "next"]
    finally:
        store.close()


def test_repair_routing_reports_and_applies_on_the_configured_store(
    tmp_path: Path, standin: OpenAIStandIn, store_url: str
) -> None:
    home = gateway_home(tmp_path / "home", standin, store_url)
    key = "agent:main:webhook:dm:c7"
    origin = RouteOrigin(platform="webhook", chat_id="c7", chat_type="dm", user_id="u7")
    store = open_shared(store_url)
    try:
        now = time.time()
        donor = store.routing.create_routed_session(key, origin, now=now - 600)
        store.append_message(donor.id, Message(role="user", content="a", timestamp=now - 590))
        orphan = store.create_session("webhook", started_at=now - 500, user_id="u7")
        store.append_message(orphan.id, Message(role="user", content="b", timestamp=now - 490))
    finally:
        store.close()
    report = run_hermes(home, "sessions", "repair-routing")
    assert report.returncode == 0, report.stderr
    assert f"→ adopt into {key} (from {donor.id}, evidence: contiguity" in report.stdout
    assert "1 orphan(s): 1 repairable, 0 left alone." in report.stdout
    applied = run_hermes(home, "sessions", "repair-routing", "--apply")
    assert applied.returncode == 0, applied.stderr
    if store_url.startswith("postgresql"):
        assert "No file backup" in applied.stdout and "pg_dump" in applied.stdout
    else:
        assert "Backup written to" in applied.stdout
    assert f"✓ {orphan.id} adopted; {donor.id} retired (superseded_by_repair)" in applied.stdout
    store = open_shared(store_url)
    try:
        assert store.get_session(donor.id).end_reason == "superseded_by_repair"
        route = store.routing.route(key)
        assert route is not None and route.session_id == orphan.id
    finally:
        store.close()
