"""``--import claude,codex``: new Claude Code / Codex log lines, brought in before an answer.

No daemon: before a tool call or a resource read, at most once per ``import_every`` seconds,
the server does what ``hermes sessions import --all --from NAME`` does — it lists each
importer's logs (a directory listing and one ``stat`` each), compares them with the import
bookkeeping, and reads only the files that grew, from where the last import stopped. When
nothing changed, nothing is opened (bench figure (m) measures that cost).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence

from hermes_hookspecs import Importer

from hermes_core.importing import FileStatus, ImportRun, gather_candidates
from hermes_core.store.errors import StoreError
from hermes_core.store.protocol import Store


class Freshness:
    """Throttled incremental import of the named importers' logs into ``store``."""

    def __init__(
        self,
        store: Store,
        importers: Mapping[str, Importer],
        *,
        every: float,
        clock: Callable[[], float] = time.monotonic,
        on_problem: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        self._importers = dict(importers)
        self._every = every
        self._clock = clock
        self._last: float | None = None
        self._on_problem = on_problem or _to_stderr

    @property
    def importer_names(self) -> Sequence[str]:
        return sorted(self._importers)

    def refresh(self) -> int:
        """Import what is new, unless the last look was less than ``every`` seconds ago;
        returns how many files were read. Never raises: a problem is reported and the
        answer goes on from what the store holds."""
        now = self._clock()
        if self._last is not None and now - self._last < self._every:
            return 0
        self._last = now
        try:
            return self.import_new()
        except (StoreError, OSError) as error:
            self._on_problem(f"import before answering failed: {error}")
            return 0

    def import_new(self) -> int:
        """One look over every log of the importers (see the module docstring)."""
        run = ImportRun(self._store)
        read = 0
        for log in gather_candidates(self._importers, os.environ, on_error=self._discovery_failed):
            path = log.candidate.path  # never this store's own files: gather leaves them out
            try:
                if run.quick_check(path, log.importer) is not None:
                    continue
            except OSError:
                continue  # gone since the listing
            outcome = run.import_file(path, log.importer)
            read += 1
            if outcome.status is FileStatus.UNREADABLE:
                self._on_problem(f"{path}: {outcome.detail}")
        return read

    def _discovery_failed(self, name: str, error: Exception) -> None:
        self._on_problem(f"importer {name} could not list its logs: {error}")


def _to_stderr(message: str) -> None:
    print(f"hermes mcp: {message}", file=sys.stderr, flush=True)
