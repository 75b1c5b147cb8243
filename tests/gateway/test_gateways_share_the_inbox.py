"""Several gateways on one store share its inbox, and each row is answered once.

End to end: a real ``hermes gateway run`` with the telegram plugin (Bot API stand-in, model
stand-in, real HTTP) acknowledges messages from its inbox while its one worker waits on a
held model, and is killed (``kill -9``). Then two gateways — separate homes, one
``store.url``: a shared ``state.db`` file, or one PostgreSQL database — start at the same
moment. While they start, the test holds the store's messages back (SQLite: a ``BEGIN
IMMEDIATE`` write transaction; PostgreSQL: ``LOCK TABLE messages IN EXCLUSIVE MODE``), so both
have read the inbox before either stores a turn — the widest the race can be. Every pending
message must be stored once and answered once; the inbox is left empty, its claims too.

Also: a row another gateway claimed — on another machine, so its holder cannot be looked at
— is answered once that claim runs out.
"""

from __future__ import annotations

import collections
import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from gateway_helpers import TITLE_MATCH, title_reply, user_texts
from gateway_process import GatewayProcess, write_config
from standins.openai_server import OpenAIStandIn, Reply
from standins.telegram_api import TelegramStandIn

from hermes_core.plugins import PluginHost
from hermes_core.store.backends import SQLITE_SCHEME, open_url, sqlite_path, url_scheme
from hermes_core.store.inbox import CLAIM_PREFIX, InboxClaim, claim_key
from hermes_core.store.protocol import Store

pytestmark = pytest.mark.slow

PEOPLE = ("bob", "carol", "dave", "erin", "frank", "grace")
RUNNING = "platform telegram is running"


@pytest.fixture
def standin() -> Iterator[OpenAIStandIn]:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server


@pytest.fixture
def telegram() -> Iterator[TelegramStandIn]:
    with TelegramStandIn() as server:
        yield server


def configure(
    home: Path, standin: OpenAIStandIn, telegram: TelegramStandIn, url: str, **gateway: Any
) -> None:
    settings = {
        "token": telegram.token,
        "base_url": telegram.base_url,
        "base_file_url": telegram.base_file_url,
        "poll_timeout_seconds": 2,
    }
    write_config(home, standin.base_url, {"telegram": settings}, store={"url": url}, **gateway)


@contextlib.contextmanager
def opened(url: str) -> Iterator[Store]:
    store = open_url(url, host=PluginHost())
    try:
        yield store
    finally:
        store.close()


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        time.sleep(0.05)


def pending(url: str) -> int:
    with opened(url) as store:
        return len(store.routing.inbox_pending())


def asked(standin: OpenAIStandIn, text: str) -> int:
    """How many model requests asked to answer ``text`` (title requests aside)."""
    count = 0
    for body in standin.requests:
        turns = [m for m in body.get("messages", []) if m.get("role") == "user"]
        if turns and text in str(turns[-1].get("content")) and TITLE_MATCH not in str(body):
            count += 1
    return count


@contextlib.contextmanager
def messages_held_back(url: str) -> Iterator[None]:
    """No process stores a message while this is open (reading goes on)."""
    if url_scheme(url) == SQLITE_SCHEME:
        connection = sqlite3.connect(sqlite_path(url), isolation_level=None)
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            connection.execute("COMMIT")
            connection.close()
        return
    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE messages IN EXCLUSIVE MODE")
        yield
        holder.commit()


def leave_acknowledged_rows(
    tmp_path: Path, url: str, standin: OpenAIStandIn, telegram: TelegramStandIn
) -> None:
    """A gateway with one worker, held by alice's model, acknowledges everyone's message from
    its inbox, and is killed: one row per person is left."""
    home = tmp_path / "first"
    configure(home, standin, telegram, url, workers=1)
    alice = telegram.user("Alice")
    release = threading.Event()
    standin.add(Reply(text="never finished", match="alice holds", hold=release))
    try:
        with GatewayProcess(home) as gateway:
            telegram.user_says(telegram.private_chat(alice), alice, "alice holds")
            wait_until(lambda: asked(standin, "alice holds") == 1, "alice's turn is held")
            for name in PEOPLE:
                person = telegram.user(name.title())
                telegram.user_says(telegram.private_chat(person), person, f"{name} says hi")
            wait_until(lambda: telegram.pending_updates() == 0, "every update confirmed")
            wait_until(lambda: pending(url) == len(PEOPLE), "every message in the inbox")
            gateway.kill()
    finally:
        release.set()
    assert telegram.sent == []


