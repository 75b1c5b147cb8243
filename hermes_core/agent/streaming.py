"""One model call, consumed with the turn's listener and cancel event.

The provider's blocking stream runs in a worker thread that hands events over a queue, so a
cancel (or Ctrl-C on the turn's own thread) takes effect at once, even while the endpoint is
silent; the worker closes the stream at its next event and is left to finish on its own.
Worker threads are kept for the next call once their stream is over (:class:`_Pumps`): a
gateway makes a call per turn, and starting a thread for each was a measurable part of a
turn's CPU time.
"""

from __future__ import annotations

import contextlib
import functools
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from hermes_hookspecs import (
    ModelError,
    ModelEvent,
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ReasoningDelta,
    TextDelta,
    TokenUsage,
    ToolCall,
)

from .listener import TurnListener

POLL_SECONDS = 0.05
"""How often the waiting turn looks at its cancel event."""


@dataclass(slots=True)
class CallOutcome:
    """What one model call produced, complete or not."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: TokenUsage | None = None
    error: str | None = None
    interrupted: bool = False

    @property
    def answer(self) -> str:
        """The text streamed so far."""
        return "".join(self.text)


class _End:
    """Queued by the worker once the stream is over."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


def _pump(
    events: Iterator[ModelEvent], handoff: queue.Queue[ModelEvent | _End], stop: threading.Event
) -> None:
    try:
        for event in events:
            if stop.is_set():
                break
            handoff.put(event)
    except BaseException as error:  # handed to the turn's thread, which reports it
        handoff.put(_End(error))
        return
    finally:
        close = getattr(events, "close", None)
        if callable(close):
            # Closing an abandoned stream must not mask what happened.
            with contextlib.suppress(Exception):
                close()
    handoff.put(_End())


PUMP_IDLE_SECONDS = 60.0
"""How long a stream's worker thread waits for the next call before it ends."""


class _Pumps:
    """Daemon threads that run streams (:func:`_pump`), each kept idle for
    :data:`PUMP_IDLE_SECONDS` after its stream is over: a thread still busy with an abandoned
    stream is never waited for, a new one starts instead."""

    def __init__(self) -> None:
        self._idle: list[queue.SimpleQueue[Callable[[], None]]] = []
        self._lock = threading.Lock()

    def run(self, job: Callable[[], None]) -> None:
        """Run ``job`` on an idle thread, or on a new one."""
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            thread = threading.Thread(
                target=self._serve, args=(inbox,), name="hermes-model-stream", daemon=True
            )
            inbox.put(job)
            thread.start()
            return
        inbox.put(job)

    def _serve(self, inbox: queue.SimpleQueue[Callable[[], None]]) -> None:
        while True:
            try:
                job = inbox.get(timeout=PUMP_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:
                        self._idle.remove(inbox)
                        return
                continue  # taken meanwhile: its job is on the way
            job()
            del job  # the finished stream is not kept alive while the thread waits
            with self._lock:
                self._idle.append(inbox)


_PUMPS = _Pumps()


def call_model(
    provider: ModelProvider,
    request: ModelRequest,
    settings: ModelSettings,
    listener: TurnListener,
    cancel: threading.Event | None,
) -> CallOutcome:
    """Run one call to completion, failure or cancellation; never raises for the model's
    failures (a ``ModelError`` or a provider bug becomes ``outcome.error``)."""
    outcome = CallOutcome()
    handoff: queue.Queue[ModelEvent | _End] = queue.Queue()
    stop = threading.Event()
    try:
        events = iter(provider.stream(request, settings))
    except ModelError as error:
        outcome.error = str(error)
        return outcome
    except Exception as error:
        outcome.error = _provider_bug(provider, error)
        return outcome
    _PUMPS.run(functools.partial(_pump, events, handoff, stop))
    try:
        while True:
            if cancel is not None and cancel.is_set():
                outcome.interrupted = True
                break
            try:
                item = handoff.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if isinstance(item, _End):
                if isinstance(item.error, ModelError):
                    outcome.error = str(item.error)
                elif item.error is not None:
                    outcome.error = _provider_bug(provider, item.error)
                break
            _deliver(item, outcome, listener)
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        stop.set()
    return outcome


def _deliver(event: ModelEvent, outcome: CallOutcome, listener: TurnListener) -> None:
    if isinstance(event, TextDelta):
        if event.text:
            outcome.text.append(event.text)
            listener.on_text(event.text)
    elif isinstance(event, ReasoningDelta):
        if event.text:
            outcome.reasoning.append(event.text)
            listener.on_reasoning(event.text)
    elif isinstance(event, ToolCall):
        outcome.tool_calls.append(event)
    elif isinstance(event, TokenUsage):
        previous = outcome.usage
        outcome.usage = (
            event
            if previous is None
            else TokenUsage(
                previous.input_tokens + event.input_tokens,
                previous.output_tokens + event.output_tokens,
            )
        )


def _provider_bug(provider: ModelProvider, error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return f"the model provider '{provider.name}' failed: {type(error).__name__}: {text}"
