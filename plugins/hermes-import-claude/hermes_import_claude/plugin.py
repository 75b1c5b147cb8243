"""Entry point of ``hermes-import-claude``: registers the ``claude`` importer and the
``claude-code`` session source. Light on purpose: the reader loads when an import runs."""

from __future__ import annotations

from collections.abc import Callable

from hermes_hookspecs import Importer, SessionSource, SourceInfo, hookimpl


@hookimpl
def hermes_register_importers(register: Callable[[Importer], None]) -> None:
    """Register the ``claude`` importer (Claude Code transcripts)."""
    from .importer import ClaudeCodeImporter

    register(ClaudeCodeImporter())


@hookimpl
def hermes_register_sources(register: Callable[[SessionSource], None]) -> None:
    """Register the ``claude-code`` origin of imported sessions."""
    register(SourceInfo(name="claude-code", label="Claude Code", short_label="claude"))
