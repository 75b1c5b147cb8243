"""The hook implementations of ``hermes-export-jsonl`` (the entry-point module).

The exporter and importer classes live in submodules, imported when registered.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import Exporter, Importer, hookimpl


@hookimpl
def hermes_register_exporters(register: Callable[[Exporter], None]) -> None:
    """Register the ``jsonl`` exporter."""
    from .exporter import JsonlExporter

    register(JsonlExporter())


@hookimpl
def hermes_register_importers(register: Callable[[Importer], None]) -> None:
    """Register the ``jsonl`` importer, which restores jsonl backups."""
    from .importer import JsonlBackupImporter

    register(JsonlBackupImporter())
