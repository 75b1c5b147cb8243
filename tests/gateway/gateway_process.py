"""A real ``hermes gateway run`` subprocess (the installed entry point) for end-to-end tests,
plus signed webhook requests and a callback receiver, all over real HTTP on 127.0.0.1."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml
from installed_hermes import hermes_command

SECRET = "webhook-test-secret"
API_KEY = "api-server-test-key"


def write_config(
    home: Path,
    model_url: str,
    platforms: dict[str, Any],
    *,
    gateway_write_sessions_json: bool = True,
    workers: int | None = None,
    **extra: Any,
) -> None:
    """config.yaml with the model at ``model_url`` and these ``gateway.platforms`` (and
    ``gateway.workers`` when given)."""
    home.mkdir(parents=True, exist_ok=True)
    document: dict[str, Any] = {
        "model": {
            "provider": "openai",
            "base_url": model_url,
            "name": "standin-model",
            "max_retries": 0,
            "timeout_seconds": 20,
        },
        "gateway": {
            "platforms": platforms,
            "write_sessions_json": gateway_write_sessions_json,
        },
        **extra,
    }
    if workers is not None:
        document["gateway"]["workers"] = workers
    (home / "config.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")


def webhook_settings(**settings: object) -> dict[str, object]:
    """``gateway.platforms.webhook`` for tests: the test secret, a free port."""
    return {"secret": SECRET, "port": 0, "max_body_bytes": 2048, **settings}


def run_hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``hermes`` with ``HERMES_HOME=home``."""
    return subprocess.run(
        [hermes_command(), *args], env=environment(home), capture_output=True, text=True, timeout=60
    )


def environment(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"HERMES_HOME": str(home), "OPENAI_API_KEY": "sk-test"})
    env.pop("HERMES_PLUGINS", None)
    return env


class GatewayProcess:
    """``hermes gateway run`` in a subprocess; stderr goes to ``log`` (in the home, or in
    ``log_folder`` when the home's disk is made to fail)."""

    def __init__(self, home: Path, *, log_folder: Path | None = None) -> None:
        self.home = home
        self.log = (log_folder or home) / f"gateway-{time.monotonic_ns()}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.addresses: dict[str, str] = {}

    def start(self, timeout: float = 60.0) -> GatewayProcess:
        """Start it and wait until it says (in status.json) that its platforms run."""
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [hermes_command(), "gateway", "run"],
                env=environment(self.home),
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        status = self.home / "gateway" / "status.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the gateway exited early: {self.log_text()}")
            try:
                data = json.loads(status.read_text(encoding="utf-8"))
            except (FileNotFoundError, ValueError):
                time.sleep(0.05)
                continue
            if data.get("pid") == self.process.pid:
                self.addresses = {
                    p["name"]: p["address"] for p in data["platforms"] if p.get("address")
                }
                return self
            time.sleep(0.05)
        self.kill()
        raise AssertionError(f"the gateway did not start in {timeout}s: {self.log_text()}")

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def terminate(self, timeout: float = 60.0) -> int:
        """SIGTERM, then wait for it to stop by itself."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill(self) -> None:
        """kill -9, and make sure it really died of it."""
        assert self.process is not None
        self.process.kill()
        code = self.process.wait(30)
        assert code == -signal.SIGKILL, f"the gateway was not killed (exit {code})"

    def __enter__(self) -> GatewayProcess:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


def sign(body: bytes, timestamp: str, secret: str = SECRET) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


def post(
    url: str, body: bytes, headers: dict[str, str], timeout: float = 60.0
) -> tuple[int, dict[str, Any]]:
    """POST and return (status, JSON body) whatever the status."""
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json", **headers}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def send_signed(
    url: str, payload: dict[str, Any], *, timestamp: int | None = None, **kwargs: Any
) -> tuple[int, dict[str, Any]]:
    """A correctly signed webhook request (signed now, or at ``timestamp``: a platform
    re-sending a message signs it anew, so the replay check does not refuse it)."""
    body = json.dumps(payload).encode()
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    headers = {"X-Hermes-Timestamp": stamp, "X-Hermes-Signature": sign(body, stamp)}
    return post(url, body, headers, **kwargs)


class CallbackReceiver:
    """Collects the replies the webhook POSTs to its callback URL."""

    def __init__(self) -> None:
        received: list[tuple[dict[str, str], dict[str, Any]]] = []
        condition = threading.Condition()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with condition:
                    received.append((dict(self.headers), json.loads(body)))
                    condition.notify_all()
                self.send_response(204)
                self.end_headers()

        self.received = received
        self._condition = condition
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/replies"

    def wait_for(self, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self._condition:
            while len(self.received) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.received)} callbacks, not {count}")
                self._condition.wait(left)
            return [body for _, body in self.received]

    def __enter__(self) -> CallbackReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
