"""What the ACP methods run on: worker threads, one store per thread, the configured model.

A store is meant for one thread, and a turn holds its thread for as long as the model talks,
so every store call runs on a small pool of worker threads, each with its own store opened on
first use (as the gateway's workers do); SQLite stores of the process share one write lock.
The model is looked up at the first method that needs it: a missing configuration is that
method's one-line error, and listing or loading sessions works without one.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from hermes_core.agent import TurnEngine, load_model_settings, open_provider

if TYPE_CHECKING:
    from hermes_hookspecs import ModelProvider, ModelSettings

    from hermes_core.config import Config
    from hermes_core.plugins import PluginHost
    from hermes_core.store.protocol import Store

T = TypeVar("T")

WORKER_THREADS = 4
"""Threads for store calls and turns: a few turns of different sessions may run at once."""


@dataclass(frozen=True, slots=True)
class Model:
    """The configured model: its settings and the provider plugin that reaches it."""

    settings: ModelSettings
    provider: ModelProvider


class Runtime:
    """The worker threads, their stores and the model of one ``hermes acp`` process."""

    def __init__(self, home: Path, store_url: str, host: PluginHost, config: Config) -> None:
        self.home = home
        self.store_url = store_url
        self.host = host
        self.config = config
        self._pool = ThreadPoolExecutor(WORKER_THREADS, thread_name_prefix="hermes-acp")
        self._local = threading.local()
        self._opened: list[Store] = []
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._model: Model | None = None

    # -- the model ----------------------------------------------------------------------

    def model(self) -> Model:
        """The configured model (looked up once); ``NoModelConfigured`` or
        ``ModelProviderUnavailable`` — one line each — when there is none."""
        with self._lock:
            if self._model is None:
                settings = load_model_settings(self.config, os.environ)
                self._model = Model(settings, open_provider(self.host, settings))
            return self._model

    def engine(self, store: Store) -> TurnEngine:
        """The turn engine (the one the chat and the gateway use) over ``store``."""
        model = self.model()
        return TurnEngine(store, model.provider, model.settings)

    # -- stores -------------------------------------------------------------------------

    def store(self) -> Store:
        """The calling worker thread's store, opened on first use."""
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            store = self._open_store()
            with self._lock:
                self._opened.append(store)
            self._local.store = store
        return store

    def _open_store(self) -> Store:
        from hermes_core.store import SessionStore
        from hermes_core.store.backends import SQLITE_SCHEME, open_url, sqlite_path, url_scheme

        if url_scheme(self.store_url) == SQLITE_SCHEME:
            path = sqlite_path(self.store_url)
            path.parent.mkdir(parents=True, exist_ok=True)
            return SessionStore(path, events=self.host, write_lock=self._write_lock)
        return open_url(self.store_url, events=self.host, host=self.host)

    async def call(self, work: Callable[[Store], T]) -> T:
        """Run ``work`` with a worker thread's store, off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: work(self.store()))

    def wait_idle(self) -> None:
        """Wait for the worker threads to finish what they run; no more work is taken."""
        self._pool.shutdown(wait=True)

    def close(self) -> None:
        """Close every thread's store (after :meth:`wait_idle`)."""
        with self._lock:
            opened, self._opened = self._opened, []
        for store in opened:
            store.close()
