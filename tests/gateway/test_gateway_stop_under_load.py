"""Stopping a real ``hermes gateway run`` (SIGTERM, SIGINT) while clients misbehave: the turn in
flight is answered, requests arriving meanwhile get 503 with ``Retry-After``, a body kept
half-sent or a huge declared ``Content-Length`` never hold the stop, and the log says each
thing in one line (no tracebacks)."""

from __future__ import annotations

import signal
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import openai
import pytest
from gateway_helpers import title_reply
from gateway_process import API_KEY, GatewayProcess, webhook_settings, write_config
from standins.openai_server import OpenAIStandIn, Reply

from hermes_core.store import SessionStore

pytestmark = pytest.mark.slow


def _connect(address: str) -> socket.socket:
    parts = urlsplit(address)
    assert parts.hostname == "127.0.0.1" and parts.port is not None
    return socket.create_connection((parts.hostname, parts.port), timeout=30)


def _head(path: str, length: int | str, extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {API_KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n{extra}\r\n"
    ).encode()


def _status(connection: socket.socket) -> int:
    first = connection.recv(65536).split(b"\r\n", 1)[0]
    return int(first.split()[1])


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_under_load_answers_the_turn_in_flight_and_exits_whatever_clients_do(
    tmp_path: Path, stop_signal: signal.Signals
) -> None:
    home = tmp_path / "home"
    release = threading.Event()
    with OpenAIStandIn() as standin:
        standin.add(title_reply())
        standin.add(Reply(text="the held answer", hold=release, hold_after_chunks=1))
        write_config(
            home,
            standin.base_url,
            {"api-server": {"api_key": API_KEY, "port": 0}, "webhook": webhook_settings()},
        )
        with GatewayProcess(home) as gateway:
            api = gateway.addresses["api-server"]
            client = openai.OpenAI(base_url=api, api_key=API_KEY, max_retries=0, timeout=60)
            answers: list[str] = []

            def ask() -> None:
                answer = client.chat.completions.create(
                    model="hermes",
                    messages=[{"role": "user", "content": "a turn in flight"}],
                    extra_headers={"X-Hermes-Conversation": "in-flight"},
                )
                answers.append(answer.choices[0].message.content or "")

            asking = threading.Thread(target=ask)
            asking.start()
            standin.wait_for_requests(1)  # the turn is stored and the model is answering
            # A client that sends half its body and keeps the connection open.
            half = _connect(api)
            half.sendall(_head("/v1/chat/completions", 1000) + b'{"messages": [')
            # A body declaring 99999999999 bytes is refused at once, webhook and api-server.
            for address, path in (
                (api, "/v1/chat/completions"),
                (gateway.addresses["webhook"], "/webhook"),
            ):
                huge = _connect(address)
                huge.sendall(_head(path, 99999999999) + b"{}")
                assert _status(huge) == 413
                huge.close()
            # A malformed HTTP request.
            garbage = _connect(api)
            garbage.sendall(b"NOT HTTP AT ALL\x01\r\n\r\n")
            garbage.recv(65536)
            garbage.close()

            assert gateway.process is not None
            gateway.process.send_signal(stop_signal)
            stopped_at = time.monotonic()
            while "stopping" not in gateway.log_text():
                assert time.monotonic() < stopped_at + 20, gateway.log_text()
                time.sleep(0.02)
            # Meanwhile, a new request is told to come back.
            refused_status, retry_after = 0, None
            try:
                client.chat.completions.create(
                    model="hermes",
                    messages=[{"role": "user", "content": "arriving while it stops"}],
                    extra_headers={"X-Hermes-Conversation": "late"},
                )
            except openai.APIStatusError as error:
                refused_status = error.status_code
                retry_after = error.response.headers.get("retry-after")
            assert refused_status == 503 and retry_after is not None and int(retry_after) > 0
            release.set()
            asking.join(30)
            code = gateway.process.wait(30)
            took = time.monotonic() - stopped_at
            half.close()
    assert code == 0
    assert answers == ["the held answer"]
    assert took < 15, f"the stop took {took:.1f} s"  # it waited for the clients: 60 s
    log = gateway.log_text()
    assert "Traceback" not in log and "ConnectionResetError" not in log, log
    lines = log.splitlines()
    assert all(line.startswith("hermes gateway: ") for line in lines), log
    assert sum("413" in line for line in lines) == 2
    assert sum("503" in line for line in lines) >= 1
    with SessionStore.open(home) as store:
        texts = [
            m.content
            for s in store.select_sessions()
            for m in store.messages(s.id)
            if m.role == "user"
        ]
    assert "a turn in flight" in texts and "arriving while it stops" not in texts


def test_a_malformed_http_request_is_one_log_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with OpenAIStandIn() as standin:
        write_config(home, standin.base_url, {"api-server": {"api_key": API_KEY, "port": 0}})
        with GatewayProcess(home) as gateway:
            for request in (
                b"NOT HTTP AT ALL\x01\r\n\r\n",
                b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n",
                _head("/v1/chat/completions", 2, "Transfer-Encoding: chunked\r\n") + b"{}",
            ):
                connection = _connect(gateway.addresses["api-server"])
                connection.sendall(request)
                assert _status(connection) == 400
                connection.close()
            assert gateway.terminate() == 0
    log = gateway.log_text()
    assert "Traceback" not in log, log
    assert all(line.startswith("hermes gateway: ") for line in log.splitlines()), log
    told = [line for line in log.splitlines() if "Error handling request" in line]
    assert 1 <= len(told) <= 3 and all("400" in line for line in told), log
