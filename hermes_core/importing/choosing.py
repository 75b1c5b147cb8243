"""Which importer reads a given path."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hermes_hookspecs import Importer


def importer_for_path(path: Path, importers: Mapping[str, Importer]) -> Importer | None:
    """The first importer (by name) whose ``sniff`` recognises ``path``; None when none does.
    An importer whose ``sniff`` raises is taken as not recognising the file."""
    for name in sorted(importers):
        importer = importers[name]
        try:
            if importer.sniff(path):
                return importer
        except Exception:
            continue
    return None
