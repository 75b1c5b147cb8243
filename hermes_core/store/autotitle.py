"""Automatic titles (SPEC S5): generated once, after the first exchange, off the caller's thread
(one title thread per process, titles one at a time, after a busy gateway's turns).

The worker reads and writes through a store of its own (the backend opens it on its own
connection), asks the title hook (first answer wins), and stores the answer only if nobody
has set a title in the meantime. It never raises: a failing generator leaves the session
untitled and is logged.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_hookspecs import StoreEvents

    from .facade import StoreFacade

log = logging.getLogger(__name__)

MESSAGES_SHOWN = 6
"""How many of the first messages the generator sees."""

WorkerStore = Callable[[], AbstractContextManager["StoreFacade"]]
"""Opens the store the worker uses (its own connection; no events of its own)."""


def _generate(open_store: WorkerStore, session_id: str, events: StoreEvents) -> None:
    from .errors import StoreError

    try:
        with open_store() as store:
            session = store.get_session(session_id)
            if session.title is not None:
                return
            messages = []
            for message in store.iter_messages(session_id, batch=MESSAGES_SHOWN):
                messages.append(message)
                if len(messages) >= MESSAGES_SHOWN:
                    break
            proposal = events.generate_title(session, messages)
            if proposal:
                store.apply_automatic_title(session_id, proposal)
    except StoreError as error:  # the disk, the file or the server: one line
        log.warning("automatic title for %s not stored: %s", session_id, error)
    except Exception:  # a title is a nicety; never let it break anything
        log.warning("automatic title for %s failed", session_id, exc_info=True)


class TitleJob:
    """One queued automatic title; ``join``/``is_alive`` as a thread's."""

    def __init__(self, open_store: WorkerStore, session_id: str, events: StoreEvents) -> None:
        self.open_store, self.session_id, self.events = open_store, session_id, events
        self._done = threading.Event()

    def is_alive(self) -> bool:
        return not self._done.is_set()

    def join(self, timeout: float | None = None) -> None:
        self._done.wait(timeout)

    def run(self) -> None:
        try:
            _generate(self.open_store, self.session_id, self.events)
        finally:
            self._done.set()


DEFER_AT_MOST_SECONDS = 10.0
"""How long one title waits for a busy process to pause (see :func:`defer_titles_while`)."""
_jobs: queue.Queue[TitleJob] = queue.Queue()
_worker: threading.Thread | None = None
_worker_lock = threading.Lock()
_busy: Callable[[], bool] | None = None


def defer_titles_while(busy: Callable[[], bool] | None) -> None:
    """Make automatic titles wait while ``busy()`` says so (the gateway: turns in flight), at
    most :data:`DEFER_AT_MOST_SECONDS` each, so they do not take the model, the store and the
    interpreter from turns; None: no more waiting (a stopping gateway)."""
    global _busy
    _busy = busy


def _serve() -> None:
    while True:
        job = _jobs.get()
        deadline = time.monotonic() + DEFER_AT_MOST_SECONDS
        while (busy := _busy) is not None and busy() and time.monotonic() < deadline:
            time.sleep(0.05)
        job.run()


def generate_title_in_background(
    open_store: WorkerStore, session_id: str, events: StoreEvents
) -> TitleJob:
    """Queue the title of ``session_id``. Titles are made one at a time by one background
    thread of the process (however many sessions start at once), each after the turns in
    flight, when :func:`defer_titles_while` was told of them."""
    global _worker
    job = TitleJob(open_store, session_id, events)
    with _worker_lock:
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_serve, name="hermes-titles", daemon=True)
            _worker.start()
    _jobs.put(job)
    return job
