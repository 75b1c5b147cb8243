"""Every foreign log the installed importers find in their default places, newest first.

Shared by the bare ``hermes sessions import`` picker and, later, ``hermes --resume @claude``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from hermes_hookspecs import ImportCandidate, Importer

from hermes_core.store.connection import held_store_files, is_held_file


@dataclass(frozen=True, slots=True)
class FoundLog:
    """A candidate with the importer that found it."""

    candidate: ImportCandidate
    importer: Importer

    @property
    def newest_time(self) -> float:
        """When it was last active, for sorting (0 when unknown)."""
        return self.candidate.ended_at or self.candidate.started_at or 0.0

    @property
    def shown_time(self) -> float:
        """The date the import picker shows and sorts by: when the conversation started,
        else when it was last active (0 when unknown)."""
        return self.candidate.started_at or self.candidate.ended_at or 0.0


def gather_candidates(
    importers: Mapping[str, Importer],
    env: Mapping[str, str],
    *,
    only: str | None = None,
    on_error: Callable[[str, Exception], None] | None = None,
    keep_held: bool = False,
) -> list[FoundLog]:
    """What ``discover(env)`` of every importer (or only the importer named ``only``) finds,
    newest first. An importer whose discovery fails is reported through ``on_error`` and
    skipped. A file of a store this process holds open (Hermes Agent's default home is this
    tool's too) is left out, so nothing opens it by path afterwards (DESIGN §9), unless
    ``keep_held``: the caller then hands each to ``ImportRun.import_file``, which refuses it
    in one line without opening it."""
    found: list[FoundLog] = []
    held = held_store_files()
    for name in sorted(importers):
        if only is not None and name != only:
            continue
        importer = importers[name]
        try:
            found.extend(
                FoundLog(candidate, importer)
                for candidate in importer.discover(env)
                if keep_held or not is_held_file(candidate.path, held)
            )
        except Exception as error:
            if on_error is not None:
                on_error(name, error)
    found.sort(key=lambda log: (log.newest_time, str(log.candidate.path)), reverse=True)
    return found


def described(log: FoundLog) -> FoundLog:
    """``log`` with the details the picker shows. ``discover`` may leave them out to stay
    cheap (``--all`` needs only paths) and offer an optional ``describe(candidate)`` method
    that fills them in; an importer without one, or whose ``describe`` fails, is shown as
    discovered."""
    describe = getattr(log.importer, "describe", None)
    if describe is None:
        return log
    try:
        richer = describe(log.candidate)
    except Exception:
        return log
    return FoundLog(richer, log.importer) if isinstance(richer, ImportCandidate) else log
