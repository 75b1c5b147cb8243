"""Figure (b): single-message append latency on a large store, as a live agent writes.

A fresh session is created on the store built by (a) and messages are appended one by one,
each ``append_message`` its own transaction. The messages come from corpus sessions beyond the
loaded ones (realistic roles and lengths, new text). Afterwards the session is deleted again,
so the store's contents (and figure (d)) are unchanged apart from index tombstones; the delete
time is reported for context.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from hermes_hookspecs import Message

from bench.corpus import CorpusGenerator
from bench.ingest import corpus_messages
from hermes_core.store.store import SessionStore


@dataclass(frozen=True, slots=True)
class LatencyResult:
    samples_ms: list[float]
    delete_ms: float
    cpu_ms: list[float]
    """The appending thread's CPU time per append: what a quiet machine's wall time would be,
    short of I/O waits (on a loaded one, wall time is mostly waiting for a core)."""

    def percentile(self, fraction: float, *, cpu: bool = False) -> float:
        ordered = sorted(self.cpu_ms if cpu else self.samples_ms)
        index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
        return ordered[index]

    @property
    def max_ms(self) -> float:
        return max(self.samples_ms)

    def over(self, threshold_ms: float) -> int:
        return sum(1 for sample in self.samples_ms if sample > threshold_ms)


def live_messages(seed: int, first_session: int, count: int) -> list[Message]:
    """``count`` messages from corpus sessions ``first_session`` onwards."""
    generator = CorpusGenerator(seed)
    messages: list[Message] = []
    index = first_session
    while len(messages) < count:
        session = generator.session(index)
        index += 1
        messages.extend(corpus_messages(session))
    return messages[:count]


def run_latency(home: Path, messages: list[Message]) -> LatencyResult:
    samples: list[float] = []
    cpu: list[float] = []
    with SessionStore.open(home) as store:
        session = store.create_session(
            "cli", started_at=messages[0].timestamp, cwd="/home/dev/projects/bench", model="bench"
        )
        for message in messages:
            started, started_cpu = time.perf_counter(), time.thread_time()
            store.append_message(session.id, message)
            samples.append((time.perf_counter() - started) * 1000.0)
            cpu.append((time.thread_time() - started_cpu) * 1000.0)
        store.end_session(session.id, "user_exit")
        started = time.perf_counter()
        store.delete_session(session.id)
        delete_ms = (time.perf_counter() - started) * 1000.0
    return LatencyResult(samples, delete_ms, cpu)
