"""The chat's model provider, opened at the first model call instead of at start-up.

Finding a provider means loading every installed plugin (entry points), the largest part of
``hermes -c``'s start-up; the prompt does not need it. :class:`DeferredProvider` stands for
the configured provider and opens it the first time the engine streams from it — a missing
provider plugin is then that turn's one-line error, and the chat goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from hermes_hookspecs import ModelEvent, ModelProvider, ModelRequest, ModelSettings


class DeferredProvider:
    """A :class:`ModelProvider` that calls ``open_provider`` on first use (thread-safe)."""

    def __init__(self, name: str, open_provider: Callable[[], ModelProvider]) -> None:
        self.name = name
        self.description = f"the '{name}' model provider (opened at the first message)"
        self._open = open_provider
        self._provider: ModelProvider | None = None
        self._lock = threading.Lock()

    def provider(self) -> ModelProvider:
        """The real provider, opened now if it was not yet."""
        with self._lock:
            if self._provider is None:
                self._provider = self._open()
                self.description = self._provider.description
            return self._provider

    def stream(self, request: ModelRequest, settings: ModelSettings) -> Iterator[ModelEvent]:
        """The real provider's stream."""
        return self.provider().stream(request, settings)
