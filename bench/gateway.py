"""(g) The gateway under load: N concurrent chats × M messages through the webhook on loopback.

A real ``hermes gateway run`` subprocess (the installed entry point) answers signed webhook
requests, with the stand-in OpenAI endpoint of the tests (``tests/standins``) as the model, so
the figures are the gateway's and the store's, not a model's. Each chat sends its messages one
after the other (waiting for each answer, as a chat does); the chats run at once.

Figures: messages acknowledged, lost (acknowledged but not in the store) and mis-routed (in
another chat's session, out of order, or a chat spread over several sessions); the routing +
store overhead per message (p50/p99, from the gateway's debug timing line: resolving the
session key and the reset policy, plus every store write of the turn; the model's time is
not in it) — wall-clock, and the CPU time of the same work on its thread (on a loaded 2-core
machine the wall-clock figure is mostly waiting for the CPU and the GIL); and the client-side
round trip. The second run kills the gateway with SIGKILL
half-way, restarts it on the same port, and lets every chat go on: unacknowledged messages are
sent again with the same ``message_id`` (the gateway must recognise it; one stored twice is
counted as ``resent_stored_twice``, not as a loss) and every chat must continue its own single
session.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SECRET = "bench-secret"
TIMING = re.compile(
    r"timing \S+ routing_ms=([\d.]+) store_ms=([\d.]+) turn_ms=([\d.]+) "
    r"routing_cpu_ms=([\d.]+) store_cpu_ms=([\d.]+)"
)


@dataclass
class LoadResult:
    """What one load run measured."""

    acknowledged: int = 0
    lost: int = 0
    misrouted: int = 0
    resent_stored_twice: int = 0
    killed: bool = False
    seconds: float = 0.0
    round_trips_ms: list[float] = field(default_factory=list)
    overhead_ms: list[float] = field(default_factory=list)
    store_ms: list[float] = field(default_factory=list)
    routing_ms: list[float] = field(default_factory=list)
    overhead_cpu_ms: list[float] = field(default_factory=list)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _hermes() -> str:
    found = shutil.which("hermes", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit("the hermes console script is not installed next to this Python")
    return found


class _Gateway:
    def __init__(self, home: Path, env: dict[str, str]) -> None:
        self.home, self.env = home, env
        self.process: subprocess.Popen[bytes] | None = None
        self.logs: list[Path] = []

    def start(self) -> None:
        log = self.home / f"gateway-{len(self.logs)}.log"
        self.logs.append(log)
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [_hermes(), "gateway", "run"], env=self.env, stdout=subprocess.DEVNULL, stderr=out
            )
        status = self.home / "gateway" / "status.json"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"the gateway exited: {log.read_text()}")
            try:
                if json.loads(status.read_text()).get("pid") == self.process.pid:
                    return
            except (FileNotFoundError, ValueError):
                pass
            time.sleep(0.05)
        raise SystemExit("the gateway did not start")

    def kill(self) -> bool:
        assert self.process is not None
        self.process.kill()
        return self.process.wait(30) == -signal.SIGKILL

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(120)

    def timings(self) -> list[tuple[float, ...]]:
        found = []
        for log in self.logs:
            for match in TIMING.finditer(log.read_text(encoding="utf-8", errors="replace")):
                found.append(tuple(float(match[group]) for group in range(1, 6)))
        return found


def _send(url: str, chat: int, number: int) -> tuple[bool, float]:
    body = json.dumps(
        {
            "chat_id": f"chat-{chat}",
            "text": f"chat {chat} message {number}",
            "message_id": f"chat-{chat}-{number}",  # a re-send after the kill is not stored twice
        }
    )
    data = body.encode()
    stamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), stamp.encode() + b"." + data, hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "X-Hermes-Timestamp": stamp,
            "X-Hermes-Signature": "sha256=" + digest,
        },
    )
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            ok = response.status == 200 and json.loads(response.read()).get("error") is None
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        ok = False
    return ok, (time.perf_counter() - started) * 1000


def run_load(
    workdir: Path,
    chats: int,
    messages: int,
    *,
    kill_midway: bool,
    base_store: Path | None = None,
) -> LoadResult:
    """One load run in a fresh Hermes home under ``workdir``; with ``base_store`` (a
    ``state.db``) the home starts with a copy of it (untimed), so the gateway routes and
    writes on a store of that size."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from standins.openai_server import OpenAIStandIn, Reply

    home = workdir / ("gateway-kill" if kill_midway else "gateway-load")
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    if base_store is not None:
        _copy_store(base_store, home / "state.db")
    port = _free_port()
    result = LoadResult()
    with OpenAIStandIn() as standin:
        standin.add(Reply(text="ok", times=None))
        config = {
            "model": {"provider": "openai", "base_url": standin.base_url, "name": "standin"},
            "gateway": {"platforms": {"webhook": {"secret": SECRET, "port": port}}},
        }
        (home / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
        env = {
            **os.environ,
            "HERMES_HOME": str(home),
            "OPENAI_API_KEY": "sk-bench",
            "HERMES_GATEWAY_LOG_LEVEL": "debug",
        }
        gateway = _Gateway(home, env)
        gateway.start()
        url = f"http://127.0.0.1:{port}/webhook"
        acknowledged: dict[int, list[int]] = {chat: [] for chat in range(chats)}
        resent: set[tuple[int, int]] = set()
        lock = threading.Lock()
        total = chats * messages
        done = [0]
        restarted = threading.Event()
        if not kill_midway:
            restarted.set()

        def chat_loop(chat: int) -> None:
            for number in range(messages):
                while True:
                    ok, elapsed = _send(url, chat, number)
                    if ok:
                        break
                    with lock:
                        resent.add((chat, number))
                    restarted.wait(180)
                    time.sleep(0.2)
                with lock:
                    acknowledged[chat].append(number)
                    result.round_trips_ms.append(elapsed)
                    done[0] += 1

        def killer() -> None:
            while done[0] < total // 2:
                time.sleep(0.01)
            result.killed = gateway.kill()
            gateway.start()
            restarted.set()

        started = time.perf_counter()
        watcher = threading.Thread(target=killer) if kill_midway else None
        if watcher is not None:
            watcher.start()
        with concurrent.futures.ThreadPoolExecutor(max_workers=chats) as pool:
            list(pool.map(chat_loop, range(chats)))
        if watcher is not None:
            watcher.join()
        result.seconds = time.perf_counter() - started
        gateway.stop()
        for routing, store, _turn, routing_cpu, store_cpu in gateway.timings():
            result.routing_ms.append(routing)
            result.store_ms.append(store)
            result.overhead_ms.append(routing + store)
            result.overhead_cpu_ms.append(routing_cpu + store_cpu)
    result.acknowledged = sum(len(numbers) for numbers in acknowledged.values())
    _check_store(home, chats, acknowledged, resent, result)
    return result


def _copy_store(source: Path, target: Path) -> None:
    """A consistent copy of a closed or open SQLite store (the backup API)."""
    import sqlite3

    with (
        contextlib.closing(sqlite3.connect(source)) as src,
        contextlib.closing(sqlite3.connect(target)) as dst,
    ):
        src.backup(dst, pages=65_536)


def _check_store(
    home: Path,
    chats: int,
    acknowledged: dict[int, list[int]],
    resent: set[tuple[int, int]],
    result: LoadResult,
) -> None:
    from hermes_core.store import SessionStore

    with SessionStore.open(home) as store:
        sessions = store.select_sessions()
        by_chat: dict[str, list[Any]] = {}
        for session in sessions:
            by_chat.setdefault(session.chat_id or "", []).append(session)
        for chat in range(chats):
            mine = by_chat.get(f"chat-{chat}", [])
            if len(mine) != 1:
                result.misrouted += 1  # the chat did not stay in one session
            texts = [
                m.content
                for session in mine
                for m in store.iter_messages(session.id)
                if m.role == "user"
            ]
            expected_prefix = f"chat {chat} message "
            numbers = []
            for text in texts:
                if not text.startswith(expected_prefix):
                    result.misrouted += 1
                    continue
                numbers.append(int(text[len(expected_prefix) :]))
            stored = set(numbers)
            result.lost += sum(1 for n in acknowledged[chat] if n not in stored)
            twice = [n for n in stored if numbers.count(n) > 1]
            result.resent_stored_twice += sum(1 for n in twice if (chat, n) in resent)
            result.misrouted += sum(1 for n in twice if (chat, n) not in resent)
            deduplicated = [n for i, n in enumerate(numbers) if n not in numbers[:i]]
            if deduplicated != sorted(deduplicated):
                result.misrouted += 1  # out of order


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# ---------------------------------------------------------------------- (h) direct vs relayed

RELAY_KEY = "bench-relay-key"


@dataclass
class RelayFigures:
    """One load shape measured straight to the model and through the gateway, in one run."""

    name: str
    turns: int
    direct_seconds: float
    relayed_seconds: float
    direct_ms: list[float]
    relayed_ms: list[float]
    failures: int = 0
    gateway_cpu_ms_per_turn: float = 0.0
    """CPU time of the gateway process (all its threads) per relayed turn: unlike the
    rates, it does not depend on how loaded the machine is."""

    @property
    def ratio(self) -> float:
        """Turns per second through the gateway ÷ straight to the model."""
        return self.direct_seconds / self.relayed_seconds if self.relayed_seconds else 0.0


class _StandInProcess:
    """The tests' stand-in model in a process of its own (so the client threads of this
    bench do not share its interpreter lock), answering every turn with ``ok`` and every
    automatic-title request with a title (a real model call, as in use)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.process: subprocess.Popen[bytes] | None = None
        self.base_url = ""

    def __enter__(self) -> _StandInProcess:
        tests = Path(__file__).resolve().parent.parent / "tests"
        script = self.folder / "standin-replies.json"
        script.write_text(json.dumps([{"text": "ok", "times": None}]))
        port_file = self.folder / "standin-port.txt"
        port_file.unlink(missing_ok=True)
        env = {**os.environ, "PYTHONPATH": str(tests)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "standins.openai_server", "--port", "0", "--script",
             str(script), "--port-file", str(port_file), "--title", "Bench chat"],
            env=env, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit("the stand-in model did not start")
            time.sleep(0.05)
        self.base_url = f"http://127.0.0.1:{port_file.read_text().strip()}/v1"
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(30)


def _relay_gateway(home: Path, model_url: str, port: int, env: dict[str, str]) -> _Gateway:
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    config = {
        "model": {
            "provider": "openai", "base_url": model_url, "name": "standin-model",
            "max_retries": 0, "timeout_seconds": 60,
        },
        "gateway": {"platforms": {"api-server": {"api_key": RELAY_KEY, "port": port}}},
    }  # fmt: skip
    (home / "config.yaml").write_text(json.dumps(config))  # JSON is YAML
    gateway = _Gateway(home, {**env, "HERMES_HOME": str(home), "OPENAI_API_KEY": "sk-bench"})
    gateway.start()
    return gateway


def _conversations(
    base_url: str, conversations: int, turns: int, *, label: str
) -> tuple[float, list[float], int]:
    """``conversations`` clients at once, each sending ``turns`` turns one after the other
    through the official SDK (as an OpenAI client does); wall seconds, each turn's ms, and
    the turns that failed."""
    import httpx
    import openai

    limits = httpx.Limits(
        max_connections=conversations + 8, max_keepalive_connections=conversations
    )
    client = openai.OpenAI(
        base_url=base_url,
        api_key=RELAY_KEY,
        max_retries=0,
        timeout=120,
        http_client=httpx.Client(limits=limits, timeout=120),
    )
    times: list[float] = []
    failures = [0]
    lock = threading.Lock()
    barrier = threading.Barrier(conversations + 1)

    def conversation(number: int) -> None:
        headers = {"X-Hermes-Conversation": f"{label}-{number}"}
        barrier.wait()
        for turn in range(turns):
            started = time.perf_counter()
            try:
                answer = client.chat.completions.create(
                    model="standin-model",
                    messages=[{"role": "user", "content": f"{label} {number} turn {turn}"}],
                    extra_headers=headers,
                )
                ok = answer.choices[0].message.content == "ok"
            except openai.OpenAIError:
                ok = False
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                times.append(elapsed)
                failures[0] += 0 if ok else 1

    threads = [threading.Thread(target=conversation, args=(n,)) for n in range(conversations)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    client.close()
    return seconds, times, failures[0]


def run_relay(
    workdir: Path, shapes: list[tuple[str, int, int]], *, warm_up: int = 20
) -> list[RelayFigures]:
    """Each shape (name, conversations, turns each) straight to the stand-in model, then
    through a real ``hermes gateway run`` (api-server) to the same stand-in, one after the
    other in one run. A fresh gateway home per shape, so every shape starts new conversations
    (and their automatic titles)."""
    folder = workdir / "gateway-relay"
    folder.mkdir(parents=True, exist_ok=True)
    found: list[RelayFigures] = []
    with _StandInProcess(folder) as standin:
        env = dict(os.environ)
        for name, conversations, turns in shapes:
            port = _free_port()
            gateway = _relay_gateway(folder / f"home-{name}", standin.base_url, port, env)
            relayed_url = f"http://127.0.0.1:{port}/v1"
            try:
                for url in (standin.base_url, relayed_url):
                    _conversations(url, 1, warm_up, label=f"warm-{name}")
                direct = _conversations(standin.base_url, conversations, turns, label=name)
                assert gateway.process is not None
                cpu_before = _cpu_seconds(gateway.process.pid)
                relayed = _conversations(relayed_url, conversations, turns, label=name)
                cpu = _cpu_seconds(gateway.process.pid) - cpu_before
            finally:
                gateway.stop()
            found.append(
                RelayFigures(
                    name,
                    conversations * turns,
                    direct[0],
                    relayed[0],
                    direct[1],
                    relayed[1],
                    failures=direct[2] + relayed[2],
                    gateway_cpu_ms_per_turn=cpu * 1000 / (conversations * turns),
                )
            )
    return found


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
