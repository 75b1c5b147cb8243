"""A REAL Synapse homeserver for the Matrix tests, on 127.0.0.1, plus a small client-server
API client (stdlib HTTP) that plays the human users.

Synapse is not a dependency of the project: it pulls in Twisted and some sixty packages the
project never imports, and its pins would fight the workspace's lock. It is installed once,
with ``uv``, into a throwaway virtual environment cached under
``$XDG_CACHE_HOME/hermes-tests/`` (``~/.cache`` by default), keyed by the Synapse version and the
Python version; installing takes about 15 seconds from PyPI, later runs reuse it. When it cannot
be installed the tests skip with the reason — except with ``CI=true``, where they fail.

Each server gets a generated config (``--generate-config``) edited for tests: one HTTP listener
on 127.0.0.1 with a free port serving the client API only (no federation listener, no trusted
key servers, an empty federation whitelist), SQLite in the temporary folder, no public
registration (users are created with the registration shared secret, through the admin API
``register_new_matrix_user`` uses), presence and URL previews off, rate limits raised.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

SYNAPSE_VERSION = "1.163.2"
"""The pinned ``matrix-synapse`` release the tests run against."""

SERVER_NAME = "localhost"
RELAXED = {"per_second": 1000, "burst_count": 1000}


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hermes-tests"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"Synapse is required on CI but {reason}")
    pytest.skip(f"no local Synapse homeserver: {reason}")


def synapse_python() -> Path:
    """The Python of the cached Synapse venv, installing it first when needed."""
    tag = f"synapse-{SYNAPSE_VERSION}-py{sys.version_info.major}.{sys.version_info.minor}"
    venv = _cache_root() / tag
    python = venv / "bin" / "python"
    if (venv / ".complete").exists() and python.exists():
        return python
    uv = shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if uv is None:
        _unavailable("uv is not installed to create its virtual environment")
    assert uv is not None
    building = venv.with_name(f"{tag}.building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    building.parent.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    steps = (
        [uv, "venv", "-q", "--python", sys.executable, str(building)],
        [uv, "pip", "install", "-q", "--python", str(building / "bin" / "python"),
         f"matrix-synapse=={SYNAPSE_VERSION}"],
    )  # fmt: skip
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=900, env=env)
        except subprocess.TimeoutExpired:
            shutil.rmtree(building, ignore_errors=True)
            _unavailable(f"installing matrix-synapse=={SYNAPSE_VERSION} took over 15 minutes")
            raise
        if done.returncode != 0:
            shutil.rmtree(building, ignore_errors=True)
            last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
            _unavailable(f"matrix-synapse=={SYNAPSE_VERSION} could not be installed: {last}")
    # The venv's scripts name their own folder, so it is built where it will live: a rename of
    # the finished folder is atomic and another process racing us keeps its own copy.
    (building / ".complete").write_text(SYNAPSE_VERSION, encoding="utf-8")
    if not (venv / ".complete").exists():
        shutil.rmtree(venv, ignore_errors=True)
        try:
            os.rename(building, venv)
        except OSError:
            shutil.rmtree(building, ignore_errors=True)
    if not (venv / ".complete").exists():  # pragma: no cover - another process won oddly
        return building / "bin" / "python"
    shutil.rmtree(building, ignore_errors=True)
    return python


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def request(
    method: str,
    url: str,
    body: dict[str, Any] | None = None,
    token: str | None = None,
    timeout: float = 30.0,
) -> tuple[int, dict[str, Any]]:
    """One JSON request; (status, JSON body) whatever the status."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    call = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(call, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


