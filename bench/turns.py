"""Figure (t): the store's overhead per turn, from the last streamed token to the turn engine
returning (the assistant message and the usage stored, the prompt ready again).

A fresh session on the store built for (b) runs turns through the real ``TurnEngine`` and the
real ``openai`` provider against the stand-in endpoint (``tests/standins/openai_server.py`` in
its own process on 127.0.0.1, as a real endpoint would be, so its threads do not compete for
this process's interpreter lock). Each answer streams a few hundred characters of text. Two
times per turn:

- ``last token → returned``: from the listener's last ``on_text`` to ``run_turn`` returning
  (it includes the end of the stream — the finish and usage chunks over local HTTP);
- ``stream end → returned``: from the provider's stream being exhausted to ``run_turn``
  returning — only the engine's bookkeeping and the store writes.

The session is deleted afterwards, so the store's contents stay as they were.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hermes_hookspecs import ModelEvent, ModelProvider, ModelRequest, ModelSettings

from hermes_core.agent import Toolbox, TurnEngine, TurnListener
from hermes_core.store.store import SessionStore

_TESTS = str(Path(__file__).resolve().parent.parent / "tests")
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

ANSWER = (
    "Here is what I found: the deployment uses docker compose with two services, and the "
    "payments worker reads its settings from the environment. Restart it after changing them. "
) * 2


@dataclass
class TurnTimes:
    after_last_token_ms: list[float] = field(default_factory=list)
    after_stream_end_ms: list[float] = field(default_factory=list)

    @staticmethod
    def percentile(samples: list[float], fraction: float) -> float:
        ordered = sorted(samples)
        return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


class _LastToken(TurnListener):
    def __init__(self) -> None:
        self.at = 0.0

    def on_text(self, delta: str) -> None:
        self.at = time.perf_counter()


class _TimedProvider:
    """Passes the real provider's events through and notes when its stream ended."""

    def __init__(self, inner: ModelProvider) -> None:
        self.inner = inner
        self.name = inner.name
        self.description = inner.description
        self.ended_at = 0.0

    def stream(self, request: ModelRequest, settings: ModelSettings) -> Iterator[ModelEvent]:
        yield from self.inner.stream(request, settings)
        self.ended_at = time.perf_counter()


@contextlib.contextmanager
def standin_process(workdir: Path) -> Iterator[str]:
    """The stand-in endpoint in a subprocess answering every request with :data:`ANSWER`;
    yields its base URL and stops it afterwards."""
    script = workdir / "turns-replies.json"
    reply = {"text": ANSWER, "chunk_chars": 24, "usage": [900, 80], "times": None}
    script.write_text(json.dumps([reply]), encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, "-m", "standins.openai_server", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": _TESTS},
    )  # fmt: skip
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if ": " not in line:
            raise RuntimeError(f"the stand-in did not start: {line!r}")
        yield line.split(": ", 1)[1].strip()
    finally:
        server.terminate()
        server.wait(10)
        script.unlink(missing_ok=True)


def run_turns(home: Path, turns: int) -> TurnTimes:
    """Run ``turns`` turns on a fresh session of the store in ``home``; returns the timings."""
    from hermes_model_openai.provider import OpenAIProvider

    times = TurnTimes()
    with standin_process(home.parent) as base_url, SessionStore.open(home) as store:
        settings = ModelSettings(provider="openai", model="bench", base_url=base_url,
                                 max_retries=0, timeout_seconds=30.0)  # fmt: skip
        provider = _TimedProvider(OpenAIProvider())
        engine = TurnEngine(store, provider, settings, tools=Toolbox.default(store))
        session = store.create_session("cli", cwd="/home/dev/projects/bench", model="bench")
        listener = _LastToken()
        for number in range(turns + 5):
            result = engine.run_turn(session.id, f"question {number}: how is it deployed?",
                                     listener=listener)  # fmt: skip
            returned = time.perf_counter()
            if result.error is not None:
                raise RuntimeError(result.error)
            if number >= 5:  # the first turns warm the SDK and the connection up
                times.after_last_token_ms.append((returned - listener.at) * 1000.0)
                times.after_stream_end_ms.append((returned - provider.ended_at) * 1000.0)
        store.delete_session(session.id)
    return times
