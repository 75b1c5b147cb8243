"""The hook implementations of ``hermes-export-markdown`` (the entry-point module)."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import Exporter, hookimpl


@hookimpl
def hermes_register_exporters(register: Callable[[Exporter], None]) -> None:
    """Register the ``md`` and ``qmd`` exporters."""
    from .exporter import MarkdownExporter

    register(MarkdownExporter("md"))
    register(MarkdownExporter("qmd"))