class Synapse:
    """One Synapse process serving ``base_url``; ``with Synapse(folder) as server: ...``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.python = synapse_python()
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.config_path = folder / "homeserver.yaml"
        self.log_path = folder / "synapse-stderr.log"
        self.process: subprocess.Popen[bytes] | None = None

    def _configure(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        generated = subprocess.run(
            [str(self.python), "-m", "synapse.app.homeserver", "--generate-config",
             "--server-name", SERVER_NAME, "--config-path", str(self.config_path),
             "--data-directory", str(self.folder), "--report-stats=no"],
            capture_output=True, text=True, timeout=300, cwd=self.folder,
        )  # fmt: skip
        assert generated.returncode == 0, generated.stderr
        config = yaml.safe_load(self.config_path.read_text(encoding="utf-8"))
        config.update(
            {
                "listeners": [
                    {
                        "port": self.port,
                        "bind_addresses": ["127.0.0.1"],
                        "type": "http",
                        "tls": False,
                        "x_forwarded": False,
                        "resources": [{"names": ["client"], "compress": False}],
                    }
                ],
                "database": {
                    "name": "sqlite3",
                    "args": {"database": str(self.folder / "homeserver.db")},
                },
                "enable_registration": False,
                "federation_domain_whitelist": [],
                "trusted_key_servers": [],
                "suppress_key_server_warning": True,
                "report_stats": False,
                "url_preview_enabled": False,
                "presence": {"enabled": False},
                "rc_message": RELAXED,
                "rc_registration": RELAXED,
                "rc_login": {"address": RELAXED, "account": RELAXED, "failed_attempts": RELAXED},
                "rc_joins": {"local": RELAXED, "remote": RELAXED},
                "rc_joins_per_room": RELAXED,
                "rc_invites": {"per_room": RELAXED, "per_user": RELAXED, "per_issuer": RELAXED},
                "rc_admin_redaction": RELAXED,
            }
        )
        self.config_path.write_text(yaml.safe_dump(config), encoding="utf-8")

    def start(self, timeout: float = 180.0) -> Synapse:
        """Generate the config, start Synapse and wait for ``/_matrix/client/versions``."""
        self._configure()
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [str(self.python), "-m", "synapse.app.homeserver", "-c", str(self.config_path)],
                stdout=log, stderr=subprocess.STDOUT, cwd=self.folder,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"Synapse exited early: {self.log_text()[-3000:]}")
            try:
                status, _ = request("GET", f"{self.base_url}/_matrix/client/versions", timeout=2)
            except OSError:
                status = 0
            if status == 200:
                return self
            time.sleep(0.2)
        self.stop()
        raise AssertionError(f"Synapse did not answer in {timeout}s: {self.log_text()[-3000:]}")

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it lingers."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)

    def register(self, localpart: str, password: str) -> str:
        """Create a user through Synapse's shared-secret registration admin API (what
        ``register_new_matrix_user`` does, without starting a Python per user); its user id."""
        secret = yaml.safe_load(self.config_path.read_text(encoding="utf-8"))[
            "registration_shared_secret"
        ]
        url = f"{self.base_url}/_synapse/admin/v1/register"
        status, answer = request("GET", url)
        assert status == 200, answer
        nonce = str(answer["nonce"])
        message = "\0".join([nonce, localpart, password, "notadmin"]).encode()
        mac = hmac.new(str(secret).encode(), message, hashlib.sha1).hexdigest()
        body = {"nonce": nonce, "username": localpart, "password": password, "admin": False,
                "mac": mac}  # fmt: skip
        status, answer = request("POST", url, body)
        assert status == 200, answer
        return str(answer["user_id"])

    def new_user(self, prefix: str) -> MatrixUser:
        """A freshly registered, logged-in user."""
        localpart = f"{prefix}{secrets.token_hex(3)}"
        password = secrets.token_urlsafe(12)
        user_id = self.register(localpart, password)
        return MatrixUser.login(self.base_url, user_id, password)

    def __enter__(self) -> Synapse:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@dataclass
class MatrixUser:
    """A human on the homeserver, over the client-server API (what a Matrix app does)."""

    base_url: str
    user_id: str
    password: str
    token: str
    _transactions: int = field(default=0)

    @classmethod
    def login(cls, base_url: str, user_id: str, password: str) -> MatrixUser:
        """Log in with a password."""
        status, body = request(
            "POST",
            f"{base_url}/_matrix/client/v3/login",
            {
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": user_id},
                "password": password,
            },
        )
        assert status == 200, body
        return cls(base_url, user_id, password, str(body["access_token"]))

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        status, answer = request(
            method, f"{self.base_url}/_matrix/client/v3{path}", body, self.token
        )
        assert status == 200, f"{method} {path}: HTTP {status} {answer}"
        return answer

    def create_room(self, invite: list[str], *, direct: bool = False, name: str = "") -> str:
        """A private room with ``invite`` invited; its room id."""
        body: dict[str, Any] = {"invite": invite, "is_direct": direct, "preset": "private_chat"}
        if name:
            body["name"] = name
        return str(self.call("POST", "/createRoom", body)["room_id"])

    def join(self, room_id: str) -> None:
        self.call("POST", f"/join/{urllib.parse.quote(room_id)}", {})

    def send(self, room_id: str, text: str, *, thread_root: str | None = None) -> str:
        """Send a text message (in a thread when ``thread_root`` is given); its event id."""
        self._transactions += 1
        content: dict[str, Any] = {"msgtype": "m.text", "body": text}
        if thread_root is not None:
            content["m.relates_to"] = {"rel_type": "m.thread", "event_id": thread_root}
        txn = f"t{time.monotonic_ns()}-{self._transactions}"
        path = f"/rooms/{urllib.parse.quote(room_id)}/send/m.room.message/{txn}"
        return str(self.call("PUT", path, content)["event_id"])

    def members(self, room_id: str) -> set[str]:
        answer = self.call("GET", f"/rooms/{urllib.parse.quote(room_id)}/joined_members")
        return set(answer["joined"])

    def events(self, room_id: str) -> list[dict[str, Any]]:
        """The room's message events, oldest first (up to the last 200)."""
        query = urllib.parse.urlencode({"dir": "b", "limit": 200})
        answer = self.call("GET", f"/rooms/{urllib.parse.quote(room_id)}/messages?{query}")
        found = [e for e in answer["chunk"] if e.get("type") == "m.room.message"]
        return list(reversed(found))

    def messages_from(self, room_id: str, sender: str) -> list[BotMessage]:
        """``sender``'s messages in the room as a reader sees them: each edit (``m.replace``)
        applied to the message it replaces, edits themselves not listed."""
        shown: dict[str, BotMessage] = {}
        order: list[str] = []
        for event in self.events(room_id):
            if event["sender"] != sender:
                continue
            content = event.get("content", {})
            relation = content.get("m.relates_to") or {}
            if relation.get("rel_type") == "m.replace":
                original = shown.get(str(relation.get("event_id")))
                if original is not None:
                    original.text = str(content.get("m.new_content", {}).get("body", ""))
                    original.edits += 1
                continue
            thread = relation.get("event_id") if relation.get("rel_type") == "m.thread" else None
            reply_to = (relation.get("m.in_reply_to") or {}).get("event_id")
            shown[event["event_id"]] = BotMessage(
                event["event_id"], str(content.get("body", "")), thread, reply_to
            )
            order.append(event["event_id"])
        return [shown[event_id] for event_id in order]

    def wait_for_messages(
        self, room_id: str, sender: str, count: int, timeout: float = 90.0
    ) -> list[BotMessage]:
        """Until ``sender`` has at least ``count`` messages in the room and the last one stopped
        changing (its streamed edits are over); those messages."""
        deadline = time.monotonic() + timeout
        seen: list[BotMessage] = []
        while time.monotonic() < deadline:
            seen = self.messages_from(room_id, sender)
            if len(seen) >= count:
                time.sleep(1.5)
                again = self.messages_from(room_id, sender)
                if [m.text for m in again] == [m.text for m in seen]:
                    return again
                continue
            time.sleep(0.2)
        raise AssertionError(f"{len(seen)} messages from {sender}, not {count}: {seen}")


@dataclass
class BotMessage:
    """One message as a room member sees it."""

    event_id: str
    text: str
    thread_root: str | None
    in_reply_to: str | None
    edits: int = 0
