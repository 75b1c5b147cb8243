"""End to end: the installed ``hermes gateway run`` in a subprocess, the webhook over real HTTP
on 127.0.0.1, the stand-in model; refusals, kill -9 mid-conversation and restart, /new after a
restart, the listing and F1 filters over gateway sessions (SPEC G1–G6, F1, O1)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest
from gateway_helpers import TITLE_MATCH, title_reply, user_texts
from gateway_process import (
    SECRET,
    CallbackReceiver,
    GatewayProcess,
    environment,
    post,
    send_signed,
    sign,
    write_config,
)
from installed_hermes import hermes_command
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [hermes_command(), *args], env=environment(home), capture_output=True, text=True, timeout=60
    )


def wait_for_model_request(standin: OpenAIStandIn, text: str, timeout: float = 60.0) -> None:
    """Until the model was asked to answer ``text`` (not a title request)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for body in standin.requests:
            turns = [m for m in body.get("messages", []) if m.get("role") == "user"]
            if turns and text in str(turns[-1].get("content")) and TITLE_MATCH not in str(body):
                return
        time.sleep(0.05)
    raise AssertionError(f"the model was never asked about {text!r}")


@pytest.fixture
def standin() -> OpenAIStandIn:
    with OpenAIStandIn() as server:
        server.add(title_reply())
        yield server  # type: ignore[misc]


def webhook(**settings: object) -> dict[str, object]:
    return {"secret": SECRET, "port": 0, "max_body_bytes": 2048, **settings}


def test_signed_events_are_answered_and_every_bad_request_is_refused_with_one_line(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="hello back", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"webhook": webhook(), "nosuchplatform": {}})
    with GatewayProcess(home) as gateway:
        url = gateway.addresses["webhook"]
        assert url.startswith("http://127.0.0.1:")
        status, answer = send_signed(url, {"chat_id": "ops", "text": "hi", "user_id": "u1"})
        assert status == 200 and answer["reply"] == "hello back" and answer["error"] is None
        body = json.dumps({"chat_id": "ops", "text": "sneaky"}).encode()
        now = str(int(time.time()))
        refused = {
            "unsigned": post(url, body, {}),
            "bad signature": post(
                url, body, {"X-Hermes-Timestamp": now, "X-Hermes-Signature": sign(body, now, "x")}
            ),
            "stale": post(
                url,
                body,
                {"X-Hermes-Timestamp": "1000", "X-Hermes-Signature": sign(body, "1000")},
            ),
        }
        headers = {"X-Hermes-Timestamp": now, "X-Hermes-Signature": sign(body, now)}
        assert post(url, body, headers)[0] == 200  # genuine…
        refused["replay"] = post(url, body, headers)  # …and the same request again
        for name, (code, payload) in refused.items():
            assert code == 401, name
            assert payload["error"], name
        bad_json = b"{not json"
        assert (
            post(
                url,
                bad_json,
                {"X-Hermes-Timestamp": now, "X-Hermes-Signature": sign(bad_json, now)},
            )[0]
            == 400
        )
        missing = json.dumps({"text": "no chat"}).encode()
        assert (
            post(
                url, missing, {"X-Hermes-Timestamp": now, "X-Hermes-Signature": sign(missing, now)}
            )[0]
            == 400
        )
        huge = json.dumps({"chat_id": "ops", "text": "x" * 5000}).encode()
        assert (
            post(url, huge, {"X-Hermes-Timestamp": now, "X-Hermes-Signature": sign(huge, now)})[0]
            == 413
        )
        status_run = hermes(home, "gateway", "status")
        assert status_run.returncode == 0
        assert "webhook: running at http://127.0.0.1:" in status_run.stdout
        assert "nosuchplatform: not running — unknown platform" in status_run.stdout
        assert gateway.terminate() == 0
    log = gateway.log_text()
    assert "Traceback" not in log
    refusals = [line for line in log.splitlines() if "webhook refused" in line]
    assert len(refusals) == 7  # unsigned, bad signature, stale, replay, bad JSON, missing, huge
    assert any("replayed request" in line for line in refusals)
    assert (
        sum("platform nosuchplatform: unknown platform" in line for line in log.splitlines()) == 1
    )
    with SessionStore.open(home) as store:
        (session,) = store.select_sessions()
        # Only the genuine requests reached the store.
        assert user_texts(store.messages(session.id)) == ["hi", "sneaky"]
    assert hermes(home, "gateway", "status").returncode == 1


