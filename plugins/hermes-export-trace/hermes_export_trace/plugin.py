"""Hook implementations of the ``hermes-export-trace`` plugin."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import Exporter, hookimpl

from .exporter import TraceExporter


@hookimpl
def hermes_register_exporters(register: Callable[[Exporter], None]) -> None:
    """Register the ``trace`` exporter."""
    register(TraceExporter())
