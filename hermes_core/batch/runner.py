"""Running a batch: each prompt one turn of the core's :class:`~hermes_core.agent.TurnEngine`
in a new session of source ``batch``, on at most ``concurrency`` worker threads.

Each worker opens a store of its own (as the gateway's workers do) and takes the next prompt
until none is left or :meth:`BatchRunner.stop` was called: a stop lets the turns in flight
finish (and be stored), :meth:`BatchRunner.cancel` interrupts them too (the engine stores what
arrived, marked interrupted). Nothing here prints; ``on_start`` / ``on_finish`` report.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from hermes_hookspecs import ModelProvider, ModelSettings, TokenUsage

from .ledger import BATCH_SOURCE, DONE_REASON, FAILED_REASON, batch_metadata
from .prompts import BatchPrompt

if TYPE_CHECKING:
    from hermes_core.agent import TurnEngine
    from hermes_core.store.protocol import Store

MAX_CONCURRENCY = 16
"""``--concurrency`` at most: every worker holds a store connection and a model request."""
_POLL_SECONDS = 0.2


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one prompt went."""

    prompt: BatchPrompt
    status: Literal["done", "failed"]
    session_id: str | None
    usage: TokenUsage
    error: str | None = None
    note: str | None = None
    """Something worth telling that did not fail the prompt (its title was in use)."""


class BatchRunner:
    """Runs prompts of one batch file; blocks in :meth:`run` until they are done or stopped."""

    def __init__(
        self,
        open_store: Callable[[], Store],
        provider: ModelProvider,
        settings: ModelSettings,
        *,
        path: Path,
        concurrency: int = 1,
        stop_on_error: bool = False,
        on_start: Callable[[BatchPrompt], None] = lambda prompt: None,
        on_finish: Callable[[Outcome], None] = lambda outcome: None,
    ) -> None:
        self._open_store = open_store
        self._provider = provider
        self._settings = settings
        self._path = path
        self._concurrency = max(1, min(concurrency, MAX_CONCURRENCY))
        self._stop_on_error = stop_on_error
        self._on_start = on_start
        self._on_finish = on_finish
        self._stopping = threading.Event()
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._outcomes: list[Outcome] = []

    @property
    def stopping(self) -> bool:
        """True once :meth:`stop` was called (or a failure stopped a ``--stop-on-error`` run)."""
        return self._stopping.is_set()

    def stop(self) -> None:
        """Take no further prompt; the turns in flight finish."""
        self._stopping.set()

    def cancel(self) -> None:
        """Take no further prompt and interrupt the turns in flight."""
        self._stopping.set()
        self._cancel.set()

    def run(self, prompts: Sequence[BatchPrompt]) -> list[Outcome]:
        """Run ``prompts``; the outcomes of those that ran, in the file's order."""
        queue = iter(prompts)
        workers = [
            threading.Thread(target=self._work, args=(queue,), name=f"batch-{n}", daemon=True)
            for n in range(min(self._concurrency, len(prompts)))
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            while worker.is_alive():  # a timed join lets the main thread take its signals
                worker.join(_POLL_SECONDS)
        return sorted(self._outcomes, key=lambda outcome: outcome.prompt.line)

    def _next(self, queue: Iterator[BatchPrompt]) -> BatchPrompt | None:
        with self._lock:
            if self._stopping.is_set():
                return None
            return next(queue, None)

    def _work(self, queue: Iterator[BatchPrompt]) -> None:
        store: Store | None = None
        engines: dict[str | None, TurnEngine] = {}
        try:
            while (prompt := self._next(queue)) is not None:
                self._on_start(prompt)
                try:
                    if store is None:
                        store = self._open_store()
                    outcome = self._one(store, engines, prompt)
                except Exception as error:  # one prompt's failure is its line, not the batch's
                    said = " ".join(str(error).split()) or type(error).__name__
                    outcome = Outcome(prompt, "failed", None, TokenUsage(0, 0), error=said)
                with self._lock:
                    self._outcomes.append(outcome)
                if outcome.status == "failed" and self._stop_on_error:
                    self.stop()
                self._on_finish(outcome)
        finally:
            if store is not None:
                store.close()

    def _one(
        self, store: Store, engines: dict[str | None, TurnEngine], prompt: BatchPrompt
    ) -> Outcome:
        from hermes_core.agent import TurnEngine

        settings = (
            self._settings if prompt.model is None else replace(self._settings, model=prompt.model)
        )
        engine = engines.get(prompt.model)
        if engine is None:
            engine = engines[prompt.model] = TurnEngine(store, self._provider, settings)
        session = store.create_session(
            BATCH_SOURCE, model=settings.model, metadata=batch_metadata(self._path, prompt)
        )
        note = _set_title(store, session.id, prompt.title) if prompt.title else None
        try:
            result = engine.run_turn(session.id, prompt.text, cancel=self._cancel)
        except Exception:
            _end_quietly(store, session.id)  # a store that failed mid-turn: not left open
            raise
        error = result.error or ("interrupted" if result.interrupted else None)
        store.end_session(result.session_id, FAILED_REASON if error else DONE_REASON)
        status: Literal["done", "failed"] = "failed" if error else "done"
        return Outcome(prompt, status, result.session_id, result.usage, error=error, note=note)


def _end_quietly(store: Store, session_id: str) -> None:
    """End a session whose turn broke off, if the store still lets us."""
    try:
        store.end_session(session_id, FAILED_REASON)
    except Exception:
        return


def _set_title(store: Store, session_id: str, title: str) -> str | None:
    """Title the session; a title that cannot be used is a note, not a failure."""
    from hermes_core.store.errors import StoreError

    try:
        store.set_title(session_id, title)
    except (StoreError, ValueError) as error:
        return f"title not set: {error}"
    return None