def test_a_kill_9_mid_conversation_loses_nothing_acknowledged_and_the_chat_goes_on(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    release = threading.Event()
    with CallbackReceiver() as callbacks:
        write_config(home, standin.base_url, {"webhook": webhook(callback_url=callbacks.url)})
        standin.add(Reply(text="answer one"), Reply(text="answer two"))
        with GatewayProcess(home) as gateway:
            url = gateway.addresses["webhook"]
            for number in (1, 2):
                status, accepted = send_signed(url, {"chat_id": "c1", "text": f"message {number}"})
                assert status == 202 and accepted["accepted"] is True
                callbacks.wait_for(number)
            session_id = accepted["session_id"]
            replies = callbacks.wait_for(2)
            assert [r["reply"] for r in replies] == ["answer one", "answer two"]
            assert {r["session_id"] for r in replies} == {session_id}
            # The third answer is held mid-stream; the message is acknowledged (202), then the
            # gateway dies before it answers.
            standin.add(Reply(text="never finished", hold=release, hold_after_chunks=1))
            status, accepted = send_signed(url, {"chat_id": "c1", "text": "message 3"})
            assert status == 202 and accepted["session_id"] == session_id
            wait_for_model_request(standin, "message 3")  # the held answer is streaming
            gateway.kill()
        release.set()
        dead = hermes(home, "gateway", "status")
        assert dead.returncode == 1 and "ended without stopping cleanly" in dead.stdout
        standin.add(Reply(text="after the restart", times=None))
        with GatewayProcess(home) as restarted:
            status, accepted = send_signed(
                restarted.addresses["webhook"], {"chat_id": "c1", "text": "message 4"}
            )
            assert status == 202 and accepted["session_id"] == session_id
            assert callbacks.wait_for(3)[-1]["reply"] == "after the restart"
            # An intentional /new is a boundary recovery respects after another crash.
            send_signed(
                restarted.addresses["webhook"], {"chat_id": "c1", "text": "/new fresh start"}
            )
            fresh = callbacks.wait_for(4)[-1]
            assert fresh["command"] is True and fresh["session_id"] != session_id
            restarted.kill()
        with GatewayProcess(home) as again:
            status, accepted = send_signed(
                again.addresses["webhook"], {"chat_id": "c1", "text": "message 5"}
            )
            assert status == 202 and accepted["session_id"] == fresh["session_id"]
            callbacks.wait_for(5)
            assert again.terminate() == 0
    with SessionStore.open(home) as store:
        old = store.get_session(session_id)
        assert user_texts(store.messages(old.id)) == [
            "message 1",
            "message 2",
            "message 3",
            "message 4",
        ]
        assert old.end_reason == "new_session"
        new = store.get_session(fresh["session_id"])
        assert new.title == "fresh start" and user_texts(store.messages(new.id)) == ["message 5"]
        assert store.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_gateway_sessions_list_by_source_and_match_the_chat_filters(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    standin.add(Reply(text="noted", times=None))
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"webhook": webhook()})
    with GatewayProcess(home) as gateway:
        url = gateway.addresses["webhook"]
        send_signed(
            url,
            {"chat_id": "room-7", "chat_type": "group", "user_id": "alice", "text": "alice here"},
        )
        send_signed(
            url, {"chat_id": "room-7", "chat_type": "group", "user_id": "bob", "text": "bob here"}
        )
        # /new ends alice's session: F1 bulk filters match ended sessions.
        send_signed(
            url, {"chat_id": "room-7", "chat_type": "group", "user_id": "alice", "text": "/new"}
        )
        assert gateway.terminate() == 0
    listing = hermes(home, "sessions", "list", "--source", "webhook")
    assert listing.returncode == 0
    assert "alice here" in listing.stdout and "bob here" in listing.stdout
    assert hermes(home, "sessions", "list", "--source", "cli").stdout.count("here") == 0
    matched = hermes(
        home,
        "sessions",
        "export",
        "-",
        "--dry-run",
        "--source",
        "webhook",
        "--chat-id",
        "room-7",
        "--chat-type",
        "group",
        "--user",
        "alice",
    )
    assert matched.returncode == 0, matched.stderr
    with SessionStore.open(home) as store:
        alice = next(s for s in store.select_sessions() if s.user_id == "alice" and s.ended_at)
        bob = next(s for s in store.select_sessions() if s.user_id == "bob")
        assert alice.session_key == "agent:main:webhook:group:room-7:alice"
        assert bob.session_key == "agent:main:webhook:group:room-7:bob"
    assert alice.id in matched.stdout and bob.id not in matched.stdout
    mirror = json.loads((home / "sessions" / "sessions.json").read_text(encoding="utf-8"))
    assert set(mirror) == {
        "_README",
        "agent:main:webhook:group:room-7:alice",
        "agent:main:webhook:group:room-7:bob",
    }
    assert mirror["agent:main:webhook:group:room-7:bob"]["session_id"] == bob.id
    nobody = hermes(
        home, "sessions", "export", "-", "--dry-run", "--chat-id", "room-7", "--user", "carol"
    )
    assert alice.id not in nobody.stdout


def test_sigterm_finishes_the_turn_in_flight_before_stopping(
    tmp_path: Path, standin: OpenAIStandIn
) -> None:
    home = tmp_path / "home"
    write_config(home, standin.base_url, {"webhook": webhook()}, gateway_write_sessions_json=False)
    release = threading.Event()
    standin.add(Reply(text="worth the wait", hold=release, hold_after_chunks=1))
    answers: list[tuple[int, dict[str, object]]] = []
    with GatewayProcess(home) as gateway:
        url = gateway.addresses["webhook"]
        sender = threading.Thread(
            target=lambda: answers.append(send_signed(url, {"chat_id": "c9", "text": "slow one"}))
        )
        sender.start()
        wait_for_model_request(standin, "slow one")
        assert gateway.process is not None
        gateway.process.send_signal(15)
        time.sleep(1.0)
        assert gateway.process.poll() is None  # still finishing the turn
        release.set()
        assert gateway.process.wait(60) == 0
        sender.join(30)
    assert answers and answers[0][0] == 200 and answers[0][1]["reply"] == "worth the wait"
    assert "stopping: finishing 1 turn(s) in flight" in gateway.log_text()
    assert not (home / "sessions" / "sessions.json").exists()  # the mirror is switched off