def test_two_gateways_starting_together_answer_each_pending_message_once(
    tmp_path: Path, standin: OpenAIStandIn, telegram: TelegramStandIn, backend_url: str
) -> None:
    url = backend_url
    leave_acknowledged_rows(tmp_path, url, standin, telegram)
    for name in PEOPLE:
        standin.add(Reply(text=f"answer for {name}", match=f"{name} says hi", times=None))
    homes = [tmp_path / "second", tmp_path / "third"]
    for home in homes:
        configure(home, standin, telegram, url)
    gateways = [GatewayProcess(home) for home in homes]
    failures: list[BaseException] = []

    def start(gateway: GatewayProcess) -> None:
        try:
            gateway.start(timeout=120)  # on SQLite it waits for the held store to start
        except BaseException as error:  # reported by the test's thread
            failures.append(error)

    try:
        with messages_held_back(url):
            starting = [threading.Thread(target=start, args=(g,)) for g in gateways]
            for thread in starting:
                thread.start()
            # Both have read the inbox (or wait to claim from it: SQLite) and queued what
            # they took before a turn is stored.
            with contextlib.suppress(AssertionError):
                wait_until(
                    lambda: all(g.log.exists() and RUNNING in g.log_text() for g in gateways),
                    "both gateways run",
                    30,
                )
                time.sleep(3)  # and their turns wait to store the user's message
        for thread in starting:
            thread.join(90)
        assert not failures, failures
        wait_until(lambda: pending(url) == 0, "every row turned", 60)
        telegram.wait_for_sent(len(PEOPLE))
        time.sleep(3)  # a second answer would come now
        for gateway in gateways:
            assert gateway.terminate() == 0
    finally:
        for gateway in gateways:
            gateway.__exit__()
    for gateway in gateways:
        assert "Traceback" not in gateway.log_text()
    sent = collections.Counter(message["text"] for message in telegram.sent)
    assert sent == collections.Counter(f"answer for {name}" for name in PEOPLE), sent
    assert {name: asked(standin, f"{name} says hi") for name in PEOPLE} == dict.fromkeys(PEOPLE, 1)
    with opened(url) as store:
        stored = collections.Counter(
            text
            for session in store.select_sessions()
            for text in user_texts(store.messages(session.id))
        )
        assert store.routing.inbox_pending() == []
        assert store.list_state(CLAIM_PREFIX) == {}
    assert stored == collections.Counter(["alice holds", *(f"{n} says hi" for n in PEOPLE)])


def test_a_row_claimed_on_another_machine_is_answered_once_its_claim_runs_out(
    tmp_path: Path, standin: OpenAIStandIn, telegram: TelegramStandIn, backend_url: str
) -> None:
    url = backend_url
    leave_acknowledged_rows(tmp_path, url, standin, telegram)
    for name in PEOPLE:
        standin.add(Reply(text=f"answer for {name}", match=f"{name} says hi", times=None))
    with opened(url) as store:
        rows = store.routing.inbox_pending()
        # The first row (bob's, most often: the rows of a busy gateway are written by a pool
        # of threads, in any order) is taken by a gateway elsewhere that said nothing since.
        held = rows[0]
        (name,) = [person for person in PEOPLE if f"{person} says hi" in held.event]
        until, runs_out = time.time() + 15, time.monotonic() + 15
        claim = InboxClaim("elsewhere.example/4242/feedc0ffee00", until)
        store.write_state({claim_key(held.id): claim.text})
    home = tmp_path / "second"
    configure(home, standin, telegram, url)
    with GatewayProcess(home) as gateway:
        telegram.wait_for_sent(len(PEOPLE))
        time.sleep(2)
        assert gateway.terminate() == 0
    (sent_at,) = [
        moment for moment, params in telegram.calls_of("sendMessage") if name in params["text"]
    ]
    assert sent_at >= runs_out, "answered while another gateway held it"
    assert "Traceback" not in gateway.log_text()
    assert len(telegram.sent) == len(PEOPLE)
    assert asked(standin, f"{name} says hi") == 1
    assert pending(url) == 0
