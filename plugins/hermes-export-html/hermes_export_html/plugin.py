"""Hook implementations of the ``hermes-export-html`` plugin."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import Exporter, hookimpl

from .exporter import HtmlExporter


@hookimpl
def hermes_register_exporters(register: Callable[[Exporter], None]) -> None:
    """Register the ``html`` exporter."""
    register(HtmlExporter())
