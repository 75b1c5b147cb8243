"""Importing other tools' session logs (SPEC I1–I3, D).

Importers are plugins (the ``Importer`` protocol): pure readers that yield
``ImportedSession`` values. This package stores what they yield and keeps the bookkeeping that
makes re-imports idempotent:

* :mod:`.files` — stat stamps, how a file changed since its import, walking a directory.
* :mod:`.batches` — cutting a message stream into bounded batches.
* :mod:`.conversations` — storing a foreign conversation (new, or appended to its session).
* :mod:`.snapshots` — restoring sessions exactly as a backup holds them.
* :mod:`.databases` — importing another tool's whole database (a Hermes Agent ``state.db``).
* :mod:`.runner` — importing one file end to end, reporting a :class:`FileOutcome`.
* :mod:`.outcomes` — per-file outcomes and the run's summary.
* :mod:`.choosing` — which importer reads a path.
* :mod:`.candidates` — every log the installed importers can find, newest first (the picker).
"""

from __future__ import annotations

from .candidates import FoundLog, described, gather_candidates
from .choosing import importer_for_path
from .databases import is_database_importer
from .outcomes import FileOutcome, FileStatus, ImportSummary, StoredSession
from .runner import ImportRun

__all__ = [
    "FileOutcome",
    "FileStatus",
    "FoundLog",
    "ImportRun",
    "ImportSummary",
    "StoredSession",
    "described",
    "gather_candidates",
    "importer_for_path",
    "is_database_importer",
]
