"""Which importer reads a given path."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hermes_hookspecs import Importer

from hermes_core.store.connection import held_store_file


def importer_for_path(path: Path, importers: Mapping[str, Importer]) -> Importer | None:
    """The first importer (by name) whose ``sniff`` recognises ``path``; None when none does.
    An importer whose ``sniff`` raises is taken as not recognising the file. A file of a store
    this process holds open is never handed to one: its ``sniff`` would open it by path, and
    closing that descriptor drops the process's locks on the store (DESIGN §9)."""
    if held_store_file(path):
        return None
    for name in sorted(importers):
        importer = importers[name]
        try:
            if importer.sniff(path):
                return importer
        except Exception:
            continue
    return None
